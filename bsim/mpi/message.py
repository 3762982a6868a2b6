"""Matched probes: ``MPI.Message`` from ``Mprobe``/``Improbe`` (MPI 3.1, Sec. 3.8.2).

A matched probe takes the message out of the matching queues, so only the
receive made through the returned handle can take it.  The receive is timed
as an ordinary receive posted at the time of ``recv``/``Recv``/``irecv``/``Irecv``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..constants import ANY_TAG, PROC_NULL
from ..engine.rank import current
from ..errors import MPIUsageError
from .buffers import parse_bufspec
from .requests import RECV, Request, Status

if TYPE_CHECKING:
    from ..engine.matching import Message
    from ..engine.rank import VirtualRank

__all__ = ["MatchedMessage", "MESSAGE_NO_PROC"]


class MatchedMessage:
    """A message set aside by a matched probe (mpi4py's ``MPI.Message``)."""

    __slots__ = ("_vr", "_msg", "_used")

    def __init__(self, vr: VirtualRank | None, msg: Message | None) -> None:
        self._vr = vr
        self._msg = msg
        self._used = False

    def __bool__(self) -> bool:
        return self._msg is not None and not self._used

    def _receive(self, buf: Any, lower: bool, call: str) -> Request:
        vr = current()
        if self._msg is None:   # MESSAGE_NO_PROC: a receive from PROC_NULL
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
            try:
                req.rinfo = parse_bufspec(buf)
            except (TypeError, ValueError) as exc:
                raise MPIUsageError(f"rank {vr.rank}: {call}: bad buffer: {exc}") from None
        req.t_post = vr.clock
        vr.ops += 1
        vr.engine.protocol.matched(req, self._msg)
        return req

    def recv(self, status: Status | None = None) -> Any:
        """Receive the probed message as a Python object."""
        req = self._receive(None, True, "Message.recv")
        req.owner.settle([req], "Message.recv")
        return req.finish(status)

    def irecv(self) -> Request:
        """Nonblocking receive of the probed object."""
        return self._receive(None, True, "Message.irecv")

    def Recv(self, buf: Any, status: Status | None = None) -> None:
        """Receive the probed message into *buf*."""
        req = self._receive(buf, False, "Message.Recv")
        req.owner.settle([req], "Message.Recv")
        req.finish(status)

    def Irecv(self, buf: Any) -> Request:
        """Nonblocking receive of the probed message into *buf*."""
        return self._receive(buf, False, "Message.Irecv")

    def __repr__(self) -> str:
        return "<Message NO_PROC>" if self._msg is None else f"<Message used={self._used}>"


MESSAGE_NO_PROC = MatchedMessage(None, None)
