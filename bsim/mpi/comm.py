"""Communicators and point-to-point calls (mpi4py's ``Comm``/``Intracomm``).

A communicator object is shared by all its member ranks: each call looks up
the calling virtual rank (``rank.current()``) and acts for it, so
``MPI.COMM_WORLD`` is one object that means "the world of whoever calls".
Point-to-point messages use the communicator's context id; collectives
(``bsim.engine.collective_rules``) use ``context + 1``, so the two never match.
"""

from __future__ import annotations

import operator
import pickle
from typing import TYPE_CHECKING, Any

from ..engine.matching import Message, find_unexpected, mailbox, post_receive
from ..engine.rank import VirtualRank, current
from ..errors import MPIUsageError
from .buffers import BufInfo, parse_bufspec
from .collective_calls import CollectiveMethods
from .management import CommManagement
from .requests import ANY_SOURCE, ANY_TAG, PROC_NULL, RECV, SEND, Prequest, Request, Status

if TYPE_CHECKING:
    pass

__all__ = ["Comm", "Intracomm", "TAG_UB", "WORLD_CONTEXT", "SELF_CONTEXT"]

TAG_UB = 2**31 - 1
WORLD_CONTEXT = 0
SELF_CONTEXT = 2
_KIND_WORLD, _KIND_SELF, _KIND_GROUP, _KIND_NULL = 0, 1, 2, 3


class Comm(CollectiveMethods, CommManagement):
    """A communicator: a context id and an ordered group of world ranks.

    ``Comm`` objects are created by bsim (``COMM_WORLD``, ``COMM_SELF`` and by
    ``Dup``/``Split``/``Create_cart``); programs do not build them directly.
    """

    __slots__ = ("context", "coll_ctx", "kind", "_group", "_index", "_name", "__weakref__")

    def __init__(self, ctx: Any, kind: int, group: tuple[int, ...] | None = None,
                 name: str = "") -> None:
        self.context = ctx
        self.coll_ctx = ctx + 1 if isinstance(ctx, int) else (ctx, "c")   # collectives' context
        self.kind = kind
        self._group = group
        self._index = {w: i for i, w in enumerate(group)} if group is not None else None
        self._name = name

    # -- identity --------------------------------------------------------
    def rank_of(self, vr: VirtualRank) -> int:
        """The rank of *vr* in this communicator."""
        kind = self.kind
        if kind == _KIND_WORLD:
            return vr.rank
        if kind == _KIND_SELF:
            return 0
        if kind == _KIND_NULL:
            raise MPIUsageError(f"rank {vr.rank}: operation on COMM_NULL")
        try:
            return self._index[vr.rank]  # type: ignore[index]
        except KeyError:
            raise MPIUsageError(f"rank {vr.rank} is not a member of {self!r}") from None

    def size_of(self, vr: VirtualRank) -> int:
        kind = self.kind
        if kind == _KIND_WORLD:
            return vr.engine.nranks
        if kind == _KIND_SELF:
            return 1
        if kind == _KIND_NULL:
            raise MPIUsageError(f"rank {vr.rank}: operation on COMM_NULL")
        return len(self._group)  # type: ignore[arg-type]

    def world_rank(self, crank: int, vr: VirtualRank) -> int:
        """World rank of communicator rank *crank*."""
        kind = self.kind
        if kind == _KIND_WORLD:
            return crank
        if kind == _KIND_SELF:
            return vr.rank
        return self._group[crank]  # type: ignore[index]

    def coll_context(self, vr: VirtualRank) -> Any:
        """Context of this communicator's collectives (COMM_SELF: one per rank)."""
        return ("self", vr.rank) if self.kind == _KIND_SELF else self.coll_ctx

    def members(self, vr: VirtualRank) -> tuple[int, ...]:
        """World ranks of the members, in communicator rank order."""
        kind = self.kind
        if kind == _KIND_WORLD:
            return vr.engine.world_group
        if kind == _KIND_SELF:
            return (vr.rank,)
        if kind == _KIND_NULL:
            raise MPIUsageError(f"rank {vr.rank}: operation on COMM_NULL")
        return self._group  # type: ignore[return-value]

    def Create_cart(self, dims: Any, periods: Any = None, reorder: bool = False) -> Any:
        """A Cartesian communicator over the first ``prod(dims)`` ranks (collective)."""
        from .cartesian import create_cart
        return create_cart(self, dims, periods, reorder)  # type: ignore[arg-type]

    def Get_rank(self) -> int:
        """Rank of the calling process in the communicator."""
        return self.rank_of(current())

    def Get_size(self) -> int:
        """Number of processes in the communicator."""
        return self.size_of(current())

    @property
    def rank(self) -> int:
        """Rank of the calling process in the communicator."""
        return self.rank_of(current())

    @property
    def size(self) -> int:
        """Number of processes in the communicator."""
        return self.size_of(current())

    def Get_name(self) -> str:
        """The communicator's name."""
        return self._name

    def Set_name(self, name: str) -> None:
        """Set the communicator's name."""
        self._name = name

    @property
    def name(self) -> str:
        """The communicator's name."""
        return self._name

    def Is_inter(self) -> bool:
        """Always False: bsim has intracommunicators only."""
        return False

    def Is_intra(self) -> bool:
        """Always True."""
        return True

    def __bool__(self) -> bool:
        return self.kind != _KIND_NULL

    def __repr__(self) -> str:
        if self.kind == _KIND_NULL:
            return "<Intracomm COMM_NULL>"
        label = self._name or f"ctx={self.context}"
        try:
            size = f" size={self.Get_size()}"
        except Exception:  # outside a simulation the world's size is not known
            size = ""
        return f"<Intracomm {label}{size}>"

    # -- argument checks ---------------------------------------------------
    def _check_dest(self, vr: VirtualRank, dest: Any, tag: Any, call: str) -> None:
        size = self.size_of(vr)
        if dest.__class__ is int and tag.__class__ is int and 0 <= dest < size \
                and 0 <= tag <= TAG_UB:
            return   # the common case, without conversions
        dest, tag = _as_int(dest), _as_int(tag)
        if not isinstance(dest, int) or not (0 <= dest < size):
            raise MPIUsageError(f"rank {vr.rank}: {call}(dest={dest!r}, tag={tag!r}): invalid "
                                f"dest {dest!r} for {self!r} "
                                f"(valid: 0..{size - 1} or PROC_NULL)")
        if not isinstance(tag, int) or not (0 <= tag <= TAG_UB):
            raise MPIUsageError(f"rank {vr.rank}: {call}(dest={dest!r}, tag={tag!r}): invalid "
                                f"tag {tag!r} (valid: 0..{TAG_UB})")

    def _check_source(self, vr: VirtualRank, source: Any, tag: Any, call: str) -> None:
        size = self.size_of(vr)
        if source.__class__ is int and tag.__class__ is int and -1 <= source < size \
                and -1 <= tag <= TAG_UB:
            return   # the common case (ANY_SOURCE = ANY_TAG = -1), without conversions
        source, tag = _as_int(source), _as_int(tag)
        if not isinstance(source, int) or not (0 <= source < size or source == ANY_SOURCE):
            raise MPIUsageError(f"rank {vr.rank}: {call}(source={source!r}, tag={tag!r}): "
                                f"invalid source {source!r} for "
                                f"{self!r} (valid: 0..{size - 1}, ANY_SOURCE or PROC_NULL)")
        if not isinstance(tag, int) or not (0 <= tag <= TAG_UB or tag == ANY_TAG):
            raise MPIUsageError(f"rank {vr.rank}: {call}(source={source!r}, tag={tag!r}): "
                                f"invalid tag {tag!r} (valid: 0..{TAG_UB} or ANY_TAG)")

    def _bufinfo(self, vr: VirtualRank, spec: Any, call: str) -> BufInfo:
        try:
            return parse_bufspec(spec)
        except (TypeError, ValueError) as exc:
            raise MPIUsageError(f"rank {vr.rank}: {call}: bad buffer: {exc}") from None

    # -- point-to-point core -------------------------------------------------
    def _isend(self, vr: VirtualRank, nbytes: int, payload: Any, lower: bool, dest: int,
               tag: int, call: str, synchronous: bool = False,
               req: Request | None = None) -> Request:
        vr.ops += 1
        if req is None:
            req = Request(vr, SEND, call)
        else:
            req.reset(SEND)  # type: ignore[attr-defined]   # a started Prequest
        if dest.__class__ is not int or tag.__class__ is not int:
            dest, tag = _as_int(dest), _as_int(tag)
        if dest == PROC_NULL:
            req.resolve(vr.clock, 0.0, vr.clock)
            return req
        self._check_dest(vr, dest, tag, call)
        dst = vr.engine.ranks[self.world_rank(dest, vr)]
        msg = Message(self.context, vr.rank, dst.rank, self.rank_of(vr), tag, nbytes, payload, lower)
        vr.msgs += 1
        vr.nbytes += nbytes
        vr.engine.protocol.send(vr, dst, msg, req, synchronous)
        return req

    def _irecv(self, vr: VirtualRank, info: BufInfo | None, lower: bool, source: int,
               tag: int, call: str, req: Request | None = None) -> Request:
        vr.ops += 1
        if req is None:
            req = Request(vr, RECV, call)
        else:
            req.reset(RECV)  # type: ignore[attr-defined]   # a started Prequest
        req.lower = lower
        if source.__class__ is not int or tag.__class__ is not int:
            source, tag = _as_int(source), _as_int(tag)
        if source == PROC_NULL:
            req.envelope = (PROC_NULL, ANY_TAG, 0)
            req.resolve(vr.clock, 0.0, vr.clock)
            return req
        self._check_source(vr, source, tag, call)
        req.ctx = self.context
        req.src = source if source == ANY_SOURCE else self.world_rank(source, vr)
        req.tag = tag
        req.rinfo = info
        if source == ANY_SOURCE or tag == ANY_TAG:
            vr.sync(call)  # which message matches depends on what arrived by now
        req.t_post = vr.clock
        post_receive(vr, req)
        return req

    def _obj_send(self, obj: Any, dest: int, tag: int, call: str,
                  synchronous: bool = False) -> Request:
        vr = current()
        payload = pickle.dumps(obj, pickle.HIGHEST_PROTOCOL)
        return self._isend(vr, len(payload), payload, True, dest, tag, call, synchronous)

    def _buf_send(self, buf: Any, dest: int, tag: int, call: str,
                  synchronous: bool = False, req: Request | None = None) -> Request:
        vr = current()
        info = self._bufinfo(vr, buf, call)
        payload = bytes(info.mem) if info.mem is not None else None
        return self._isend(vr, info.nbytes, payload, False, dest, tag, call, synchronous, req)

    def Send_init(self, buf: Any, dest: int, tag: int = 0) -> Prequest:
        """Persistent standard-mode send (start with ``Start``)."""
        return Prequest(current(), SEND, "Send_init",
                        lambda req: self._buf_send(buf, dest, tag, "Send_init", False, req))

    def Ssend_init(self, buf: Any, dest: int, tag: int = 0) -> Prequest:
        """Persistent synchronous-mode send."""
        return Prequest(current(), SEND, "Ssend_init",
                        lambda req: self._buf_send(buf, dest, tag, "Ssend_init", True, req))

    def Recv_init(self, buf: Any, source: int = ANY_SOURCE, tag: int = ANY_TAG) -> Prequest:
        """Persistent receive (start with ``Start``)."""
        vr = current()
        info = self._bufinfo(vr, buf, "Recv_init")
        return Prequest(vr, RECV, "Recv_init",
                        lambda req: self._irecv(vr, info, False, source, tag, "Recv_init", req))

    @staticmethod
    def _complete(req: Request, status: Status | None, call: str) -> Any:
        vr = req.owner
        vr.settle([req], call)  # type: ignore[union-attr]
        return req.finish(status)

    # -- lowercase: Python objects ------------------------------------------
    def send(self, obj: Any, dest: int, tag: int = 0) -> None:
        """Send in standard mode."""
        self._complete(self._obj_send(obj, dest, tag, "send"), None,
                       "send")

    def bsend(self, obj: Any, dest: int, tag: int = 0) -> None:
        """Send in buffered mode."""
        self._complete(self._obj_send(obj, dest, tag, "bsend"), None,
                       "bsend")

    def ssend(self, obj: Any, dest: int, tag: int = 0) -> None:
        """Send in synchronous mode."""
        call = "ssend"
        self._complete(self._obj_send(obj, dest, tag, call, True), None, call)

    def isend(self, obj: Any, dest: int, tag: int = 0) -> Request:
        """Nonblocking send."""
        return self._obj_send(obj, dest, tag, "isend")

    def ibsend(self, obj: Any, dest: int, tag: int = 0) -> Request:
        """Nonblocking send in buffered mode."""
        return self._obj_send(obj, dest, tag, "ibsend")

    def issend(self, obj: Any, dest: int, tag: int = 0) -> Request:
        """Nonblocking send in synchronous mode."""
        return self._obj_send(obj, dest, tag, "issend", True)

    def recv(self, buf: Any = None, source: int = ANY_SOURCE, tag: int = ANY_TAG,
             status: Status | None = None) -> Any:
        """Receive."""
        vr = current()
        call = "recv"
        return self._complete(self._irecv(vr, None, True, source, tag, call), status, call)

    def irecv(self, buf: Any = None, source: int = ANY_SOURCE, tag: int = ANY_TAG) -> Request:
        """Nonblocking receive."""
        vr = current()
        return self._irecv(vr, None, True, source, tag, "irecv")

    def sendrecv(self, sendobj: Any, dest: int, sendtag: int = 0, recvbuf: Any = None,
                 source: int = ANY_SOURCE, recvtag: int = ANY_TAG,
                 status: Status | None = None) -> Any:
        """Send and receive."""
        vr = current()
        call = "sendrecv"
        rreq = self._irecv(vr, None, True, source, recvtag, call)
        sreq = self._obj_send(sendobj, dest, sendtag, call)
        vr.settle([sreq, rreq], call)
        sreq.finish(None)
        return rreq.finish(status)

    def probe(self, source: int = ANY_SOURCE, tag: int = ANY_TAG,
              status: Status | None = None) -> bool:
        """Blocking test for a message."""
        return self.Probe(source, tag, status)

    def iprobe(self, source: int = ANY_SOURCE, tag: int = ANY_TAG,
               status: Status | None = None) -> bool:
        """Nonblocking test for a message."""
        return self.Iprobe(source, tag, status)

    # -- uppercase: buffers -------------------------------------------------
    def Send(self, buf: Any, dest: int, tag: int = 0) -> None:
        """Blocking send."""
        call = "Send"
        self._complete(self._buf_send(buf, dest, tag, call), None, call)

    def Bsend(self, buf: Any, dest: int, tag: int = 0) -> None:
        """Blocking send in buffered mode."""
        call = "Bsend"
        self._complete(self._buf_send(buf, dest, tag, call), None, call)

    def Rsend(self, buf: Any, dest: int, tag: int = 0) -> None:
        """Blocking send in ready mode."""
        call = "Rsend"
        self._complete(self._buf_send(buf, dest, tag, call), None, call)

    def Ssend(self, buf: Any, dest: int, tag: int = 0) -> None:
        """Blocking send in synchronous mode."""
        call = "Ssend"
        self._complete(self._buf_send(buf, dest, tag, call, True), None, call)

    def Isend(self, buf: Any, dest: int, tag: int = 0) -> Request:
        """Nonblocking send."""
        return self._buf_send(buf, dest, tag, "Isend")

    def Ibsend(self, buf: Any, dest: int, tag: int = 0) -> Request:
        """Nonblocking send in buffered mode."""
        return self._buf_send(buf, dest, tag, "Ibsend")

    def Irsend(self, buf: Any, dest: int, tag: int = 0) -> Request:
        """Nonblocking send in ready mode."""
        return self._buf_send(buf, dest, tag, "Irsend")

    def Issend(self, buf: Any, dest: int, tag: int = 0) -> Request:
        """Nonblocking send in synchronous mode."""
        return self._buf_send(buf, dest, tag, "Issend", True)

    def Recv(self, buf: Any, source: int = ANY_SOURCE, tag: int = ANY_TAG,
             status: Status | None = None) -> None:
        """Blocking receive."""
        vr = current()
        call = "Recv"
        info = self._bufinfo(vr, buf, call)
        self._complete(self._irecv(vr, info, False, source, tag, call), status, call)

    def Irecv(self, buf: Any, source: int = ANY_SOURCE, tag: int = ANY_TAG) -> Request:
        """Nonblocking receive."""
        vr = current()
        call = "Irecv"
        return self._irecv(vr, self._bufinfo(vr, buf, call), False, source, tag, call)

    def Sendrecv(self, sendbuf: Any, dest: int, sendtag: int = 0, recvbuf: Any = None,
                 source: int = ANY_SOURCE, recvtag: int = ANY_TAG,
                 status: Status | None = None) -> None:
        """Send and receive."""
        vr = current()
        call = "Sendrecv"
        info = self._bufinfo(vr, recvbuf, call) if recvbuf is not None else None
        rreq = self._irecv(vr, info, False, source, recvtag, call)
        sreq = self._buf_send(sendbuf, dest, sendtag, call)
        vr.settle([sreq, rreq], call)
        sreq.finish(None)
        rreq.finish(status)

    def Sendrecv_replace(self, buf: Any, dest: int, sendtag: int = 0,
                         source: int = ANY_SOURCE, recvtag: int = ANY_TAG,
                         status: Status | None = None) -> None:
        """Send and receive using one buffer."""
        vr = current()
        call = "Sendrecv_replace"
        sreq = self._buf_send(buf, dest, sendtag, call)   # payload copied before receiving
        rreq = self._irecv(vr, self._bufinfo(vr, buf, call), False, source, recvtag, call)
        vr.settle([sreq, rreq], call)
        sreq.finish(None)
        rreq.finish(status)

    def _probe(self, vr: VirtualRank, source: int, tag: int, call: str,
               blocking: bool) -> Message | None:
        """The earliest visible message matching (source, tag), waiting for one if
        *blocking*; None for PROC_NULL or (nonblocking) when there is none."""
        vr.ops += 1
        if source == PROC_NULL:
            return None
        self._check_source(vr, source, tag, call)
        src = source if source == ANY_SOURCE else self.world_rank(source, vr)
        vr.sync(call)
        msg = find_unexpected(vr, self.context, src, tag)
        if msg is None and blocking:
            req = Request(vr, RECV, call)
            req.ctx, req.src, req.tag = self.context, src, tag
            mailbox(vr).probers.append(req)
            vr.settle([req], call)
            msg = find_unexpected(vr, self.context, src, tag)
        elif msg is None:
            vr.engine.protocol.poll(vr, call)
        return msg

    @staticmethod
    def _probe_status(status: Status | None, msg: Message | None) -> None:
        if status is not None:
            if msg is None:
                status._fill(PROC_NULL, ANY_TAG, 0)
            else:
                status._fill(msg.src_crank, msg.tag, msg.nbytes)

    def Probe(self, source: int = ANY_SOURCE, tag: int = ANY_TAG,
              status: Status | None = None) -> bool:
        """Blocking test for a message."""
        self._probe_status(status, self._probe(current(), source, tag, "Probe", True))
        return True

    def Iprobe(self, source: int = ANY_SOURCE, tag: int = ANY_TAG,
               status: Status | None = None) -> bool:
        """Nonblocking test for a message."""
        msg = self._probe(current(), source, tag, "Iprobe", False)
        if msg is None and source != PROC_NULL:
            return False
        self._probe_status(status, msg)
        return True

    def _matched_probe(self, source: int, tag: int, status: Status | None, call: str,
                       blocking: bool) -> Any:
        from .message import MESSAGE_NO_PROC, MatchedMessage
        vr = current()
        msg = self._probe(vr, source, tag, call, blocking)
        if msg is None:
            if source == PROC_NULL:
                self._probe_status(status, None)
                return MESSAGE_NO_PROC
            return None
        vr.box.unexpected.remove(msg)     # no other receive can take it now
        self._probe_status(status, msg)
        return MatchedMessage(vr, msg)

    def Mprobe(self, source: int = ANY_SOURCE, tag: int = ANY_TAG,
               status: Status | None = None) -> Any:
        """Blocking matched probe: returns an ``MPI.Message`` to receive with."""
        return self._matched_probe(source, tag, status, "Mprobe", True)

    def Improbe(self, source: int = ANY_SOURCE, tag: int = ANY_TAG,
                status: Status | None = None) -> Any:
        """Nonblocking matched probe: an ``MPI.Message``, or None if nothing matches."""
        return self._matched_probe(source, tag, status, "Improbe", False)

    mprobe = Mprobe
    improbe = Improbe


def _as_int(value: Any) -> Any:
    """*value* as a Python int if it is integral (numpy ints included), else unchanged."""
    if value.__class__ is int or isinstance(value, bool):
        return value
    try:
        return operator.index(value)
    except TypeError:
        return value


class Intracomm(Comm):
    """An intracommunicator (every bsim communicator is one)."""

    __slots__ = ()
