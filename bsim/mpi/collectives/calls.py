# cython: annotation_typing=False
"""Collectives of communicators (barrier, broadcast, reductions, scans), and their plumbing.

mpi4py's names and keywords; the functions are bound as methods of
:class:`bsim.mpi.comms.comm.Comm`, as are those of :mod:`bsim.mpi.collectives.exchanges`
(gather, scatter, allgather, alltoall), which share the plumbing here.

Lowercase methods carry Python objects and compute real results (pickled
copies, reductions folded in rank order).  Uppercase methods take buffer
specs: sizes drive the cost; when buffers are real (numpy, bytes) the data
is moved and reduced too, so unmodified programs compute correct values.
Placeholders (``bsim.Buffer``, ``[None, n, dtype]``) move nothing.  Cost sizes
(``nbytes`` of ``T(op, P, nbytes)``) follow ``netmodels.collective_costs``: the
whole vector (bcast, reduce, allreduce, reduce_scatter, scan), the root's
buffer (gather, scatter), one rank's receive buffer (allgather) or send
buffer (alltoall).
"""

from __future__ import annotations

import pickle
from typing import TYPE_CHECKING, Any

import numpy as np

from ...constants import ERR_ROOT, IN_PLACE
from ...engine.collective_rules import (
    ALL,
    FANIN,
    FANOUT,
    LARGEST,
    CollInstance,
    arrive,
    finalize,
)
from ...engine.failures import called_from
from ...engine.rank import VirtualRank, current
from ...errors import CollectiveMismatchError, MPIUsageError
from ..common.integers import integral
from ..data.buffers import BufInfo, MPIUsageBufferError, parse_buffer
from ..data.pickling import _comm_lock
from ..data.vector_buffers import BufInfoV
from ..requests.request import Request, hand_out
from .ops import SUM, Op, as_op, check_op_type, element_dtype, fold, fold_in_layout

try:   # compiled or not (bsim/engine/compiled.py, TYPED)
    import cython
except ImportError:
    from ...engine import pure_cython as cython

if TYPE_CHECKING:
    from ..comms.comm import Comm

__all__ = ["take_part", "leave", "nonblocking_request", "CollectivePost", "check_root",
           "write_into", "same_shape", "place_blocks",
           "dumps", "as_array", "NOTHING", "barrier", "Barrier", "Ibarrier", "bcast", "Bcast",
           "Ibcast", "reduce", "allreduce", "scan", "exscan", "Reduce", "Ireduce", "Allreduce",
           "Iallreduce", "Scan", "Exscan", "Reduce_scatter_block", "Reduce_scatter"]

_PICKLE = pickle.HIGHEST_PROTOCOL
NOTHING = object()   # "result computed, and it is nothing" (placeholders took part)


def dumps(obj: Any) -> bytes:
    """*obj* pickled as the lowercase calls send it."""
    return pickle.dumps(obj, _PICKLE)


def as_array(raw: bytes | None, info: Any) -> np.ndarray | None:
    """View bytes as a numpy array of the spec's datatype (None for placeholders)."""
    if raw is None:
        return None
    dt = element_dtype(info.datatype)
    return np.frombuffer(raw, dtype=dt if dt is not None else np.dtype("u1"))


def _writable(mem: Any) -> None:
    """A read-only receive buffer is mpi4py's ``BufferError``, naming rank and call."""
    if mem.readonly:
        vr = current()
        raise MPIUsageBufferError(f"rank {vr.rank}: {called_from()[0] or 'a collective'}: "
                                  f"the receive buffer is read-only")


def write_into(info: BufInfo | None, data: Any, offset: int = 0) -> None:
    """Copy *data* (bytes or array) into a real receive buffer at byte *offset*."""
    if info is None or info.mem is None or data is None:
        return
    _writable(info.mem)
    raw = data.tobytes() if isinstance(data, np.ndarray) else data
    info.mem[offset:offset + len(raw)] = raw


def place_blocks(info: BufInfoV, blocks: list[Any]) -> None:
    """Copy rank r's bytes into block r of a real receive buffer (placeholders: skipped)."""
    mem = info.mem
    if mem is None:
        return
    _writable(mem)
    for r, raw in enumerate(blocks):
        if raw is not None:
            off, n = info.block(r)
            mem[off:off + min(n, len(raw))] = raw[:n]


def check_root(comm: Comm, vr: VirtualRank, root: Any, call: str, size: int = -1) -> int:
    """*root* as an int rank of *comm* (*size*: -1 asks); :class:`MPIUsageError` if not one."""
    size = comm.size_of(vr) if size < 0 else size
    if type(root) is int and 0 <= root < size:   # the usual root: no conversion to check
        return root
    root = integral(root)   # size / 2 == 2.0 is rank 2, as mpi4py converts it
    if not isinstance(root, (int, np.integer)) or not 0 <= root < size:
        raise MPIUsageError(f"rank {vr.rank}: {call}(root={root!r}): invalid root for "
                            f"{comm!r} (valid: 0..{size - 1})", error_class=ERR_ROOT)
    return int(root)


def take_part(comm: Comm, vr: VirtualRank, op: str, kind: int, root: int, nbytes: float,
              value: Any, extra: tuple[Any, ...] = (), cost_bytes: Any = None,
              blocking: bool = True, blocks: Any = None, ident: tuple | None = None
              ) -> tuple[CollInstance, int, Request | None]:
    """Arrive at collective *op* on *comm*; block until done unless not *blocking*.

    Returns ``(instance, my rank in comm, request)`` (``bsim.engine.collective_rules``;
    *blocks*: a v-variant's blocks as the root knows them; *ident*: the communicator's
    ``coll_identity`` when the call has asked it, ``arrive``).  Called with arguments by
    position: Cython makes a keyword call to a ``cpdef`` function a Python call."""
    inst, me, req = arrive(vr, comm, op, kind, root, nbytes, value, extra,   # a C call
                           blocking, cost_bytes, None, blocks, ident)
    if blocking and req is not None:
        vr.settle_one(req, op)
    return inst, me, req


def leave(comm: Comm, vr: VirtualRank, inst: CollInstance, result: Any = None) -> Any:
    """Finish this rank's part of *inst* (``collective_rules.finalize``); return *result*."""
    finalize(vr, comm, inst)
    return result


@cython.freelist(64)   # compiled, a finished call's post is the next one's memory
@cython.cclass
class CollectivePost:
    """A nonblocking collective's ``post``, run at completion: the call's *post()* (None:
    nothing) or a broadcast's copy of the root's data into *info*, then the rank leaves
    the instance.  One object from a free list, where two closures were four objects."""

    __slots__ = ("comm", "vr", "inst", "post", "info", "root")

    def __init__(self, comm: Comm, vr: VirtualRank, inst: CollInstance, post: Any,
                 info: Any = None, root: int = -1) -> None:
        self.comm, self.vr, self.inst, self.post, self.info, self.root = (
            comm, vr, inst, post, info, root)

    def __call__(self) -> Any:
        if self.info is not None:
            write_into(self.info, self.inst.values[self.root])
        return leave(self.comm, self.vr, self.inst,
                     self.post() if self.post is not None else None)


def nonblocking_request(comm: Comm, vr: VirtualRank, inst: CollInstance, req: Request | None,
                        post: Any, info: Any = None, root: int = -1) -> Request:
    """Wrap a nonblocking collective's request: at completion, *post()* runs (None:
    nothing; with *info*, the root's data is copied into it: :class:`CollectivePost`)."""
    assert req is not None
    req.post = CollectivePost(comm, vr, inst, post, info, root)
    return hand_out(req)


def barrier(comm: Comm) -> None:
    """Barrier synchronization."""
    vr = current()
    inst, _, _ = take_part(comm, vr, "barrier", ALL, -1, 0, None)
    leave(comm, vr, inst)


def Barrier(comm: Comm) -> None:
    """Barrier synchronization."""
    comm.barrier()


def Ibarrier(comm: Comm) -> Request:
    """Nonblocking barrier."""
    vr = current()
    inst, _, req = take_part(comm, vr, "barrier", ALL, -1, 0, None, (), None, False)
    return nonblocking_request(comm, vr, inst, req, None)


def bcast(comm: Comm, obj: Any = None, root: int = 0) -> Any:
    """Broadcast a Python object from *root*."""
    vr = current()
    _comm_lock(comm, "bcast")   # mpi4py serialises threads' lowercase bcasts with this lock
    root = check_root(comm, vr, root, "bcast")
    me = comm.rank_of(vr)
    payload = dumps(obj) if me == root else None
    # as mpi4py (PyMPI_bcast): the pickle's length (an MPI_Count, 8 bytes), then its bytes,
    # so every rank prices (and chooses an algorithm for) the size the root sends
    inst, _, _ = take_part(comm, vr, "bcast", FANOUT, root, 8, len(payload or b""),
                           (("nbytes", 8),))
    count = leave(comm, vr, inst, inst.values[root])
    inst, me, _ = take_part(comm, vr, "bcast", FANOUT, root, count, payload,
                            (("nbytes", count),))
    return leave(comm, vr, inst, obj if me == root else pickle.loads(inst.values[root]))


def _bcast_args(comm: Comm, vr: VirtualRank, buf: Any, root: int, call: str) -> tuple[Any, ...]:
    """(root, buffer, the root's bytes or None, ``coll_identity``: asked once a call)."""
    ident = comm.coll_identity(vr)
    root = check_root(comm, vr, root, call, ident[2])
    info = parse_buffer(vr, buf, call)
    raw = bytes(info.mem) if info.mem is not None and ident[1] == root else None
    return root, info, raw, ident


def Bcast(comm: Comm, buf: Any, root: int = 0) -> None:
    """Broadcast a buffer from *root*."""
    vr = current()
    root, info, raw, ident = _bcast_args(comm, vr, buf, root, "Bcast")
    inst, me, _ = take_part(comm, vr, "bcast", FANOUT, root, info.nbytes, raw,
                            (("nbytes", info.nbytes),), None, True, None, ident)
    if me != root:
        write_into(info, inst.values[root])
    leave(comm, vr, inst)


def Ibcast(comm: Comm, buf: Any, root: int = 0) -> Request:
    """Nonblocking broadcast."""
    vr = current()
    root, info, raw, ident = _bcast_args(comm, vr, buf, root, "Ibcast")
    inst, me, req = take_part(comm, vr, "bcast", FANOUT, root, info.nbytes, raw,
                              (("nbytes", info.nbytes),), None, False, None, ident)
    return nonblocking_request(comm, vr, inst, req, None, info if me != root else None, root)


def reduce(comm: Comm, sendobj: Any, op: Any = SUM, root: int = 0) -> Any:
    """Reduce Python objects to *root*."""
    vr = current()
    root = check_root(comm, vr, root, "reduce")
    fn = as_op(op)
    payload = dumps(sendobj)
    inst, me, _ = take_part(comm, vr, "reduce", FANIN, root, len(payload), payload,
                            (("op", fn.name),))
    result = fold(fn, [pickle.loads(v) for v in inst.values]) if me == root else None
    return leave(comm, vr, inst, result)


def allreduce(comm: Comm, sendobj: Any, op: Any = SUM) -> Any:
    """Reduce Python objects to all ranks."""
    vr = current()
    fn = as_op(op)
    payload = dumps(sendobj)
    inst, _, _ = take_part(comm, vr, "allreduce", ALL, -1, len(payload), payload,
                           (("op", fn.name),), LARGEST)
    if inst.result is None:
        inst.result = dumps(fold(fn, [pickle.loads(v) for v in inst.values]))
    return leave(comm, vr, inst, pickle.loads(inst.result))


def _scan_obj(comm: Comm, sendobj: Any, op: Any, exclusive: bool) -> Any:
    vr = current()
    fn = as_op(op)
    name = "exscan" if exclusive else "scan"
    payload = dumps(sendobj)
    inst, me, _ = take_part(comm, vr, name, ALL, -1, len(payload), payload, (("op", fn.name),),
                            LARGEST)
    upto = me if exclusive else me + 1
    result = fold(fn, [pickle.loads(v) for v in inst.values[:upto]]) if upto else None
    return leave(comm, vr, inst, result)


def scan(comm: Comm, sendobj: Any, op: Any = SUM) -> Any:
    """Inclusive prefix reduction of Python objects."""
    return _scan_obj(comm, sendobj, op, False)


def exscan(comm: Comm, sendobj: Any, op: Any = SUM) -> Any:
    """Exclusive prefix reduction of Python objects (None on rank 0)."""
    return _scan_obj(comm, sendobj, op, True)


def _red_args(comm: Comm, vr: VirtualRank, sendbuf: Any, recvbuf: Any, call: str, fn: Op,
              matched: bool = True) -> tuple[BufInfo | None, tuple[bytes | None, BufInfo], int]:
    """The receive buffer, (send bytes, send buffer) and the bytes reduced.  With
    *matched* (the root of a reduce, every member of an allreduce or scan) the send and
    receive buffers must hold the same count of the same datatype, as mpi4py checks; *fn*
    must be defined on it (``check_op_type``)."""
    rinfo = parse_buffer(vr, recvbuf, call) if recvbuf is not None else None
    if sendbuf is IN_PLACE or (sendbuf is None and rinfo is not None):   # mpi4py: None too
        if rinfo is None:
            raise MPIUsageError(f"rank {vr.rank}: {call}: IN_PLACE needs a receive buffer")
        sinfo = rinfo
    else:
        sinfo = parse_buffer(vr, sendbuf, call)
        if matched and rinfo is not None:
            same_shape(vr, call, sinfo, rinfo.datatype, rinfo.count, "receive count")
    check_op_type(fn, sinfo.datatype, call, placeholder=sinfo.mem is None)
    raw = bytes(sinfo.mem) if sinfo.mem is not None else None
    return rinfo, (raw, sinfo), sinfo.nbytes


def same_shape(vr: VirtualRank, call: str, sinfo: BufInfo, dt: Any, count: int,
                what: str) -> None:
    """A reduction's send buffer must hold *count* elements of *dt* (``ValueError``)."""
    if sinfo.datatype != dt:
        raise MPIUsageError(f"rank {vr.rank}: {call}: mismatch in send and receive "
                            f"datatypes ({sinfo.datatype.name} and {dt.name})")
    if sinfo.count != count:
        raise MPIUsageError(f"rank {vr.rank}: {call}: mismatch in send count {sinfo.count} "
                            f"and {what} {count}")


def _reduce_raw(fn: Op, values: list[Any]) -> np.ndarray | None:
    """Fold the members' data; each value is ``(raw bytes or None, BufInfo, ...)``."""
    if any(v[0] is None for v in values):
        return None   # a placeholder took part: sizes only
    dt = values[0][1].datatype
    if fn._user is not None and not dt.layout.contiguous:   # the function sees the layout
        count = len(values[0][0]) // max(dt.size, 1)
        return np.frombuffer(fold_in_layout(fn, dt, count, [v[0] for v in values]),
                             dtype=np.uint8)
    arrays = [a for a in (as_array(v[0], v[1]) for v in values) if a is not None]
    _same_signature(arrays)
    # logical ops give bools: cast back to the buffer's type before writing bytes
    return np.asarray(fold(fn, arrays)).astype(arrays[0].dtype, copy=False)


def _same_signature(arrays: list[np.ndarray]) -> None:
    """The members of a reduction pass the same type signature (MPI 4.1 Sec. 6.9.1: the
    same count of the same datatype), else :class:`CollectiveMismatchError` naming two
    members, what each passed, the call and the line (the same bytes in two types would
    otherwise meet in numpy as a broadcast error, or reduce bytes of one as the other)."""
    first = arrays[0] if arrays else None
    for member, a in enumerate(arrays):
        if first is not None and (a.dtype != first.dtype or a.size != first.size):
            call, where = called_from()
            raise CollectiveMismatchError(
                f"rank {current().rank}: {call or 'reduction'}: collective mismatch: "
                f"member 0 passed {first.size} x {first.dtype}, member {member} passed "
                f"{a.size} x {a.dtype} (every member must pass the same count of the same "
                f"datatype) (at {where})")


def _Reduce(comm: Comm, sendbuf: Any, recvbuf: Any, op: Any, root: int, blocking: bool) -> Any:
    vr = current()
    call = "Reduce" if blocking else "Ireduce"
    root = check_root(comm, vr, root, call)
    fn = as_op(op)
    rinfo, value, nbytes = _red_args(comm, vr, sendbuf, recvbuf, call, fn,
                                     matched=comm.rank_of(vr) == root)
    inst, me, req = take_part(comm, vr, "reduce", FANIN, root, nbytes, value,
                              (("op", fn.name), ("nbytes", nbytes)), None, blocking)

    def post() -> None:
        if me == root:
            write_into(rinfo, _reduce_raw(fn, inst.values))
    if not blocking:
        return nonblocking_request(comm, vr, inst, req, post)
    post()
    return leave(comm, vr, inst)


def Reduce(comm: Comm, sendbuf: Any, recvbuf: Any, op: Any = SUM, root: int = 0) -> None:
    """Reduce buffers to *root*."""
    _Reduce(comm, sendbuf, recvbuf, op, root, True)


def Ireduce(comm: Comm, sendbuf: Any, recvbuf: Any, op: Any = SUM, root: int = 0) -> Request:
    """Nonblocking reduce."""
    return _Reduce(comm, sendbuf, recvbuf, op, root, False)


def _Allreduce(comm: Comm, sendbuf: Any, recvbuf: Any, op: Any, blocking: bool) -> Any:
    vr = current()
    call = "Allreduce" if blocking else "Iallreduce"
    fn = as_op(op)
    rinfo, value, nbytes = _red_args(comm, vr, sendbuf, recvbuf, call, fn)
    inst, me, req = take_part(comm, vr, "allreduce", ALL, -1, nbytes, value,
                              (("op", fn.name), ("nbytes", nbytes)), None, blocking)

    def post() -> None:
        if inst.result is None:
            result = _reduce_raw(fn, inst.values)
            inst.result = NOTHING if result is None else result
        if inst.result is not NOTHING:
            write_into(rinfo, inst.result)
    if not blocking:
        return nonblocking_request(comm, vr, inst, req, post)
    post()
    return leave(comm, vr, inst)


def Allreduce(comm: Comm, sendbuf: Any, recvbuf: Any, op: Any = SUM) -> None:
    """Reduce buffers to all ranks."""
    _Allreduce(comm, sendbuf, recvbuf, op, True)


def Iallreduce(comm: Comm, sendbuf: Any, recvbuf: Any, op: Any = SUM) -> Request:
    """Nonblocking allreduce."""
    return _Allreduce(comm, sendbuf, recvbuf, op, False)


def _Scan(comm: Comm, sendbuf: Any, recvbuf: Any, op: Any, exclusive: bool,
          blocking: bool = True) -> Any:
    vr = current()
    call = ("Exscan" if exclusive else "Scan") if blocking else \
        ("Iexscan" if exclusive else "Iscan")
    fn = as_op(op)
    rinfo, value, nbytes = _red_args(comm, vr, sendbuf, recvbuf, call, fn)
    op_name = "exscan" if exclusive else "scan"
    inst, me, req = take_part(comm, vr, op_name, ALL, -1, nbytes, value,
                              (("op", fn.name), ("nbytes", nbytes)), None, blocking)

    def post() -> None:
        upto = me if exclusive else me + 1
        if upto:
            write_into(rinfo, _reduce_raw(fn, inst.values[:upto]))
    if not blocking:
        return nonblocking_request(comm, vr, inst, req, post)
    post()
    return leave(comm, vr, inst)


def Scan(comm: Comm, sendbuf: Any, recvbuf: Any, op: Any = SUM) -> None:
    """Inclusive prefix reduction of buffers."""
    _Scan(comm, sendbuf, recvbuf, op, False)


def Exscan(comm: Comm, sendbuf: Any, recvbuf: Any, op: Any = SUM) -> None:
    """Exclusive prefix reduction (rank 0's receive buffer is untouched)."""
    _Scan(comm, sendbuf, recvbuf, op, True)


def _reduced(inst: Any, fn: Op) -> Any:
    """The instance's reduction, computed once for all members (NOTHING: sizes only)."""
    if inst.result is None:
        result = _reduce_raw(fn, inst.values)
        inst.result = NOTHING if result is None else result
    return inst.result


def _Reduce_scatter(comm: Comm, sendbuf: Any, recvbuf: Any, recvcounts: Any, op: Any,
                    block: bool, blocking: bool) -> Any:
    vr = current()
    call = ("Reduce_scatter_block" if block else "Reduce_scatter") if blocking else \
        ("Ireduce_scatter_block" if block else "Ireduce_scatter")
    fn = as_op(op)
    rinfo, (raw, sinfo), nbytes = _red_args(comm, vr, sendbuf, recvbuf, call, fn, matched=False)
    mine = rinfo.count if rinfo is not None else 0
    size = comm.size_of(vr)
    if rinfo is not None and sinfo is rinfo and not block and recvcounts is not None:
        total = sum(int(c) for c in recvcounts)
        if mine != total:   # in place: the buffer holds the whole vector
            raise MPIUsageError(f"rank {vr.rank}: {call}: mismatch in receive count {mine} "
                                f"and sum(counts) {total}")
    if rinfo is not None and sinfo is not rinfo:
        if block:
            same_shape(vr, call, sinfo, rinfo.datatype, mine * size, "size x receive count")
        elif recvcounts is not None:
            counts = [int(c) for c in recvcounts]
            same_shape(vr, call, sinfo, rinfo.datatype, sum(counts), "sum(counts)")
            me_ = comm.rank_of(vr)
            if me_ < len(counts) and counts[me_] != mine:
                raise MPIUsageError(f"rank {vr.rank}: {call}: mismatch in receive count "
                                    f"{mine} and counts[{me_}] {counts[me_]}")
    inst, me, req = take_part(comm, vr, "reduce_scatter", ALL, -1, nbytes, (raw, sinfo, mine),
                              (("op", fn.name), ("nbytes", nbytes)), None, blocking)

    def post() -> None:
        result = _reduced(inst, fn)
        if result is NOTHING or rinfo is None:
            return
        if block:
            counts = [len(result) // size] * size
        elif recvcounts is not None:
            counts = list(recvcounts)
        else:   # as mpi4py: each member receives what its receive buffer holds
            counts = [v[2] for v in inst.values]
        start = sum(counts[:me])
        write_into(rinfo, result[start:start + counts[me]])
    if not blocking:
        return nonblocking_request(comm, vr, inst, req, post)
    post()
    return leave(comm, vr, inst)


def Reduce_scatter_block(comm: Comm, sendbuf: Any, recvbuf: Any, op: Any = SUM) -> None:
    """Reduce, then scatter equal blocks of the result."""
    _Reduce_scatter(comm, sendbuf, recvbuf, None, op, True, True)


def Reduce_scatter(comm: Comm, sendbuf: Any, recvbuf: Any, recvcounts: Any = None,
                   op: Any = SUM) -> None:
    """Reduce, then scatter blocks of ``recvcounts`` elements.

    Without *recvcounts* each member receives as many elements as its receive
    buffer holds, as mpi4py does (it gathers the members' counts).
    """
    _Reduce_scatter(comm, sendbuf, recvbuf, recvcounts, op, False, True)


def Ireduce_scatter_block(comm: Comm, sendbuf: Any, recvbuf: Any, op: Any = SUM) -> Request:
    """Nonblocking reduce-scatter of equal blocks."""
    return _Reduce_scatter(comm, sendbuf, recvbuf, None, op, True, False)


def Ireduce_scatter(comm: Comm, sendbuf: Any, recvbuf: Any, recvcounts: Any = None,
                    op: Any = SUM) -> Request:
    """Nonblocking reduce-scatter."""
    return _Reduce_scatter(comm, sendbuf, recvbuf, recvcounts, op, False, False)


def Iscan(comm: Comm, sendbuf: Any, recvbuf: Any, op: Any = SUM) -> Request:
    """Nonblocking inclusive prefix reduction."""
    return _Scan(comm, sendbuf, recvbuf, op, False, False)


def Iexscan(comm: Comm, sendbuf: Any, recvbuf: Any, op: Any = SUM) -> Request:
    """Nonblocking exclusive prefix reduction."""
    return _Scan(comm, sendbuf, recvbuf, op, True, False)
