"""Matched probes: ``MPI.Message`` from ``Mprobe``/``Improbe`` (MPI 3.1, Sec. 3.8.2).

A matched probe takes the message out of the matching queues, so only the
receive made through the returned handle can take it.  The receive is timed
as an ordinary receive posted at the time of ``recv``/``Recv``/``irecv``/``Irecv``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...constants import ANY_SOURCE, ANY_TAG, PROC_NULL
from ...engine.rank import VirtualRank, current
from ...errors import MPIUsageError
from ..common.handles import HandleValues
from ..data.buffers import parse_buffer
from ..requests.request import RECV, Request, Status

if TYPE_CHECKING:
    from ...engine.matching import Message

__all__ = ["MatchedMessage", "MESSAGE_NO_PROC", "MESSAGE_NULL"]


class MatchedMessage(HandleValues):
    """A message set aside by a matched probe (mpi4py's ``MPI.Message``).

    Three states, as mpi4py's handles: a matched message (truthy until received),
    ``MESSAGE_NO_PROC`` (from a probe of ``PROC_NULL``: truthy, receives nothing) and
    ``MESSAGE_NULL`` (falsy; what a message becomes once received).
    ``Message()`` is a null message, ``Message(msg)`` another object for *msg*'s handle.
    """

    __slots__ = ("_vr", "_msg", "_used", "_noproc", "__weakref__")
    _handle_kind = "Message"
    _vr: VirtualRank | None
    _msg: Message | None
    _used: bool
    _noproc: bool

    def __init__(self, vr: VirtualRank | MatchedMessage | None = None,
                 msg: Message | None = None, noproc: bool = False) -> None:
        if isinstance(vr, MatchedMessage):   # mpi4py's Message(message)
            self._vr, self._msg, self._used, self._noproc = (
                vr._vr, vr._msg, vr._used, vr._noproc)
            return
        if vr is not None and not isinstance(vr, VirtualRank):
            raise TypeError(f"Message(): expected a Message, got {type(vr).__name__}")
        self._vr = vr
        self._msg = msg
        self._used = False
        self._noproc = noproc

    def __bool__(self) -> bool:
        return not self._used and (self._msg is not None or self._noproc)

    def _handle_identity(self) -> object | None:
        """The matched message (``MESSAGE_NO_PROC``'s own handle; None once received)."""
        if not self:
            return None
        return self._msg if self._msg is not None else MESSAGE_NO_PROC

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MatchedMessage):
            return NotImplemented
        if not self and not other:
            return True
        return self._msg is other._msg and bool(self) == bool(other)

    def __hash__(self) -> int:
        """mpi4py's handles are unhashable."""
        raise TypeError(f"unhashable type: '{type(self).__name__}'")

    def Free(self) -> None:
        """Free the handle (only ``MESSAGE_NULL`` and ``MESSAGE_NO_PROC`` may be freed)."""
        if self._msg is not None and not self._used:
            raise MPIUsageError(f"rank {current().rank}: Message.Free: a matched message "
                                f"must be received, not freed")
        self._used = True

    def free(self) -> None:
        """mpi4py's ``free``: nothing for the constants; a copy of one becomes null."""
        if self is not MESSAGE_NULL and self is not MESSAGE_NO_PROC:
            self.Free()

    @classmethod
    def probe(cls, comm: Any, source: int = ANY_SOURCE, tag: int = ANY_TAG,
              status: Status | None = None) -> MatchedMessage:
        """Blocking matched probe (``comm.Mprobe``)."""
        return comm.Mprobe(source, tag, status)

    @classmethod
    def iprobe(cls, comm: Any, source: int = ANY_SOURCE, tag: int = ANY_TAG,
               status: Status | None = None) -> MatchedMessage | None:
        """Nonblocking matched probe (``comm.Improbe``): None when nothing matches."""
        return comm.Improbe(source, tag, status)

    Probe = probe
    Iprobe = iprobe

    def __reduce__(self) -> str | tuple[Any, ...]:
        """The constants pickle as themselves, a copy of one as a copy; a matched
        message cannot leave its rank (``ValueError``, as mpi4py)."""
        if self is MESSAGE_NULL:
            return "MESSAGE_NULL"
        if self is MESSAGE_NO_PROC:
            return "MESSAGE_NO_PROC"
        if self._msg is not None and not self._used:
            raise ValueError("cannot pickle a matched MPI.Message")
        return (type(self), (MESSAGE_NO_PROC if self else MESSAGE_NULL,))

    def _receive(self, buf: Any, lower: bool, call: str) -> Request:
        vr = current()
        if self._msg is None and not self._noproc:
            raise MPIUsageError(f"rank {vr.rank}: {call}: receive through MESSAGE_NULL")
        if self._msg is None:   # MESSAGE_NO_PROC: a receive from PROC_NULL
            if self is not MESSAGE_NO_PROC:   # the constant itself stays (as in mpi4py)
                self._used = True
            req = Request(vr, RECV, call)
            req.envelope = (PROC_NULL, ANY_TAG, 0)
            req.lower = lower
            req.resolve(vr.clock, 0.0, vr.clock)
            return req
        if self._used or vr is not self._vr:
            raise MPIUsageError(f"rank {vr.rank}: {call}: this message was already received "
                                f"or belongs to another rank")
        self._used = True
        req = Request(vr, RECV, call)
        req.lower = lower
        if buf is not None:
            req.rinfo = parse_buffer(vr, buf, call)
        req.t_post = vr.clock
        vr.ops += 1
        vr.engine.protocol.matched(req, self._msg)
        return req

    def recv(self, status: Status | None = None) -> Any:
        """Receive the probed message as a Python object."""
        req = self._receive(None, True, "Message.recv")
        req.owner.settle_one(req, "Message.recv")
        return req.finish(status)

    def irecv(self) -> Request:
        """Nonblocking receive of the probed object."""
        return self._receive(None, True, "Message.irecv")

    def Recv(self, buf: Any, status: Status | None = None) -> None:
        """Receive the probed message into *buf*."""
        req = self._receive(buf, False, "Message.Recv")
        req.owner.settle_one(req, "Message.Recv")
        req.finish(status)

    def Irecv(self, buf: Any) -> Request:
        """Nonblocking receive of the probed message into *buf*."""
        return self._receive(buf, False, "Message.Irecv")

    def __repr__(self) -> str:
        if not self:
            return "<Message MESSAGE_NULL>"
        return "<Message NO_PROC>" if self._msg is None else "<Message matched>"


MESSAGE_NO_PROC = MatchedMessage(None, None, noproc=True)
"""The constant; probes of ``PROC_NULL`` return a fresh copy (receiving nulls it)."""
MESSAGE_NULL = MatchedMessage()
