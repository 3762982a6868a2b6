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

from ..engine.collective_rules import ALL, FANIN, FANOUT, CollInstance, arrive, finalize
from ..engine.rank import VirtualRank, current
from ..errors import MPIUsageError
from .buffers import BufInfo, BufInfoV, parse_bufspec, parse_bufspecv, parse_bufspecw
from .ops import SUM, Op, as_op, fold
from .requests import Request

if TYPE_CHECKING:
    pass

__all__ = ["CollectiveMethods"]

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


class CollectiveMethods:
    """Mixin of :class:`bsim.mpi.comm.Comm`: the collective operations."""

    __slots__ = ()

    # -- plumbing -----------------------------------------------------------
    def _buf(self, vr: VirtualRank, spec: Any, call: str) -> BufInfo:
        try:
            return parse_bufspec(spec)
        except (TypeError, ValueError) as exc:
            raise MPIUsageError(f"rank {vr.rank}: {call}: bad buffer: {exc}") from None

    def _bufv(self, vr: VirtualRank, spec: Any, n: int, call: str) -> BufInfoV:
        try:
            return parse_bufspecv(spec, n)
        except (TypeError, ValueError) as exc:
            raise MPIUsageError(f"rank {vr.rank}: {call}: bad vector buffer: {exc}") from None

    def _root(self, vr: VirtualRank, root: Any, call: str) -> int:
        size = self.size_of(vr)  # type: ignore[attr-defined]
        if not isinstance(root, (int, np.integer)) or not 0 <= root < size:
            raise MPIUsageError(f"rank {vr.rank}: {call}(root={root!r}): invalid root for "
                                f"{self!r} (valid: 0..{size - 1})")
        return int(root)

    def _go(self, vr: VirtualRank, op: str, kind: int, root: int, nbytes: float, value: Any,
            extra: tuple[Any, ...] = (), cost_bytes: Any = None,
            blocking: bool = True) -> tuple[CollInstance, int, Request | None]:
        inst, me, req = arrive(vr, self, op, kind, root, nbytes, value, extra,  # type: ignore[arg-type]
                               blocking, cost_bytes)
        if blocking and req is not None:
            vr.settle([req], op)
        return inst, me, req

    def _done(self, vr: VirtualRank, inst: CollInstance, result: Any = None) -> Any:
        finalize(vr, self, inst)  # type: ignore[arg-type]
        return result

    def _nonblocking(self, vr: VirtualRank, inst: CollInstance, req: Request | None,
                     post: Any) -> Request:
        """Wrap a nonblocking collective's request; *post()* runs at completion."""
        assert req is not None
        req.post = lambda: self._done(vr, inst, post())
        return req

    # -- barrier and broadcast ----------------------------------------------
    def barrier(self) -> None:
        """Barrier synchronization."""
        vr = current()
        inst, _, _ = self._go(vr, "barrier", ALL, -1, 0, None)
        self._done(vr, inst)

    def Barrier(self) -> None:
        """Barrier synchronization."""
        self.barrier()

    def Ibarrier(self) -> Request:
        """Nonblocking barrier."""
        vr = current()
        inst, _, req = self._go(vr, "barrier", ALL, -1, 0, None, blocking=False)
        return self._nonblocking(vr, inst, req, lambda: None)

    def bcast(self, obj: Any = None, root: int = 0) -> Any:
        """Broadcast a Python object from *root*."""
        vr = current()
        root = self._root(vr, root, "bcast")
        me = self.rank_of(vr)  # type: ignore[attr-defined]
        payload = _dumps(obj) if me == root else None
        inst, me, _ = self._go(vr, "bcast", FANOUT, root, len(payload or b""), payload)
        return self._done(vr, inst, obj if me == root else pickle.loads(inst.values[root]))

    def _bcast_args(self, vr: VirtualRank, buf: Any, root: int, call: str) -> tuple[Any, ...]:
        root = self._root(vr, root, call)
        info = self._buf(vr, buf, call)
        raw = bytes(info.mem) if info.mem is not None and self.rank_of(vr) == root else None  # type: ignore[attr-defined]
        return root, info, raw

    def Bcast(self, buf: Any, root: int = 0) -> None:
        """Broadcast a buffer from *root*."""
        vr = current()
        root, info, raw = self._bcast_args(vr, buf, root, "Bcast")
        inst, me, _ = self._go(vr, "bcast", FANOUT, root, info.nbytes, raw,
                               (("nbytes", info.nbytes),))
        if me != root:
            _write(info, inst.values[root])
        self._done(vr, inst)

    def Ibcast(self, buf: Any, root: int = 0) -> Request:
        """Nonblocking broadcast."""
        vr = current()
        root, info, raw = self._bcast_args(vr, buf, root, "Ibcast")
        inst, me, req = self._go(vr, "bcast", FANOUT, root, info.nbytes, raw,
                                 (("nbytes", info.nbytes),), blocking=False)
        return self._nonblocking(vr, inst, req,
                                 lambda: _write(info, inst.values[root]) if me != root else None)

    # -- reductions --------------------------------------------------------
    def reduce(self, sendobj: Any, op: Any = SUM, root: int = 0) -> Any:
        """Reduce Python objects to *root*."""
        vr = current()
        root = self._root(vr, root, "reduce")
        fn = as_op(op)
        payload = _dumps(sendobj)
        inst, me, _ = self._go(vr, "reduce", FANIN, root, len(payload), payload,
                               (("op", fn.name),))
        result = fold(fn, [pickle.loads(v) for v in inst.values]) if me == root else None
        return self._done(vr, inst, result)

    def allreduce(self, sendobj: Any, op: Any = SUM) -> Any:
        """Reduce Python objects to all ranks."""
        vr = current()
        fn = as_op(op)
        payload = _dumps(sendobj)
        inst, _, _ = self._go(vr, "allreduce", ALL, -1, len(payload), payload,
                              (("op", fn.name),), cost_bytes=lambda i, r: max(i.nbytes))
        if inst.result is None:
            inst.result = _dumps(fold(fn, [pickle.loads(v) for v in inst.values]))
        return self._done(vr, inst, pickle.loads(inst.result))

    def _scan_obj(self, sendobj: Any, op: Any, exclusive: bool) -> Any:
        vr = current()
        fn = as_op(op)
        name = "exscan" if exclusive else "scan"
        payload = _dumps(sendobj)
        inst, me, _ = self._go(vr, name, ALL, -1, len(payload), payload, (("op", fn.name),),
                               cost_bytes=lambda i, r: max(i.nbytes))
        upto = me if exclusive else me + 1
        result = fold(fn, [pickle.loads(v) for v in inst.values[:upto]]) if upto else None
        return self._done(vr, inst, result)

    def scan(self, sendobj: Any, op: Any = SUM) -> Any:
        """Inclusive prefix reduction of Python objects."""
        return self._scan_obj(sendobj, op, False)

    def exscan(self, sendobj: Any, op: Any = SUM) -> Any:
        """Exclusive prefix reduction of Python objects (None on rank 0)."""
        return self._scan_obj(sendobj, op, True)

    def _red_args(self, vr: VirtualRank, sendbuf: Any, recvbuf: Any, call: str
                  ) -> tuple[BufInfo | None, bytes | None, int]:
        from ..MPI import IN_PLACE
        rinfo = self._buf(vr, recvbuf, call) if recvbuf is not None else None
        if sendbuf is IN_PLACE:
            if rinfo is None:
                raise MPIUsageError(f"rank {vr.rank}: {call}: IN_PLACE needs a receive buffer")
            sinfo = rinfo
        else:
            sinfo = self._buf(vr, sendbuf, call)
        raw = bytes(sinfo.mem) if sinfo.mem is not None else None
        return rinfo, (raw, sinfo), sinfo.nbytes  # type: ignore[return-value]

    @staticmethod
    def _reduce_raw(fn: Op, values: list[Any]) -> np.ndarray | None:
        if any(raw is None for raw, _ in values):
            return None   # a placeholder took part: sizes only
        arrays: list[np.ndarray] = [_array(raw, info) for raw, info in values]  # type: ignore[misc]
        # logical ops give bools: cast back to the buffer's type before writing bytes
        return np.asarray(fold(fn, arrays)).astype(arrays[0].dtype, copy=False)

    def _Reduce(self, sendbuf: Any, recvbuf: Any, op: Any, root: int, blocking: bool) -> Any:
        vr = current()
        call = "Reduce" if blocking else "Ireduce"
        root = self._root(vr, root, call)
        fn = as_op(op)
        rinfo, value, nbytes = self._red_args(vr, sendbuf, recvbuf, call)
        inst, me, req = self._go(vr, "reduce", FANIN, root, nbytes, value,
                                 (("op", fn.name), ("nbytes", nbytes)), blocking=blocking)

        def post() -> None:
            if me == root:
                _write(rinfo, self._reduce_raw(fn, inst.values))
        if not blocking:
            return self._nonblocking(vr, inst, req, post)
        post()
        return self._done(vr, inst)

    def Reduce(self, sendbuf: Any, recvbuf: Any, op: Any = SUM, root: int = 0) -> None:
        """Reduce buffers to *root*."""
        self._Reduce(sendbuf, recvbuf, op, root, True)

    def Ireduce(self, sendbuf: Any, recvbuf: Any, op: Any = SUM, root: int = 0) -> Request:
        """Nonblocking reduce."""
        return self._Reduce(sendbuf, recvbuf, op, root, False)

    def _Allreduce(self, sendbuf: Any, recvbuf: Any, op: Any, blocking: bool) -> Any:
        vr = current()
        call = "Allreduce" if blocking else "Iallreduce"
        fn = as_op(op)
        rinfo, value, nbytes = self._red_args(vr, sendbuf, recvbuf, call)
        inst, me, req = self._go(vr, "allreduce", ALL, -1, nbytes, value,
                                 (("op", fn.name), ("nbytes", nbytes)), blocking=blocking)

        def post() -> None:
            if inst.result is None:
                result = self._reduce_raw(fn, inst.values)
                inst.result = _NONE if result is None else result
            if inst.result is not _NONE:
                _write(rinfo, inst.result)
        if not blocking:
            return self._nonblocking(vr, inst, req, post)
        post()
        return self._done(vr, inst)

    def Allreduce(self, sendbuf: Any, recvbuf: Any, op: Any = SUM) -> None:
        """Reduce buffers to all ranks."""
        self._Allreduce(sendbuf, recvbuf, op, True)

    def Iallreduce(self, sendbuf: Any, recvbuf: Any, op: Any = SUM) -> Request:
        """Nonblocking allreduce."""
        return self._Allreduce(sendbuf, recvbuf, op, False)

    def _Scan(self, sendbuf: Any, recvbuf: Any, op: Any, exclusive: bool) -> None:
        vr = current()
        call = "Exscan" if exclusive else "Scan"
        fn = as_op(op)
        rinfo, value, nbytes = self._red_args(vr, sendbuf, recvbuf, call)
        inst, me, _ = self._go(vr, call.lower(), ALL, -1, nbytes, value,
                               (("op", fn.name), ("nbytes", nbytes)))
        upto = me if exclusive else me + 1
        if upto:
            _write(rinfo, self._reduce_raw(fn, inst.values[:upto]))
        self._done(vr, inst)

    def Scan(self, sendbuf: Any, recvbuf: Any, op: Any = SUM) -> None:
        """Inclusive prefix reduction of buffers."""
        self._Scan(sendbuf, recvbuf, op, False)

    def Exscan(self, sendbuf: Any, recvbuf: Any, op: Any = SUM) -> None:
        """Exclusive prefix reduction (rank 0's receive buffer is untouched)."""
        self._Scan(sendbuf, recvbuf, op, True)

    def Reduce_scatter_block(self, sendbuf: Any, recvbuf: Any, op: Any = SUM) -> None:
        """Reduce, then scatter equal blocks of the result."""
        vr = current()
        fn = as_op(op)
        rinfo, value, nbytes = self._red_args(vr, sendbuf, recvbuf, "Reduce_scatter_block")
        size = self.size_of(vr)  # type: ignore[attr-defined]
        inst, me, _ = self._go(vr, "reduce_scatter", ALL, -1, nbytes, value,
                               (("op", fn.name), ("nbytes", nbytes)))
        if inst.result is None:
            result = self._reduce_raw(fn, inst.values)
            inst.result = _NONE if result is None else result
        if inst.result is not _NONE and rinfo is not None:
            block = len(inst.result) // size
            _write(rinfo, inst.result[me * block:(me + 1) * block])
        self._done(vr, inst)

    def Reduce_scatter(self, sendbuf: Any, recvbuf: Any, recvcounts: Any = None,
                       op: Any = SUM) -> None:
        """Reduce, then scatter blocks of ``recvcounts`` elements."""
        vr = current()
        fn = as_op(op)
        size = self.size_of(vr)  # type: ignore[attr-defined]
        rinfo, value, nbytes = self._red_args(vr, sendbuf, recvbuf, "Reduce_scatter")
        inst, me, _ = self._go(vr, "reduce_scatter", ALL, -1, nbytes, value,
                               (("op", fn.name), ("nbytes", nbytes)))
        if inst.result is None:
            result = self._reduce_raw(fn, inst.values)
            inst.result = _NONE if result is None else result
        if inst.result is not _NONE and rinfo is not None:
            counts = list(recvcounts) if recvcounts is not None else \
                [len(inst.result) // size] * size
            start = sum(counts[:me])
            _write(rinfo, inst.result[start:start + counts[me]])
        self._done(vr, inst)

    # -- gather / scatter ----------------------------------------------------
    def gather(self, sendobj: Any, root: int = 0) -> list[Any] | None:
        """Gather Python objects to *root*."""
        vr = current()
        root = self._root(vr, root, "gather")
        payload = _dumps(sendobj)
        size = self.size_of(vr)  # type: ignore[attr-defined]
        inst, me, _ = self._go(vr, "gather", FANIN, root, len(payload) * size, payload,
                               cost_bytes=lambda i, r: sum(i.nbytes) / size
                               if r == root else i.nbytes[r])
        result = [pickle.loads(v) for v in inst.values] if me == root else None
        return self._done(vr, inst, result)

    def scatter(self, sendobj: Any = None, root: int = 0) -> Any:
        """Scatter a list of Python objects from *root*."""
        vr = current()
        root = self._root(vr, root, "scatter")
        size = self.size_of(vr)  # type: ignore[attr-defined]
        me = self.rank_of(vr)  # type: ignore[attr-defined]
        payload = None
        nbytes = 0
        if me == root:
            if sendobj is None or len(sendobj) != size:
                raise MPIUsageError(f"rank {vr.rank}: scatter(root={root}): root must pass a "
                                    f"sequence of {size} objects")
            payload = [_dumps(x) for x in sendobj]
            nbytes = sum(map(len, payload))
        inst, me, _ = self._go(vr, "scatter", FANOUT, root, nbytes, payload)
        return self._done(vr, inst, pickle.loads(inst.values[root][me]))

    def allgather(self, sendobj: Any) -> list[Any]:
        """Gather Python objects to all ranks."""
        vr = current()
        payload = _dumps(sendobj)
        inst, _, _ = self._go(vr, "allgather", ALL, -1, len(payload), payload,
                              cost_bytes=lambda i, r: sum(i.nbytes))
        return self._done(vr, inst, [pickle.loads(v) for v in inst.values])

    def alltoall(self, sendobj: Any) -> list[Any]:
        """Each rank sends item j of its sequence to rank j."""
        vr = current()
        size = self.size_of(vr)  # type: ignore[attr-defined]
        if sendobj is None or len(sendobj) != size:
            raise MPIUsageError(f"rank {vr.rank}: alltoall: pass a sequence of {size} objects")
        payload = [_dumps(x) for x in sendobj]
        inst, me, _ = self._go(vr, "alltoall", ALL, -1, sum(map(len, payload)), payload,
                               cost_bytes=lambda i, r: max(i.nbytes))
        return self._done(vr, inst, [pickle.loads(v[me]) for v in inst.values])

    def _Gather(self, sendbuf: Any, recvbuf: Any, root: int, vector: bool,
                blocking: bool = True) -> Any:
        from ..MPI import IN_PLACE
        vr = current()
        call = ("Gatherv" if vector else "Gather") if blocking else "Igather"
        root = self._root(vr, root, call)
        size = self.size_of(vr)  # type: ignore[attr-defined]
        me = self.rank_of(vr)  # type: ignore[attr-defined]
        rinfo = self._bufv(vr, recvbuf, size, call) if me == root and recvbuf is not None \
            else None
        if sendbuf is IN_PLACE:
            if rinfo is None:
                raise MPIUsageError(f"rank {vr.rank}: {call}: IN_PLACE only at the root")
            off, n = rinfo.block(me)
            raw = bytes(rinfo.mem[off:off + n]) if rinfo.mem is not None else None
            nb = n
        else:
            sinfo = self._buf(vr, sendbuf, call)
            raw, nb = (bytes(sinfo.mem) if sinfo.mem is not None else None), sinfo.nbytes
        total = rinfo.nbytes if rinfo is not None else nb * size
        inst, me, req = self._go(vr, "gather", FANIN, root, total, raw,
                                 () if vector else (("nbytes", nb),), blocking=blocking)

        def post() -> None:
            if rinfo is not None:
                _place_blocks(rinfo, inst.values)
        if not blocking:
            return self._nonblocking(vr, inst, req, post)
        post()
        return self._done(vr, inst)

    def Gather(self, sendbuf: Any, recvbuf: Any, root: int = 0) -> None:
        """Gather buffers to *root*."""
        self._Gather(sendbuf, recvbuf, root, False)

    def Gatherv(self, sendbuf: Any, recvbuf: Any, root: int = 0) -> None:
        """Gather buffers of varying sizes to *root*."""
        self._Gather(sendbuf, recvbuf, root, True)

    def Igather(self, sendbuf: Any, recvbuf: Any, root: int = 0) -> Request:
        """Nonblocking gather."""
        return self._Gather(sendbuf, recvbuf, root, False, False)

    def _Scatter(self, sendbuf: Any, recvbuf: Any, root: int, vector: bool) -> None:
        from ..MPI import IN_PLACE
        vr = current()
        call = "Scatterv" if vector else "Scatter"
        root = self._root(vr, root, call)
        size = self.size_of(vr)  # type: ignore[attr-defined]
        me = self.rank_of(vr)  # type: ignore[attr-defined]
        sinfo = self._bufv(vr, sendbuf, size, call) if me == root else None
        rinfo = None if recvbuf is IN_PLACE else self._buf(vr, recvbuf, call)
        value = None
        if sinfo is not None and sinfo.mem is not None:
            value = []
            for r in range(size):
                off, n = sinfo.block(r)
                value.append(bytes(sinfo.mem[off:off + n]))
        nb = sinfo.nbytes if sinfo is not None else (rinfo.nbytes * size if rinfo else 0)
        inst, me, _ = self._go(vr, "scatter", FANOUT, root, nb, value)
        if inst.values[root] is not None and rinfo is not None:
            _write(rinfo, inst.values[root][me][:rinfo.nbytes])
        self._done(vr, inst)

    def Scatter(self, sendbuf: Any, recvbuf: Any, root: int = 0) -> None:
        """Scatter equal blocks from *root*."""
        self._Scatter(sendbuf, recvbuf, root, False)

    def Scatterv(self, sendbuf: Any, recvbuf: Any, root: int = 0) -> None:
        """Scatter blocks of varying sizes from *root*."""
        self._Scatter(sendbuf, recvbuf, root, True)

    def _Allgather(self, sendbuf: Any, recvbuf: Any, vector: bool,
                   blocking: bool = True) -> Any:
        from ..MPI import IN_PLACE
        vr = current()
        call = ("Allgatherv" if vector else "Allgather") if blocking else "Iallgather"
        size = self.size_of(vr)  # type: ignore[attr-defined]
        me = self.rank_of(vr)  # type: ignore[attr-defined]
        rinfo = self._bufv(vr, recvbuf, size, call)
        if sendbuf is IN_PLACE:
            off, n = rinfo.block(me)
            raw = bytes(rinfo.mem[off:off + n]) if rinfo.mem is not None else None
            nb = n
        else:
            sinfo = self._buf(vr, sendbuf, call)
            raw, nb = (bytes(sinfo.mem) if sinfo.mem is not None else None), sinfo.nbytes
        inst, me, req = self._go(vr, "allgather", ALL, -1, rinfo.nbytes, raw,
                                 () if vector else (("nbytes", nb),),
                                 cost_bytes=lambda i, r: max(i.nbytes), blocking=blocking)

        def post() -> None:
            _place_blocks(rinfo, inst.values)
        if not blocking:
            return self._nonblocking(vr, inst, req, post)
        post()
        return self._done(vr, inst)

    def Allgather(self, sendbuf: Any, recvbuf: Any) -> None:
        """Gather equal blocks to all ranks."""
        self._Allgather(sendbuf, recvbuf, False)

    def Allgatherv(self, sendbuf: Any, recvbuf: Any) -> None:
        """Gather blocks of varying sizes to all ranks."""
        self._Allgather(sendbuf, recvbuf, True)

    def Iallgather(self, sendbuf: Any, recvbuf: Any) -> Request:
        """Nonblocking allgather."""
        return self._Allgather(sendbuf, recvbuf, False, False)

    def _Alltoall(self, sendbuf: Any, recvbuf: Any, vector: bool, blocking: bool = True,
                  typed: bool = False) -> Any:
        from ..MPI import IN_PLACE
        vr = current()
        call = ("Alltoallw" if typed else "Alltoallv" if vector else "Alltoall") if blocking \
            else "Ialltoall"
        size = self.size_of(vr)  # type: ignore[attr-defined]
        if typed:
            try:
                rinfo = parse_bufspecw(recvbuf, size)
                sinfo = rinfo if sendbuf is IN_PLACE else parse_bufspecw(sendbuf, size)
            except (TypeError, ValueError) as exc:
                raise MPIUsageError(f"rank {vr.rank}: {call}: bad buffer: {exc}") from None
        else:
            rinfo = self._bufv(vr, recvbuf, size, call)
            sinfo = rinfo if sendbuf is IN_PLACE else self._bufv(vr, sendbuf, size, call)
        value = None
        if sinfo.mem is not None:
            value = []
            for r in range(size):
                off, n = sinfo.block(r)
                value.append(bytes(sinfo.mem[off:off + n]))
        inst, me, req = self._go(vr, "alltoall", ALL, -1, sinfo.nbytes, value,
                                 () if vector else (("nbytes", sinfo.nbytes),),
                                 cost_bytes=lambda i, r: max(i.nbytes), blocking=blocking)

        def post() -> None:   # block r of the receive buffer is rank r's block for me
            _place_blocks(rinfo, [None if v is None else v[me] for v in inst.values])
        if not blocking:
            return self._nonblocking(vr, inst, req, post)
        post()
        return self._done(vr, inst)

    def Alltoall(self, sendbuf: Any, recvbuf: Any) -> None:
        """Each rank sends block j of its buffer to rank j."""
        self._Alltoall(sendbuf, recvbuf, False)

    def Alltoallv(self, sendbuf: Any, recvbuf: Any) -> None:
        """All-to-all with blocks of varying sizes."""
        self._Alltoall(sendbuf, recvbuf, True)

    def Alltoallw(self, sendbuf: Any, recvbuf: Any) -> None:
        """All-to-all with per-block counts, byte displacements and datatypes."""
        self._Alltoall(sendbuf, recvbuf, True, typed=True)

    def Ialltoall(self, sendbuf: Any, recvbuf: Any) -> Request:
        """Nonblocking all-to-all."""
        return self._Alltoall(sendbuf, recvbuf, False, False)
