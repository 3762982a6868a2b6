# cython: annotation_typing=False
"""Point-to-point operations of communicators, mpi4py's names and keywords.

Every function takes the communicator first and is bound as a method of
:class:`bsim.mpi.comms.comm.Comm` (``Comm.Isend = p2p.Isend``).  A send hands a
:class:`~bsim.engine.matching.Message` to the run's protocol
(``docs/protocols.md``); a receive posts a request that the engine matches in
MPI's order (``bsim.engine.matching``); blocking calls settle their requests
on the calling rank's clock (:meth:`bsim.engine.rank.VirtualRank.settle`).
This is the engine's hottest path: argument checks take a fast branch for
plain ints in range before any conversion, and ``Isend``/``Irecv``/``Send``/``Recv``
of a placeholder (:class:`~bsim.mpi.data.buffers.Buffer`) to or from a rank of the world
or of an intracommunicator's group skip the general path altogether
(:func:`~bsim.mpi.p2p.fast_path.flat_call`: no parsing, conversion or communicator
lookup); anything else, including every bad argument, takes the general path and its
checks (``tests/test_p2p_fast_path.py`` holds the two to the same predictions).
"""

from __future__ import annotations

import operator
import os
import pickle
import sys
import warnings
from typing import TYPE_CHECKING, Any

from ...constants import ANY_SOURCE, ANY_TAG, ERR_RANK, ERR_TAG, PROC_NULL, TAG_UB
from ...engine.matching import Message, find_unexpected, mailbox, post_receive
from ...engine.rank import VirtualRank, current
from ...engine.synchronous import SELF_EAGER_LIMIT
from ...errors import MPIUsageError
from ..common.integers import integral
from ..common.rc import IRECV_BUFSZ
from ..data.buffer_info import BufInfo
from ..data.buffers import Buffer, MPIUsageBufferError, parse_buffer
from ..requests.request import RECV, SEND, Prequest, Request, Status, hand_out
from .fast_path import flat_call
from .message import MESSAGE_NO_PROC, MatchedMessage

if TYPE_CHECKING:
    from ..comms.comm import Comm

__all__ = ["Send", "Recv", "Isend", "Irecv", "Sendrecv", "Probe", "Iprobe", "Mprobe",
           "Improbe", "send", "recv", "isend", "irecv", "sendrecv"]


def _check_dest(comm: Comm, vr: VirtualRank, dest: Any, tag: Any, call: str) -> None:
    size = comm.peer_size(vr)
    if type(dest) is int and type(tag) is int and 0 <= dest < size \
            and 0 <= tag <= TAG_UB:
        return   # the common case, without conversions
    dest, tag = _as_int(dest), _as_int(tag)
    if not isinstance(dest, int) or not (0 <= dest < size):
        raise MPIUsageError(f"rank {vr.rank}: {call}(dest={dest!r}, tag={tag!r}): invalid "
                            f"dest {dest!r} for {comm!r} "
                            f"(valid: 0..{size - 1} or PROC_NULL)", error_class=ERR_RANK)
    if not isinstance(tag, int) or not (0 <= tag <= TAG_UB):
        raise MPIUsageError(f"rank {vr.rank}: {call}(dest={dest!r}, tag={tag!r}): invalid "
                            f"tag {tag!r} (valid: 0..{TAG_UB})", error_class=ERR_TAG)


def _check_source(comm: Comm, vr: VirtualRank, source: Any, tag: Any, call: str) -> None:
    size = comm.peer_size(vr)
    if type(source) is int and type(tag) is int and ANY_SOURCE <= source < size \
            and ANY_TAG <= tag <= TAG_UB:
        return   # the common case (ANY_SOURCE -2, ANY_TAG -1; PROC_NULL -1 handled before)
    source, tag = _as_int(source), _as_int(tag)
    if not isinstance(source, int) or not (0 <= source < size or source == ANY_SOURCE):
        raise MPIUsageError(f"rank {vr.rank}: {call}(source={source!r}, tag={tag!r}): "
                            f"invalid source {source!r} for "
                            f"{comm!r} (valid: 0..{size - 1}, ANY_SOURCE or PROC_NULL)",
                            error_class=ERR_RANK)
    if not isinstance(tag, int) or not (0 <= tag <= TAG_UB or tag == ANY_TAG):
        raise MPIUsageError(f"rank {vr.rank}: {call}(source={source!r}, tag={tag!r}): "
                            f"invalid tag {tag!r} (valid: 0..{TAG_UB} or ANY_TAG)",
                            error_class=ERR_TAG)


def _isend(comm: Comm, vr: VirtualRank, nbytes: int, payload: Any, lower: bool, dest: int,
           tag: int, call: str, synchronous: bool = False,
           started: Prequest | None = None) -> Request:
    vr.ops += 1
    req: Request
    if started is None:
        req = Request(vr, SEND, call)
    else:
        started.reset(SEND)   # a started Prequest
        req = started
    if type(dest) is not int or type(tag) is not int:
        dest, tag = _as_int(dest), _as_int(tag)
    if dest == PROC_NULL:
        req.resolve(vr.clock, 0.0, vr.clock)
        return req
    _check_dest(comm, vr, dest, tag, call)
    dst = vr.engine.ranks[comm.world_rank(dest, vr)]
    msg = Message(comm.context, vr.rank, dst.rank, comm.rank_of(vr), tag, nbytes, payload, lower)
    vr.msgs += 1
    vr.nbytes += nbytes
    # to itself, a large message waits for its receive, as MPICH (engine/synchronous.py)
    vr.engine.protocol.send(vr, dst, msg, req,
                            synchronous or (dst is vr and nbytes > SELF_EAGER_LIMIT))
    return req


def _irecv(comm: Comm, vr: VirtualRank, info: BufInfo | None, lower: bool, source: int,
           tag: int, call: str, started: Prequest | None = None,
           blocking: bool = False) -> Request:
    """Post a receive; *blocking*: waited for at once, never handed to the program
    (``post_receive``: it may then take a message still in flight)."""
    vr.ops += 1
    req: Request
    if started is None:
        req = Request(vr, RECV, call)
    else:
        started.reset(RECV)   # a started Prequest
        req = started
    req.lower = lower
    if type(source) is not int or type(tag) is not int:
        source, tag = _as_int(source), _as_int(tag)
    if source == PROC_NULL:
        req.envelope = (PROC_NULL, ANY_TAG, 0)
        req.resolve(vr.clock, 0.0, vr.clock)
        return req
    _check_source(comm, vr, source, tag, call)
    req.ctx = comm.context
    req.src = source if source == ANY_SOURCE else comm.world_rank(source, vr)
    req.tag = tag
    if info is not None and info.mem is not None and info.mem.readonly:
        raise MPIUsageBufferError(f"rank {vr.rank}: {call}: the receive buffer is read-only")
    req.rinfo = info
    if source == ANY_SOURCE or tag == ANY_TAG:
        vr.sync(call)  # which message matches depends on what arrived by now
    req.t_post = vr.clock
    post_receive(vr, req, blocking)
    return req


def _obj_send(comm: Comm, obj: Any, dest: int, tag: int, call: str,
              synchronous: bool = False) -> Request:
    vr = current()
    payload = pickle.dumps(obj, pickle.HIGHEST_PROTOCOL)
    return _isend(comm, vr, len(payload), payload, True, dest, tag, call, synchronous)


def _buf_send(comm: Comm, buf: Any, dest: int, tag: int, call: str,
              synchronous: bool = False, req: Prequest | None = None) -> Request:
    vr = current()
    info = parse_buffer(vr, buf, call)
    payload = bytes(info.mem) if info.mem is not None else None
    return _isend(comm, vr, info.nbytes, payload, False, dest, tag, call, synchronous, req)


def _complete(req: Request, status: Status | None, call: str) -> Any:
    vr = req.owner
    vr.settle_one(req, call)
    return req.finish(status)


def _complete_pair(sreq: Request, rreq: Request, status: Status | None, call: str) -> None:
    """A ``Sendrecv``'s two requests, settled together and completed (C calls compiled)."""
    vr = rreq.owner
    vr.settle([sreq, rreq], call)
    sreq.finish(None)
    rreq.finish(status)


def send(comm: Comm, obj: Any, dest: int, tag: int = 0) -> None:
    """Send in standard mode."""
    _complete(_obj_send(comm, obj, dest, tag, "send"), None, "send")


def ssend(comm: Comm, obj: Any, dest: int, tag: int = 0) -> None:
    """Send in synchronous mode."""
    call = "ssend"
    _complete(_obj_send(comm, obj, dest, tag, call, True), None, call)


def isend(comm: Comm, obj: Any, dest: int, tag: int = 0) -> Request:
    """Nonblocking send."""
    return hand_out(_obj_send(comm, obj, dest, tag, "isend"))


def issend(comm: Comm, obj: Any, dest: int, tag: int = 0) -> Request:
    """Nonblocking send in synchronous mode."""
    return hand_out(_obj_send(comm, obj, dest, tag, "issend", True))


def recv(comm: Comm, buf: Any = None, source: int = ANY_SOURCE, tag: int = ANY_TAG,
         status: Status | None = None) -> Any:
    """Receive a Python object (a *buf* is deprecated in mpi4py 4 and ignored here)."""
    if buf is not None:
        warnings.warn("the 'buf' argument is deprecated", UserWarning, stacklevel=2)
    vr = current()
    call = "recv"
    return _complete(_irecv(comm, vr, None, True, source, tag, call, blocking=True), status,
                     call)


def irecv(comm: Comm, buf: Any = None, source: int = ANY_SOURCE, tag: int = ANY_TAG) -> Request:
    """Nonblocking receive of a pickled object into *buf*: a writable buffer, a size in
    bytes, or None for ``mpi4py.rc.irecv_bufsz`` bytes (32,768 unless set, or the
    ``MPI4PY_RC_IRECV_BUFSZ`` environment variable), as mpi4py posts it; a larger
    pickle fails at the wait with ``ERR_TRUNCATE`` as under real MPI."""
    vr = current()
    return hand_out(_irecv(comm, vr, _pickle_room(vr, buf), True, source, tag, "irecv"))


def _pickle_room(vr: VirtualRank, buf: Any) -> BufInfo:
    """The receive buffer mpi4py's ``irecv`` would post for *buf* (``PyMPI_irecv``)."""
    if buf is None:
        env = os.environ.get("MPI4PY_RC_IRECV_BUFSZ", "")
        buf = int(env) if env.isdigit() else getattr(
            getattr(sys.modules.get("mpi4py"), "rc", None), "irecv_bufsz", IRECV_BUFSZ)
    if isinstance(buf, bool) or not hasattr(buf, "__index__"):
        return parse_buffer(vr, buf, "irecv")
    size = operator.index(buf)
    if size < 0:
        raise MPIUsageError(f"rank {vr.rank}: irecv: buffer size {size} < 0")
    return Buffer(size)


def sendrecv(comm: Comm, sendobj: Any, dest: int, sendtag: int = 0, recvbuf: Any = None,
             source: int = ANY_SOURCE, recvtag: int = ANY_TAG,
             status: Status | None = None) -> Any:
    """Send and receive."""
    vr = current()
    call = "sendrecv"
    rreq = _irecv(comm, vr, None, True, source, recvtag, call, blocking=True)
    sreq = _obj_send(comm, sendobj, dest, sendtag, call)
    vr.settle([sreq, rreq], call)
    sreq.finish(None)
    return rreq.finish(status)


def probe(comm: Comm, source: int = ANY_SOURCE, tag: int = ANY_TAG,
          status: Status | None = None) -> bool:
    """Blocking test for a message."""
    return comm.Probe(source, tag, status)


def iprobe(comm: Comm, source: int = ANY_SOURCE, tag: int = ANY_TAG,
           status: Status | None = None) -> bool:
    """Nonblocking test for a message."""
    return comm.Iprobe(source, tag, status)


def Send(comm: Comm, buf: Any, dest: int, tag: int = 0) -> None:
    """Blocking send."""
    call = "Send"
    _complete(flat_call(comm, buf, dest, tag, call, SEND) or _buf_send(comm, buf, dest, tag, call),
              None, call)


def Rsend(comm: Comm, buf: Any, dest: int, tag: int = 0) -> None:
    """Blocking send in ready mode."""
    call = "Rsend"
    _complete(_buf_send(comm, buf, dest, tag, call), None, call)


def Ssend(comm: Comm, buf: Any, dest: int, tag: int = 0) -> None:
    """Blocking send in synchronous mode."""
    call = "Ssend"
    _complete(_buf_send(comm, buf, dest, tag, call, True), None, call)


def Isend(comm: Comm, buf: Any, dest: int, tag: int = 0) -> Request:
    """Nonblocking send."""
    req = flat_call(comm, buf, dest, tag, "Isend", SEND, True)
    if req is None:
        return hand_out(_buf_send(comm, buf, dest, tag, "Isend"))
    return req


def Irsend(comm: Comm, buf: Any, dest: int, tag: int = 0) -> Request:
    """Nonblocking send in ready mode."""
    return hand_out(_buf_send(comm, buf, dest, tag, "Irsend"))


def Issend(comm: Comm, buf: Any, dest: int, tag: int = 0) -> Request:
    """Nonblocking send in synchronous mode."""
    return hand_out(_buf_send(comm, buf, dest, tag, "Issend", True))


def Recv(comm: Comm, buf: Any, source: int = ANY_SOURCE, tag: int = ANY_TAG,
         status: Status | None = None) -> None:
    """Blocking receive."""
    call = "Recv"
    req = flat_call(comm, buf, source, tag, call, RECV)
    if req is None:
        vr = current()
        req = _irecv(comm, vr, parse_buffer(vr, buf, call), False, source, tag, call,
                     blocking=True)
    _complete(req, status, call)


def Irecv(comm: Comm, buf: Any, source: int = ANY_SOURCE, tag: int = ANY_TAG) -> Request:
    """Nonblocking receive."""
    req = flat_call(comm, buf, source, tag, "Irecv", RECV, True)
    if req is None:
        vr = current()
        req = hand_out(_irecv(comm, vr, parse_buffer(vr, buf, "Irecv"), False, source, tag,
                              "Irecv"))
    return req


def Sendrecv(comm: Comm, sendbuf: Any, dest: int, sendtag: int = 0, recvbuf: Any = None,
             source: int = ANY_SOURCE, recvtag: int = ANY_TAG,
             status: Status | None = None) -> None:
    """Send and receive."""
    call = "Sendrecv"
    if type(sendbuf) is Buffer and type(recvbuf) is Buffer:
        # placeholders: each part flattened when it can be (Irecv's and Isend's path)
        rreq = flat_call(comm, recvbuf, source, recvtag, call, RECV)
        if rreq is None:
            vr = current()
            rreq = _irecv(comm, vr, parse_buffer(vr, recvbuf, call), False, source, recvtag,
                          call, blocking=True)
        sreq = flat_call(comm, sendbuf, dest, sendtag, call, SEND)
        if sreq is None:
            sinfo = parse_buffer(rreq.owner, sendbuf, call)
            sreq = _isend(comm, rreq.owner, sinfo.nbytes, None, False, dest, sendtag, call)
        _complete_pair(sreq, rreq, status, call)
        return
    vr = current()
    sinfo = parse_buffer(vr, sendbuf, call)   # both specs checked before anything is posted
    info = parse_buffer(vr, recvbuf, call) if recvbuf is not None else None
    rreq = _irecv(comm, vr, info, False, source, recvtag, call, blocking=True)
    sreq = _isend(comm, vr, sinfo.nbytes, bytes(sinfo.mem) if sinfo.mem is not None else None,
                  False, dest, sendtag, call)
    _complete_pair(sreq, rreq, status, call)


def Sendrecv_replace(comm: Comm, buf: Any, dest: int, sendtag: int = 0,
                     source: int = ANY_SOURCE, recvtag: int = ANY_TAG,
                     status: Status | None = None) -> None:
    """Send and receive using one buffer."""
    vr = current()
    call = "Sendrecv_replace"
    sreq = _buf_send(comm, buf, dest, sendtag, call)   # payload copied before receiving
    rreq = _irecv(comm, vr, parse_buffer(vr, buf, call), False, source, recvtag, call,
                  blocking=True)
    vr.settle([sreq, rreq], call)
    sreq.finish(None)
    rreq.finish(status)


def _probe(comm: Comm, vr: VirtualRank, source: int, tag: int, call: str,
           blocking: bool) -> Message | None:
    """The earliest visible message matching (source, tag), waiting for one if
    *blocking*; None for PROC_NULL or (nonblocking) when there is none."""
    vr.ops += 1
    if source == PROC_NULL:
        return None
    _check_source(comm, vr, source, tag, call)
    src = source if source == ANY_SOURCE else comm.world_rank(source, vr)
    vr.sync(call, not blocking)
    msg = find_unexpected(vr, comm.context, src, tag)
    if msg is None and blocking:
        t_probe = vr.clock
        req = Request(vr, RECV, call)
        req.ctx, req.src, req.tag = comm.context, src, tag
        box = mailbox(vr)
        if box.probers is None:
            box.probers = [req]
        else:
            box.probers.append(req)
        vr.settle([req], call)
        msg = find_unexpected(vr, comm.context, src, tag)
        if msg is not None:   # the wait was part of its transfer (Protocol.probed)
            vr.engine.protocol.probed(msg, t_probe)
    elif msg is None:
        vr.engine.protocol.poll(vr, call)
    return msg


def _probe_status(status: Status | None, msg: Message | None) -> None:
    if status is not None:
        if msg is None:
            status._fill(PROC_NULL, ANY_TAG, 0)
        else:
            status._fill(msg.src_crank, msg.tag, msg.nbytes)


def Probe(comm: Comm, source: int = ANY_SOURCE, tag: int = ANY_TAG,
          status: Status | None = None) -> bool:
    """Blocking test for a message."""
    _probe_status(status, _probe(comm, current(), source, tag, "Probe", True))
    return True


def Iprobe(comm: Comm, source: int = ANY_SOURCE, tag: int = ANY_TAG,
           status: Status | None = None) -> bool:
    """Nonblocking test for a message."""
    msg = _probe(comm, current(), source, tag, "Iprobe", False)
    if msg is None and source != PROC_NULL:
        return False
    _probe_status(status, msg)
    return True


def _matched_probe(comm: Comm, source: int, tag: int, status: Status | None, call: str,
                   blocking: bool) -> Any:
    vr = current()
    msg = _probe(comm, vr, source, tag, call, blocking)
    if msg is None:
        if source == PROC_NULL:
            _probe_status(status, None)
            return MatchedMessage(MESSAGE_NO_PROC)   # its own handle: a receive nulls it
        return None
    vr.box.unexpected.remove(msg)     # no other receive can take it now
    _probe_status(status, msg)
    return MatchedMessage(vr, msg)


def Mprobe(comm: Comm, source: int = ANY_SOURCE, tag: int = ANY_TAG,
           status: Status | None = None) -> Any:
    """Blocking matched probe: returns an ``MPI.Message`` to receive with."""
    return _matched_probe(comm, source, tag, status, "Mprobe", True)


def Improbe(comm: Comm, source: int = ANY_SOURCE, tag: int = ANY_TAG,
            status: Status | None = None) -> Any:
    """Nonblocking matched probe: an ``MPI.Message``, or None if nothing matches."""
    return _matched_probe(comm, source, tag, status, "Improbe", False)


def _as_int(value: Any) -> Any:
    """*value* as a Python int if it is integral (numpy ints and integral floats included,
    as mpi4py converts them: :mod:`bsim.mpi.common.integers`), else unchanged."""
    return integral(value)
    try:
        return operator.index(value)
    except TypeError:
        return value
