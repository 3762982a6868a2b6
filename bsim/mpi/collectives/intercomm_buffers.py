"""Buffer collectives on intercommunicators: ``Bcast`` ... ``Alltoallw``, their ``I`` and
``_init`` forms (MPI 4.1, Sec. 6.2.2; semantics in :mod:`bsim.mpi.collectives.intercomm`).

Built from the same pieces as the object forms, with the timing rules stated there
(``docs/collectives.md``, "Intercommunicators"); message sizes are the buffers' bytes.
Real buffers get the data; placeholders (``bsim.buffer``) move sizes only
(:class:`~bsim.mpi.collectives.intercomm.SizeOnly` blocks, priced on their size).

Sizes: in ``Gather``, ``Scatter``, ``Allgather``, ``Alltoall`` and their v and w forms,
the block remote rank r sends must fill the receive block it lands in exactly, as MPI
requires of matching type signatures; otherwise the call fails with ``ERR_TRUNCATE``
(:mod:`bsim.mpi.collectives.block_checks`: more bytes would be truncated, fewer priced as if the
program had sent less).  Only the receiver knows its blocks, so it checks what it
receives as it places it: the root its |R| blocks, each rank its own block of a
scatter, each rank its |R| messages of an alltoall and, in an allgather, each rank
every block it writes (local rank 0 alone checks every block of a placeholder, which
moves nothing: one block elsewhere, so the check costs O(|R|) once per group).

A nonblocking form (``Ibcast``, ...) runs the operation at its call, charging its
cost there, and returns a complete request (as ``Idup`` does); a persistent form
(``Bcast_init``, ...) runs it at each ``Start``.  So a program that overlaps
computation with a nonblocking intercommunicator collective is charged as if it
did not overlap them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ...constants import PROC_NULL, ROOT
from ...engine.rank import VirtualRank, current
from ...errors import MPIUsageError
from ..data.buffers import parse_buffer
from ..data.vector_buffers import BufInfoV, parse_bufspecw, parse_vector_buffer
from .block_checks import check_block, check_disjoint
from .calls import same_shape, write_into
from .intercomm import (
    INTER_SHORT,
    SSEND_MIN,
    SizeOnly,
    alltoall_raw,
    done_request,
    exchange,
    local_bcast,
    local_gather,
    persistent,
    recv,
    recv_from,
    root_role,
    send,
    send_to,
)
from .ops import SUM, as_op, check_op_type, fold

if TYPE_CHECKING:
    from ..comms.comm import Intercomm

__all__ = ["METHODS", "Bcast", "Gather", "Gatherv", "Scatter", "Scatterv", "Allgather",
           "Allgatherv", "Alltoall", "Alltoallv", "Alltoallw", "Reduce", "Allreduce",
           "Reduce_scatter_block", "Reduce_scatter", "Barrier"]


def _raw(info: Any) -> bytes | None:
    return bytes(info.mem) if info.mem is not None else None


def _block(info: Any) -> bytes | SizeOnly:
    """A whole buffer as one block: its bytes, or its size for a placeholder."""
    return bytes(info.mem) if info.mem is not None else SizeOnly(info.nbytes)


def _blocks(info: BufInfoV, n: int) -> list[bytes | SizeOnly]:
    """The *n* blocks of a vector buffer: their bytes, or their sizes for a placeholder."""
    mem = info.mem
    if mem is None and info.counts is None:   # equal blocks: one size for all
        return [SizeOnly(info.block(0)[1])] * n
    out: list[bytes | SizeOnly] = []
    for r in range(n):
        off, size = info.block(r)
        out.append(SizeOnly(size) if mem is None else bytes(mem[off:off + size]))
    return out


def _nbytes(block: bytes | SizeOnly) -> int:
    return block.nbytes if isinstance(block, SizeOnly) else len(block)


def _place(vr: VirtualRank, call: str, rinfo: BufInfoV, got: list[bytes | SizeOnly]) -> None:
    """Write remote rank r's block ``got[r]`` into block r of *rinfo*, after checking that
    it fills that block exactly (:func:`~bsim.mpi.collectives.block_checks.check_block`)."""
    mem = rinfo.mem
    for r, block in enumerate(got):
        off, n = rinfo.block(r)
        if isinstance(block, SizeOnly):
            check_block(vr, call, block.nbytes, n, r)
        else:
            check_block(vr, call, len(block), n, r)
            if mem is not None:
                mem[off:off + n] = block


def Barrier(ic: Intercomm) -> None:
    """Barrier across both groups."""
    ic.barrier()


def Bcast(ic: Intercomm, buf: Any, root: int = 0) -> None:
    """Broadcast the root's buffer to every rank of the other group."""
    vr = current()
    root = root_role(ic, vr, root, "Bcast")
    if root == PROC_NULL:
        return
    info = parse_buffer(vr, buf, "Bcast")
    if root == ROOT:
        send_to(vr, ic, 0, "bcast", info.nbytes, _raw(info), "Bcast")
        return
    got = recv_from(vr, ic, root, "bcast", "Bcast") if ic.rank_of(vr) == 0 else None
    write_into(info, local_bcast(vr, ic, got, info.nbytes, sized=True))


def _v_form(call: str) -> bool:
    """Whether *call* is a v form, under any of its names (``Gatherv``, ``Igatherv``,
    ``Gatherv_init``): MPICH runs those linearly at every size."""
    return call.removesuffix("_init").endswith("v")


def _gather(call: str, ic: Intercomm, sendbuf: Any, recvbuf: Any, root: int = 0) -> None:
    """MPICH's intercommunicator gather: below :data:`INTER_SHORT` bytes in all, a local
    gather to the remote group's rank 0, which sends the whole to the root
    (``local_gather_remote_send``); else, and for ``Gatherv`` always, linear: each
    remote rank sends its block to the root, which receives them in rank order (one
    after the other for ``Gather``; all posted, then waited for, for ``Gatherv``)."""
    vr = current()
    root = root_role(ic, vr, root, call)
    if root == PROC_NULL:
        return
    vform = _v_form(call)
    if root == ROOT:   # checks each remote rank's block as it places it: O(|R|)
        rsize = ic.peer_size(vr)
        rinfo = parse_vector_buffer(vr, recvbuf, rsize, call)
        check_disjoint(vr, call, rinfo, rsize)
        if not vform and rinfo.nbytes < INTER_SHORT:
            _place(vr, call, rinfo, recv_from(vr, ic, 0, "gather", call))
            return
        ranks = [r for r in range(rsize) if not vform or rinfo.block(r)[1]]
        got: list[bytes | SizeOnly] = [b""] * rsize
        if vform:
            reqs = [recv(vr, ic, r, "gather", call) for r in ranks]
            vr.settle(reqs, call)
            for r, req in zip(ranks, reqs, strict=True):
                got[r] = req.payload
        else:
            for r in ranks:
                got[r] = recv_from(vr, ic, r, "gather", call)
        _place(vr, call, rinfo, got)
        return
    sinfo = parse_buffer(vr, sendbuf, call)
    if vform or sinfo.nbytes * ic.size_of(vr) >= INTER_SHORT:
        if sinfo.nbytes or not vform:
            vr.settle([send(vr, ic, root, "gather", sinfo.nbytes, _block(sinfo), call,
                            vform and ic.size_of(vr) >= SSEND_MIN)], call)
        return
    values = local_gather(vr, ic, _block(sinfo), sinfo.nbytes)
    if values is not None:
        send_to(vr, ic, root, "gather", sum(map(_nbytes, values)), values, call)


def Gather(ic: Intercomm, sendbuf: Any, recvbuf: Any, root: int = 0) -> None:
    """Gather the other group's buffers to the root."""
    _gather("Gather", ic, sendbuf, recvbuf, root)


def Gatherv(ic: Intercomm, sendbuf: Any, recvbuf: Any, root: int = 0) -> None:
    """Gather the other group's buffers of varying sizes to the root."""
    _gather("Gatherv", ic, sendbuf, recvbuf, root)


def _scatter(call: str, ic: Intercomm, sendbuf: Any, recvbuf: Any, root: int = 0) -> None:
    """MPICH's intercommunicator scatter: below :data:`INTER_SHORT` bytes in all, the root
    sends the whole to the remote group's rank 0, which scatters it locally
    (``remote_send_local_scatter``); else, and for ``Scatterv`` always, linear: the
    root sends each remote rank its block (one send after the other for ``Scatter``;
    all posted, then waited for, for ``Scatterv``)."""
    vr = current()
    root = root_role(ic, vr, root, call)
    if root == PROC_NULL:
        return
    vform = _v_form(call)
    if root == ROOT:
        rsize = ic.peer_size(vr)
        sinfo = parse_vector_buffer(vr, sendbuf, rsize, call)
        blocks = _blocks(sinfo, rsize)
        if not vform and sinfo.nbytes < INTER_SHORT:
            send_to(vr, ic, 0, "scatter", sinfo.nbytes, blocks, call)
        elif vform:
            vr.settle([send(vr, ic, r, "scatter", _nbytes(b), b, call)
                       for r, b in enumerate(blocks) if _nbytes(b)], call)
        else:
            for r, b in enumerate(blocks):
                send_to(vr, ic, r, "scatter", _nbytes(b), b, call)
        return
    rinfo = parse_buffer(vr, recvbuf, call)
    if vform or rinfo.nbytes * ic.size_of(vr) >= INTER_SHORT:
        if rinfo.nbytes or not vform:
            mine = recv_from(vr, ic, root, "scatter", call)
            check_block(vr, call, _nbytes(mine), rinfo.nbytes, root)
            if not isinstance(mine, SizeOnly):
                write_into(rinfo, mine)
        return
    got = recv_from(vr, ic, root, "scatter", call) if ic.rank_of(vr) == 0 else None
    size = ic.size_of(vr)
    blocks = local_bcast(vr, ic, got, rinfo.nbytes * size, "scatter")
    mine = blocks[ic.rank_of(vr)]   # each member checks its own block
    check_block(vr, call, _nbytes(mine), rinfo.nbytes, root)
    if not isinstance(mine, SizeOnly):
        write_into(rinfo, mine)


def Scatter(ic: Intercomm, sendbuf: Any, recvbuf: Any, root: int = 0) -> None:
    """Scatter the root's buffer in equal blocks over the other group."""
    _scatter("Scatter", ic, sendbuf, recvbuf, root)


def Scatterv(ic: Intercomm, sendbuf: Any, recvbuf: Any, root: int = 0) -> None:
    """Scatter blocks of varying sizes over the other group."""
    _scatter("Scatterv", ic, sendbuf, recvbuf, root)


def _allgather(call: str, ic: Intercomm, sendbuf: Any, recvbuf: Any) -> None:
    vr = current()
    rinfo = parse_vector_buffer(vr, recvbuf, ic.peer_size(vr), call)
    check_disjoint(vr, call, rinfo, ic.peer_size(vr))
    sinfo = parse_buffer(vr, sendbuf, call)
    _, theirs = exchange(ic, vr, _block(sinfo), call, sinfo.nbytes, known=rinfo.nbytes)
    if rinfo.mem is not None or ic.rank_of(vr) == 0:
        _place(vr, call, rinfo, theirs)   # checked as written: O(|R|), as the copy is
    else:   # a placeholder moves nothing: local rank 0 checks every block, the others one
        r = ic.rank_of(vr) % len(theirs)
        check_block(vr, call, _nbytes(theirs[r]), rinfo.block(r)[1], r)


def Allgather(ic: Intercomm, sendbuf: Any, recvbuf: Any) -> None:
    """Every rank gets the other group's buffers."""
    _allgather("Allgather", ic, sendbuf, recvbuf)


def Allgatherv(ic: Intercomm, sendbuf: Any, recvbuf: Any) -> None:
    """Every rank gets the other group's buffers of varying sizes."""
    _allgather("Allgatherv", ic, sendbuf, recvbuf)


def _alltoall(call: str, ic: Intercomm, sendbuf: Any, recvbuf: Any,
              typed: bool = False) -> None:
    vr = current()
    rsize = ic.peer_size(vr)
    if typed:
        try:
            rinfo = parse_bufspecw(recvbuf, rsize)
            sinfo = parse_bufspecw(sendbuf, rsize)
        except (TypeError, ValueError) as exc:
            raise MPIUsageError(f"rank {vr.rank}: {call}: bad buffer: {exc}") from None
    else:
        rinfo = parse_vector_buffer(vr, recvbuf, rsize, call)
        sinfo = parse_vector_buffer(vr, sendbuf, rsize, call)
    check_disjoint(vr, call, rinfo, rsize)
    got = alltoall_raw(vr, ic, _blocks(sinfo, rsize),
                       [sinfo.block(r)[1] for r in range(rsize)], call)
    _place(vr, call, rinfo, got)   # one check per message received


def _alltoallw(call: str, ic: Intercomm, sendbuf: Any, recvbuf: Any) -> None:
    _alltoall(call, ic, sendbuf, recvbuf, typed=True)


def Alltoall(ic: Intercomm, sendbuf: Any, recvbuf: Any) -> None:
    """Block j of each rank's buffer goes to rank j of the other group."""
    _alltoall("Alltoall", ic, sendbuf, recvbuf)


def Alltoallv(ic: Intercomm, sendbuf: Any, recvbuf: Any) -> None:
    """All-to-all between the groups with blocks of varying sizes."""
    _alltoall("Alltoallv", ic, sendbuf, recvbuf)


def Alltoallw(ic: Intercomm, sendbuf: Any, recvbuf: Any) -> None:
    """All-to-all between the groups with per-block datatypes."""
    _alltoallw("Alltoallw", ic, sendbuf, recvbuf)


def _fold(fn: Any, values: list[Any]) -> bytes | None:
    """Reduce the members' ``(raw bytes or None, numpy dtype)`` in rank order."""
    if any(raw is None for raw, _ in values):
        return None   # a placeholder took part: sizes only
    arrays = [np.frombuffer(raw, dtype=dt) for raw, dt in values]
    return np.asarray(fold(fn, arrays)).astype(arrays[0].dtype, copy=False).tobytes()


def _value(vr: VirtualRank, sendbuf: Any, call: str, fn: Any) -> tuple[tuple[Any, Any], int]:
    """The send buffer's bytes and dtype, and its size; *fn* must be defined on its datatype
    (``check_op_type``: MPICH's "Invalid MPI_Op" otherwise)."""
    info = parse_buffer(vr, sendbuf, call)
    check_op_type(fn, info.datatype, call, placeholder=info.mem is None)
    dt = info.datatype.dtype if info.datatype.dtype is not None else np.dtype("u1")
    return (_raw(info), dt), info.nbytes


def Reduce(ic: Intercomm, sendbuf: Any, recvbuf: Any, op: Any = SUM, root: int = 0) -> None:
    """Reduce the other group's buffers (in their rank order) to the root."""
    vr = current()
    root = root_role(ic, vr, root, "Reduce")
    fn = as_op(op)
    if root == PROC_NULL:
        return
    if root == ROOT:
        write_into(parse_buffer(vr, recvbuf, "Reduce"), recv_from(vr, ic, 0, "reduce", "Reduce"))
        return
    value, nbytes = _value(vr, sendbuf, "Reduce", fn)
    values = local_gather(vr, ic, value, nbytes, "reduce", sized=True)
    if values is not None:
        send_to(vr, ic, root, "reduce", nbytes, _fold(fn, values), "Reduce")


def _reduced(ic: Intercomm, vr: VirtualRank, sendbuf: Any, op: Any, call: str,
             count: int = 0) -> tuple[bytes | None, list[Any]]:
    """The reduction of the other group's buffers, and the local members' *count*s."""
    fn = as_op(op)
    value, nbytes = _value(vr, sendbuf, call, fn)

    def combine(vals: list[Any]) -> Any:
        return (_fold(fn, [v for v, _ in vals]), [c for _, c in vals])

    # the counts are bookkeeping: the broadcast is priced on the vector alone
    mine, theirs = exchange(ic, vr, (value, count), call, nbytes, combine, known=nbytes)
    return theirs[0], mine[1]


def Allreduce(ic: Intercomm, sendbuf: Any, recvbuf: Any, op: Any = SUM) -> None:
    """Every rank gets the reduction of the other group's buffers."""
    vr = current()
    rinfo = parse_buffer(vr, recvbuf, "Allreduce")
    write_into(rinfo, _reduced(ic, vr, sendbuf, op, "Allreduce")[0])


def _reduce_scatter(ic: Intercomm, sendbuf: Any, recvbuf: Any, recvcounts: Any, op: Any,
                    call: str) -> None:
    vr = current()
    rinfo = parse_buffer(vr, recvbuf, call)
    if call.endswith("block"):   # as mpi4py: the local group's blocks of the receive count
        same_shape(vr, call, parse_buffer(vr, sendbuf, call), rinfo.datatype,
                   rinfo.count * ic.size_of(vr), "size x receive count")
    elif recvcounts is not None:   # as mpi4py: the local group's counts
        wanted = [int(c) for c in recvcounts]
        same_shape(vr, call, parse_buffer(vr, sendbuf, call), rinfo.datatype, sum(wanted),
                   "sum(counts)")
        me = ic.rank_of(vr)
        if me < len(wanted) and wanted[me] != rinfo.count:
            raise MPIUsageError(f"rank {vr.rank}: {call}: mismatch in receive count "
                                f"{rinfo.count} and counts[{me}] {wanted[me]}")
    result, counts = _reduced(ic, vr, sendbuf, op, call, rinfo.count)
    if result is None:
        return
    me = ic.rank_of(vr)
    item = rinfo.datatype.size or 1
    if call.endswith("block"):
        counts = [rinfo.count] * ic.size_of(vr)
    elif recvcounts is not None:
        counts = list(recvcounts)
    start = sum(counts[:me]) * item
    write_into(rinfo, result[start:start + counts[me] * item])


def Reduce_scatter_block(ic: Intercomm, sendbuf: Any, recvbuf: Any, op: Any = SUM) -> None:
    """The reduction of the other group's buffers, scattered in equal blocks."""
    _reduce_scatter(ic, sendbuf, recvbuf, None, op, "Reduce_scatter_block")


def Reduce_scatter(ic: Intercomm, sendbuf: Any, recvbuf: Any, recvcounts: Any = None,
                   op: Any = SUM) -> None:
    """The reduction of the other group's buffers, scattered in blocks of *recvcounts*."""
    _reduce_scatter(ic, sendbuf, recvbuf, recvcounts, op, "Reduce_scatter")


def _nonblocking(name: str, blocking: Callable[..., None], base: str) -> Callable[..., Any]:
    def call(ic: Any, *args: Any, **kwargs: Any) -> Any:
        blocking(ic, *args, **kwargs)
        return done_request(current(), name)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"``{base}``, run at the call; the request is complete."
    return call


_BLOCKING: dict[str, Callable[..., Any]] = {
    "Barrier": Barrier, "Bcast": Bcast, "Gather": Gather, "Gatherv": Gatherv,
    "Scatter": Scatter, "Scatterv": Scatterv, "Allgather": Allgather,
    "Allgatherv": Allgatherv, "Alltoall": Alltoall, "Alltoallv": Alltoallv,
    "Alltoallw": Alltoallw, "Reduce": Reduce, "Allreduce": Allreduce,
    "Reduce_scatter_block": Reduce_scatter_block, "Reduce_scatter": Reduce_scatter,
}

_NAMED: dict[str, Callable[..., None]] = {
    "Gather": _gather, "Gatherv": _gather, "Scatter": _scatter, "Scatterv": _scatter,
    "Allgather": _allgather, "Allgatherv": _allgather, "Alltoall": _alltoall,
    "Alltoallv": _alltoall, "Alltoallw": _alltoallw,
}
"""The calls whose errors name the form called (``Igatherv``, ``Alltoall_init``): their
implementations take that name first."""


def _run_as(name: str, base: str) -> Callable[..., None]:
    """The blocking call *base*, its errors naming the call *name*."""
    impl = _NAMED.get(base)
    if impl is None:
        return _BLOCKING[base]

    def run(ic: Any, *args: Any, **kwargs: Any) -> None:
        impl(name, ic, *args, **kwargs)
    return run


METHODS: dict[str, Callable[..., Any]] = dict(_BLOCKING)
"""The Intercomm methods of this module, blocking, nonblocking and persistent, by name."""
for _name in _BLOCKING:
    _iname, _init = "I" + _name.lower(), _name + "_init"
    METHODS[_iname] = _nonblocking(_iname, _run_as(_iname, _name), _name)
    METHODS[_init] = persistent(_init, _run_as(_init, _name))
