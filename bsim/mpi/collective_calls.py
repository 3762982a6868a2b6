"""Collective methods of communicators, mpi4py's names and keywords.

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

from ..constants import IN_PLACE
from ..engine.collective_rules import ALL, FANIN, FANOUT, CollInstance, arrive, finalize
from ..engine.rank import VirtualRank, current
from ..errors import MPIUsageError
from .buffers import BufInfo, BufInfoV, parse_buffer, parse_bufspecw, parse_vector_buffer
from .ops import SUM, Op, as_op, fold
from .requests import Request

if TYPE_CHECKING:
    from .comm import Comm

__all__ = ["barrier", "Barrier", "bcast", "Bcast", "allreduce", "Allreduce"]

_PICKLE = pickle.HIGHEST_PROTOCOL
_NONE = object()   # "result computed, and it is nothing" (placeholders took part)


def _dumps(obj: Any) -> bytes:
    return pickle.dumps(obj, _PICKLE)


def _array(raw: bytes | None, info: Any) -> np.ndarray | None:
    """View bytes as a numpy array of the spec's datatype (None for placeholders)."""
    if raw is None:
        return None
    dt = info.datatype.dtype if info.datatype.dtype is not None else np.dtype("u1")
    return np.frombuffer(raw, dtype=dt)


def _write(info: BufInfo | None, data: Any, offset: int = 0) -> None:
    """Copy *data* (bytes or array) into a real receive buffer at byte *offset*."""
    if info is None or info.mem is None or data is None:
        return
    raw = data.tobytes() if isinstance(data, np.ndarray) else data
    info.mem[offset:offset + len(raw)] = raw


def _place_blocks(info: BufInfoV, blocks: list[Any]) -> None:
    """Copy rank r's bytes into block r of a real receive buffer (placeholders: skipped)."""
    mem = info.mem
    if mem is None:
        return
    for r, raw in enumerate(blocks):
        if raw is not None:
            off, n = info.block(r)
            mem[off:off + min(n, len(raw))] = raw[:n]


def _root(comm: Comm, vr: VirtualRank, root: Any, call: str) -> int:
    size = comm.size_of(vr)
    if not isinstance(root, (int, np.integer)) or not 0 <= root < size:
        raise MPIUsageError(f"rank {vr.rank}: {call}(root={root!r}): invalid root for "
                            f"{comm!r} (valid: 0..{size - 1})")
    return int(root)


def _go(comm: Comm, vr: VirtualRank, op: str, kind: int, root: int, nbytes: float, value: Any,
        extra: tuple[Any, ...] = (), cost_bytes: Any = None,
        blocking: bool = True) -> tuple[CollInstance, int, Request | None]:
    inst, me, req = arrive(vr, comm, op, kind, root, nbytes, value, extra,
                           blocking, cost_bytes)
    if blocking and req is not None:
        vr.settle([req], op)
    return inst, me, req


def _done(comm: Comm, vr: VirtualRank, inst: CollInstance, result: Any = None) -> Any:
    finalize(vr, comm, inst)
    return result


def _nonblocking(comm: Comm, vr: VirtualRank, inst: CollInstance, req: Request | None,
                 post: Any) -> Request:
    """Wrap a nonblocking collective's request; *post()* runs at completion."""
    assert req is not None
    req.post = lambda: _done(comm, vr, inst, post())
    return req


def barrier(comm: Comm) -> None:
    """Barrier synchronization."""
    vr = current()
    inst, _, _ = _go(comm, vr, "barrier", ALL, -1, 0, None)
    _done(comm, vr, inst)


def Barrier(comm: Comm) -> None:
    """Barrier synchronization."""
    comm.barrier()


def Ibarrier(comm: Comm) -> Request:
    """Nonblocking barrier."""
    vr = current()
    inst, _, req = _go(comm, vr, "barrier", ALL, -1, 0, None, blocking=False)
    return _nonblocking(comm, vr, inst, req, lambda: None)


def bcast(comm: Comm, obj: Any = None, root: int = 0) -> Any:
    """Broadcast a Python object from *root*."""
    vr = current()
    root = _root(comm, vr, root, "bcast")
    me = comm.rank_of(vr)
    payload = _dumps(obj) if me == root else None
    inst, me, _ = _go(comm, vr, "bcast", FANOUT, root, len(payload or b""), payload)
    return _done(comm, vr, inst, obj if me == root else pickle.loads(inst.values[root]))


def _bcast_args(comm: Comm, vr: VirtualRank, buf: Any, root: int, call: str) -> tuple[Any, ...]:
    root = _root(comm, vr, root, call)
    info = parse_buffer(vr, buf, call)
    raw = bytes(info.mem) if info.mem is not None and comm.rank_of(vr) == root else None
    return root, info, raw


def Bcast(comm: Comm, buf: Any, root: int = 0) -> None:
    """Broadcast a buffer from *root*."""
    vr = current()
    root, info, raw = _bcast_args(comm, vr, buf, root, "Bcast")
    inst, me, _ = _go(comm, vr, "bcast", FANOUT, root, info.nbytes, raw,
                           (("nbytes", info.nbytes),))
    if me != root:
        _write(info, inst.values[root])
    _done(comm, vr, inst)


def Ibcast(comm: Comm, buf: Any, root: int = 0) -> Request:
    """Nonblocking broadcast."""
    vr = current()
    root, info, raw = _bcast_args(comm, vr, buf, root, "Ibcast")
    inst, me, req = _go(comm, vr, "bcast", FANOUT, root, info.nbytes, raw,
                             (("nbytes", info.nbytes),), blocking=False)
    return _nonblocking(comm, vr, inst, req,
                             lambda: _write(info, inst.values[root]) if me != root else None)


def reduce(comm: Comm, sendobj: Any, op: Any = SUM, root: int = 0) -> Any:
    """Reduce Python objects to *root*."""
    vr = current()
    root = _root(comm, vr, root, "reduce")
    fn = as_op(op)
    payload = _dumps(sendobj)
    inst, me, _ = _go(comm, vr, "reduce", FANIN, root, len(payload), payload,
                           (("op", fn.name),))
    result = fold(fn, [pickle.loads(v) for v in inst.values]) if me == root else None
    return _done(comm, vr, inst, result)


def allreduce(comm: Comm, sendobj: Any, op: Any = SUM) -> Any:
    """Reduce Python objects to all ranks."""
    vr = current()
    fn = as_op(op)
    payload = _dumps(sendobj)
    inst, _, _ = _go(comm, vr, "allreduce", ALL, -1, len(payload), payload,
                          (("op", fn.name),), cost_bytes=lambda i, r: max(i.nbytes))
    if inst.result is None:
        inst.result = _dumps(fold(fn, [pickle.loads(v) for v in inst.values]))
    return _done(comm, vr, inst, pickle.loads(inst.result))


def _scan_obj(comm: Comm, sendobj: Any, op: Any, exclusive: bool) -> Any:
    vr = current()
    fn = as_op(op)
    name = "exscan" if exclusive else "scan"
    payload = _dumps(sendobj)
    inst, me, _ = _go(comm, vr, name, ALL, -1, len(payload), payload, (("op", fn.name),),
                           cost_bytes=lambda i, r: max(i.nbytes))
    upto = me if exclusive else me + 1
    result = fold(fn, [pickle.loads(v) for v in inst.values[:upto]]) if upto else None
    return _done(comm, vr, inst, result)


def scan(comm: Comm, sendobj: Any, op: Any = SUM) -> Any:
    """Inclusive prefix reduction of Python objects."""
    return _scan_obj(comm, sendobj, op, False)


def exscan(comm: Comm, sendobj: Any, op: Any = SUM) -> Any:
    """Exclusive prefix reduction of Python objects (None on rank 0)."""
    return _scan_obj(comm, sendobj, op, True)


def _red_args(comm: Comm, vr: VirtualRank, sendbuf: Any, recvbuf: Any, call: str
              ) -> tuple[BufInfo | None, tuple[bytes | None, BufInfo], int]:
    rinfo = parse_buffer(vr, recvbuf, call) if recvbuf is not None else None
    if sendbuf is IN_PLACE:
        if rinfo is None:
            raise MPIUsageError(f"rank {vr.rank}: {call}: IN_PLACE needs a receive buffer")
        sinfo = rinfo
    else:
        sinfo = parse_buffer(vr, sendbuf, call)
    raw = bytes(sinfo.mem) if sinfo.mem is not None else None
    return rinfo, (raw, sinfo), sinfo.nbytes


def _reduce_raw(fn: Op, values: list[Any]) -> np.ndarray | None:
    if any(raw is None for raw, _ in values):
        return None   # a placeholder took part: sizes only
    arrays = [a for a in (_array(raw, info) for raw, info in values) if a is not None]
    # logical ops give bools: cast back to the buffer's type before writing bytes
    return np.asarray(fold(fn, arrays)).astype(arrays[0].dtype, copy=False)


def _Reduce(comm: Comm, sendbuf: Any, recvbuf: Any, op: Any, root: int, blocking: bool) -> Any:
    vr = current()
    call = "Reduce" if blocking else "Ireduce"
    root = _root(comm, vr, root, call)
    fn = as_op(op)
    rinfo, value, nbytes = _red_args(comm, vr, sendbuf, recvbuf, call)
    inst, me, req = _go(comm, vr, "reduce", FANIN, root, nbytes, value,
                             (("op", fn.name), ("nbytes", nbytes)), blocking=blocking)

    def post() -> None:
        if me == root:
            _write(rinfo, _reduce_raw(fn, inst.values))
    if not blocking:
        return _nonblocking(comm, vr, inst, req, post)
    post()
    return _done(comm, vr, inst)


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
    rinfo, value, nbytes = _red_args(comm, vr, sendbuf, recvbuf, call)
    inst, me, req = _go(comm, vr, "allreduce", ALL, -1, nbytes, value,
                             (("op", fn.name), ("nbytes", nbytes)), blocking=blocking)

    def post() -> None:
        if inst.result is None:
            result = _reduce_raw(fn, inst.values)
            inst.result = _NONE if result is None else result
        if inst.result is not _NONE:
            _write(rinfo, inst.result)
    if not blocking:
        return _nonblocking(comm, vr, inst, req, post)
    post()
    return _done(comm, vr, inst)


def Allreduce(comm: Comm, sendbuf: Any, recvbuf: Any, op: Any = SUM) -> None:
    """Reduce buffers to all ranks."""
    _Allreduce(comm, sendbuf, recvbuf, op, True)


def Iallreduce(comm: Comm, sendbuf: Any, recvbuf: Any, op: Any = SUM) -> Request:
    """Nonblocking allreduce."""
    return _Allreduce(comm, sendbuf, recvbuf, op, False)


def _Scan(comm: Comm, sendbuf: Any, recvbuf: Any, op: Any, exclusive: bool) -> None:
    vr = current()
    call = "Exscan" if exclusive else "Scan"
    fn = as_op(op)
    rinfo, value, nbytes = _red_args(comm, vr, sendbuf, recvbuf, call)
    inst, me, _ = _go(comm, vr, call.lower(), ALL, -1, nbytes, value,
                           (("op", fn.name), ("nbytes", nbytes)))
    upto = me if exclusive else me + 1
    if upto:
        _write(rinfo, _reduce_raw(fn, inst.values[:upto]))
    _done(comm, vr, inst)


def Scan(comm: Comm, sendbuf: Any, recvbuf: Any, op: Any = SUM) -> None:
    """Inclusive prefix reduction of buffers."""
    _Scan(comm, sendbuf, recvbuf, op, False)


def Exscan(comm: Comm, sendbuf: Any, recvbuf: Any, op: Any = SUM) -> None:
    """Exclusive prefix reduction (rank 0's receive buffer is untouched)."""
    _Scan(comm, sendbuf, recvbuf, op, True)


def Reduce_scatter_block(comm: Comm, sendbuf: Any, recvbuf: Any, op: Any = SUM) -> None:
    """Reduce, then scatter equal blocks of the result."""
    vr = current()
    fn = as_op(op)
    rinfo, value, nbytes = _red_args(comm, vr, sendbuf, recvbuf, "Reduce_scatter_block")
    size = comm.size_of(vr)
    inst, me, _ = _go(comm, vr, "reduce_scatter", ALL, -1, nbytes, value,
                           (("op", fn.name), ("nbytes", nbytes)))
    if inst.result is None:
        result = _reduce_raw(fn, inst.values)
        inst.result = _NONE if result is None else result
    if inst.result is not _NONE and rinfo is not None:
        block = len(inst.result) // size
        _write(rinfo, inst.result[me * block:(me + 1) * block])
    _done(comm, vr, inst)


def Reduce_scatter(comm: Comm, sendbuf: Any, recvbuf: Any, recvcounts: Any = None,
                   op: Any = SUM) -> None:
    """Reduce, then scatter blocks of ``recvcounts`` elements."""
    vr = current()
    fn = as_op(op)
    size = comm.size_of(vr)
    rinfo, value, nbytes = _red_args(comm, vr, sendbuf, recvbuf, "Reduce_scatter")
    inst, me, _ = _go(comm, vr, "reduce_scatter", ALL, -1, nbytes, value,
                           (("op", fn.name), ("nbytes", nbytes)))
    if inst.result is None:
        result = _reduce_raw(fn, inst.values)
        inst.result = _NONE if result is None else result
    if inst.result is not _NONE and rinfo is not None:
        counts = list(recvcounts) if recvcounts is not None else \
            [len(inst.result) // size] * size
        start = sum(counts[:me])
        _write(rinfo, inst.result[start:start + counts[me]])
    _done(comm, vr, inst)


def gather(comm: Comm, sendobj: Any, root: int = 0) -> list[Any] | None:
    """Gather Python objects to *root*."""
    vr = current()
    root = _root(comm, vr, root, "gather")
    payload = _dumps(sendobj)
    size = comm.size_of(vr)
    inst, me, _ = _go(comm, vr, "gather", FANIN, root, len(payload) * size, payload,
                           cost_bytes=lambda i, r: sum(i.nbytes) / size
                           if r == root else i.nbytes[r])
    result = [pickle.loads(v) for v in inst.values] if me == root else None
    return _done(comm, vr, inst, result)


def scatter(comm: Comm, sendobj: Any = None, root: int = 0) -> Any:
    """Scatter a list of Python objects from *root*."""
    vr = current()
    root = _root(comm, vr, root, "scatter")
    size = comm.size_of(vr)
    me = comm.rank_of(vr)
    payload = None
    nbytes = 0
    if me == root:
        if sendobj is None or len(sendobj) != size:
            raise MPIUsageError(f"rank {vr.rank}: scatter(root={root}): root must pass a "
                                f"sequence of {size} objects")
        payload = [_dumps(x) for x in sendobj]
        nbytes = sum(map(len, payload))
    inst, me, _ = _go(comm, vr, "scatter", FANOUT, root, nbytes, payload)
    return _done(comm, vr, inst, pickle.loads(inst.values[root][me]))


def allgather(comm: Comm, sendobj: Any) -> list[Any]:
    """Gather Python objects to all ranks."""
    vr = current()
    payload = _dumps(sendobj)
    inst, _, _ = _go(comm, vr, "allgather", ALL, -1, len(payload), payload,
                          cost_bytes=lambda i, r: sum(i.nbytes))
    return _done(comm, vr, inst, [pickle.loads(v) for v in inst.values])


def alltoall(comm: Comm, sendobj: Any) -> list[Any]:
    """Each rank sends item j of its sequence to rank j."""
    vr = current()
    size = comm.size_of(vr)
    if sendobj is None or len(sendobj) != size:
        raise MPIUsageError(f"rank {vr.rank}: alltoall: pass a sequence of {size} objects")
    payload = [_dumps(x) for x in sendobj]
    inst, me, _ = _go(comm, vr, "alltoall", ALL, -1, sum(map(len, payload)), payload,
                           cost_bytes=lambda i, r: max(i.nbytes))
    return _done(comm, vr, inst, [pickle.loads(v[me]) for v in inst.values])


def _Gather(comm: Comm, sendbuf: Any, recvbuf: Any, root: int, vector: bool,
            blocking: bool = True) -> Any:
    vr = current()
    call = ("Gatherv" if vector else "Gather") if blocking else "Igather"
    root = _root(comm, vr, root, call)
    size = comm.size_of(vr)
    me = comm.rank_of(vr)
    rinfo = parse_vector_buffer(vr, recvbuf, size, call) if me == root and recvbuf is not None \
        else None
    if sendbuf is IN_PLACE:
        if rinfo is None:
            raise MPIUsageError(f"rank {vr.rank}: {call}: IN_PLACE only at the root")
        off, n = rinfo.block(me)
        raw = bytes(rinfo.mem[off:off + n]) if rinfo.mem is not None else None
        nb = n
    else:
        sinfo = parse_buffer(vr, sendbuf, call)
        raw, nb = (bytes(sinfo.mem) if sinfo.mem is not None else None), sinfo.nbytes
    total = rinfo.nbytes if rinfo is not None else nb * size
    inst, me, req = _go(comm, vr, "gather", FANIN, root, total, raw,
                             () if vector else (("nbytes", nb),), blocking=blocking)

    def post() -> None:
        if rinfo is not None:
            _place_blocks(rinfo, inst.values)
    if not blocking:
        return _nonblocking(comm, vr, inst, req, post)
    post()
    return _done(comm, vr, inst)


def Gather(comm: Comm, sendbuf: Any, recvbuf: Any, root: int = 0) -> None:
    """Gather buffers to *root*."""
    _Gather(comm, sendbuf, recvbuf, root, False)


def Gatherv(comm: Comm, sendbuf: Any, recvbuf: Any, root: int = 0) -> None:
    """Gather buffers of varying sizes to *root*."""
    _Gather(comm, sendbuf, recvbuf, root, True)


def Igather(comm: Comm, sendbuf: Any, recvbuf: Any, root: int = 0) -> Request:
    """Nonblocking gather."""
    return _Gather(comm, sendbuf, recvbuf, root, False, False)


def _Scatter(comm: Comm, sendbuf: Any, recvbuf: Any, root: int, vector: bool) -> None:
    vr = current()
    call = "Scatterv" if vector else "Scatter"
    root = _root(comm, vr, root, call)
    size = comm.size_of(vr)
    me = comm.rank_of(vr)
    sinfo = parse_vector_buffer(vr, sendbuf, size, call) if me == root else None
    rinfo = None if recvbuf is IN_PLACE else parse_buffer(vr, recvbuf, call)
    value = None
    if sinfo is not None and sinfo.mem is not None:
        value = []
        for r in range(size):
            off, n = sinfo.block(r)
            value.append(bytes(sinfo.mem[off:off + n]))
    nb = sinfo.nbytes if sinfo is not None else (rinfo.nbytes * size if rinfo else 0)
    inst, me, _ = _go(comm, vr, "scatter", FANOUT, root, nb, value)
    if inst.values[root] is not None and rinfo is not None:
        _write(rinfo, inst.values[root][me][:rinfo.nbytes])
    _done(comm, vr, inst)


def Scatter(comm: Comm, sendbuf: Any, recvbuf: Any, root: int = 0) -> None:
    """Scatter equal blocks from *root*."""
    _Scatter(comm, sendbuf, recvbuf, root, False)


def Scatterv(comm: Comm, sendbuf: Any, recvbuf: Any, root: int = 0) -> None:
    """Scatter blocks of varying sizes from *root*."""
    _Scatter(comm, sendbuf, recvbuf, root, True)


def _Allgather(comm: Comm, sendbuf: Any, recvbuf: Any, vector: bool,
               blocking: bool = True) -> Any:
    vr = current()
    call = ("Allgatherv" if vector else "Allgather") if blocking else "Iallgather"
    size = comm.size_of(vr)
    me = comm.rank_of(vr)
    rinfo = parse_vector_buffer(vr, recvbuf, size, call)
    if sendbuf is IN_PLACE:
        off, n = rinfo.block(me)
        raw = bytes(rinfo.mem[off:off + n]) if rinfo.mem is not None else None
        nb = n
    else:
        sinfo = parse_buffer(vr, sendbuf, call)
        raw, nb = (bytes(sinfo.mem) if sinfo.mem is not None else None), sinfo.nbytes
    inst, me, req = _go(comm, vr, "allgather", ALL, -1, rinfo.nbytes, raw,
                             () if vector else (("nbytes", nb),),
                             cost_bytes=lambda i, r: max(i.nbytes), blocking=blocking)

    def post() -> None:
        _place_blocks(rinfo, inst.values)
    if not blocking:
        return _nonblocking(comm, vr, inst, req, post)
    post()
    return _done(comm, vr, inst)


def Allgather(comm: Comm, sendbuf: Any, recvbuf: Any) -> None:
    """Gather equal blocks to all ranks."""
    _Allgather(comm, sendbuf, recvbuf, False)


def Allgatherv(comm: Comm, sendbuf: Any, recvbuf: Any) -> None:
    """Gather blocks of varying sizes to all ranks."""
    _Allgather(comm, sendbuf, recvbuf, True)


def Iallgather(comm: Comm, sendbuf: Any, recvbuf: Any) -> Request:
    """Nonblocking allgather."""
    return _Allgather(comm, sendbuf, recvbuf, False, False)


def _Alltoall(comm: Comm, sendbuf: Any, recvbuf: Any, vector: bool, blocking: bool = True,
              typed: bool = False) -> Any:
    vr = current()
    call = ("Alltoallw" if typed else "Alltoallv" if vector else "Alltoall") if blocking \
        else "Ialltoall"
    size = comm.size_of(vr)
    if typed:
        try:
            rinfo = parse_bufspecw(recvbuf, size)
            sinfo = rinfo if sendbuf is IN_PLACE else parse_bufspecw(sendbuf, size)
        except (TypeError, ValueError) as exc:
            raise MPIUsageError(f"rank {vr.rank}: {call}: bad buffer: {exc}") from None
    else:
        rinfo = parse_vector_buffer(vr, recvbuf, size, call)
        sinfo = rinfo if sendbuf is IN_PLACE else parse_vector_buffer(vr, sendbuf, size, call)
    value = None
    if sinfo.mem is not None:
        value = []
        for r in range(size):
            off, n = sinfo.block(r)
            value.append(bytes(sinfo.mem[off:off + n]))
    inst, me, req = _go(comm, vr, "alltoall", ALL, -1, sinfo.nbytes, value,
                             () if vector else (("nbytes", sinfo.nbytes),),
                             cost_bytes=lambda i, r: max(i.nbytes), blocking=blocking)

    def post() -> None:   # block r of the receive buffer is rank r's block for me
        _place_blocks(rinfo, [None if v is None else v[me] for v in inst.values])
    if not blocking:
        return _nonblocking(comm, vr, inst, req, post)
    post()
    return _done(comm, vr, inst)


def Alltoall(comm: Comm, sendbuf: Any, recvbuf: Any) -> None:
    """Each rank sends block j of its buffer to rank j."""
    _Alltoall(comm, sendbuf, recvbuf, False)


def Alltoallv(comm: Comm, sendbuf: Any, recvbuf: Any) -> None:
    """All-to-all with blocks of varying sizes."""
    _Alltoall(comm, sendbuf, recvbuf, True)


def Alltoallw(comm: Comm, sendbuf: Any, recvbuf: Any) -> None:
    """All-to-all with per-block counts, byte displacements and datatypes."""
    _Alltoall(comm, sendbuf, recvbuf, True, typed=True)


def Ialltoall(comm: Comm, sendbuf: Any, recvbuf: Any) -> Request:
    """Nonblocking all-to-all."""
    return _Alltoall(comm, sendbuf, recvbuf, False, False)
