"""Buffer collectives on intercommunicators: ``Bcast`` ... ``Alltoallw``, their ``I`` and
``_init`` forms (MPI 4.1, Sec. 6.2.2; semantics in :mod:`bsim.mpi.inter_collectives`).

Built from the same pieces as the object forms, with the timing rules stated there
(``docs/collectives.md``, "Intercommunicators"); message sizes are the buffers' bytes.
Real buffers get the data; placeholders (``bsim.buffer``) move sizes only.

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

from ..constants import PROC_NULL, ROOT
from ..engine.rank import VirtualRank, current
from ..errors import MPIUsageError
from .buffers import BufInfoV, parse_buffer, parse_bufspecw, parse_vector_buffer
from .collective_calls import place_blocks, write_into
from .inter_collectives import (
    alltoall_raw,
    done_request,
    exchange,
    local_bcast,
    local_gather,
    persistent,
    recv_from,
    root_role,
    send_to,
)
from .ops import SUM, as_op, fold

if TYPE_CHECKING:
    from .comm import Intercomm

__all__ = ["METHODS", "Bcast", "Gather", "Gatherv", "Scatter", "Scatterv", "Allgather",
           "Allgatherv", "Alltoall", "Alltoallv", "Alltoallw", "Reduce", "Allreduce",
           "Reduce_scatter_block", "Reduce_scatter", "Barrier"]


def _raw(info: Any) -> bytes | None:
    return bytes(info.mem) if info.mem is not None else None


def _blocks(info: BufInfoV, n: int) -> list[bytes | None]:
    if info.mem is None:
        return [None] * n
    out: list[bytes | None] = []
    for r in range(n):
        off, size = info.block(r)
        out.append(bytes(info.mem[off:off + size]))
    return out


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
    write_into(info, local_bcast(vr, ic, got, info.nbytes))


def _gather(ic: Intercomm, sendbuf: Any, recvbuf: Any, root: int, call: str) -> None:
    vr = current()
    root = root_role(ic, vr, root, call)
    if root == PROC_NULL:
        return
    if root == ROOT:
        rinfo = parse_vector_buffer(vr, recvbuf, ic.peer_size(vr), call)
        got = recv_from(vr, ic, 0, "gather", call)
        place_blocks(rinfo, [raw for raw, _ in got])
        return
    sinfo = parse_buffer(vr, sendbuf, call)
    values = local_gather(vr, ic, (_raw(sinfo), sinfo.nbytes), sinfo.nbytes)
    if values is not None:
        send_to(vr, ic, root, "gather", sum(nb for _, nb in values), values, call)


def Gather(ic: Intercomm, sendbuf: Any, recvbuf: Any, root: int = 0) -> None:
    """Gather the other group's buffers to the root."""
    _gather(ic, sendbuf, recvbuf, root, "Gather")


def Gatherv(ic: Intercomm, sendbuf: Any, recvbuf: Any, root: int = 0) -> None:
    """Gather the other group's buffers of varying sizes to the root."""
    _gather(ic, sendbuf, recvbuf, root, "Gatherv")


def _scatter(ic: Intercomm, sendbuf: Any, recvbuf: Any, root: int, call: str) -> None:
    vr = current()
    root = root_role(ic, vr, root, call)
    if root == PROC_NULL:
        return
    if root == ROOT:
        sinfo = parse_vector_buffer(vr, sendbuf, ic.peer_size(vr), call)
        send_to(vr, ic, 0, "scatter", sinfo.nbytes, _blocks(sinfo, ic.peer_size(vr)), call)
        return
    rinfo = parse_buffer(vr, recvbuf, call)
    got = recv_from(vr, ic, root, "scatter", call) if ic.rank_of(vr) == 0 else None
    size = ic.size_of(vr)
    blocks = local_bcast(vr, ic, got, rinfo.nbytes * size, "scatter")
    mine = blocks[ic.rank_of(vr)]
    if mine is not None:
        write_into(rinfo, mine[:rinfo.nbytes])


def Scatter(ic: Intercomm, sendbuf: Any, recvbuf: Any, root: int = 0) -> None:
    """Scatter the root's buffer in equal blocks over the other group."""
    _scatter(ic, sendbuf, recvbuf, root, "Scatter")


def Scatterv(ic: Intercomm, sendbuf: Any, recvbuf: Any, root: int = 0) -> None:
    """Scatter blocks of varying sizes over the other group."""
    _scatter(ic, sendbuf, recvbuf, root, "Scatterv")


def _allgather(ic: Intercomm, sendbuf: Any, recvbuf: Any, call: str) -> None:
    vr = current()
    rinfo = parse_vector_buffer(vr, recvbuf, ic.peer_size(vr), call)
    sinfo = parse_buffer(vr, sendbuf, call)
    _, theirs = exchange(ic, vr, _raw(sinfo), call, sinfo.nbytes)
    place_blocks(rinfo, theirs)


def Allgather(ic: Intercomm, sendbuf: Any, recvbuf: Any) -> None:
    """Every rank gets the other group's buffers."""
    _allgather(ic, sendbuf, recvbuf, "Allgather")


def Allgatherv(ic: Intercomm, sendbuf: Any, recvbuf: Any) -> None:
    """Every rank gets the other group's buffers of varying sizes."""
    _allgather(ic, sendbuf, recvbuf, "Allgatherv")


def _alltoall(ic: Intercomm, sendbuf: Any, recvbuf: Any, call: str) -> None:
    vr = current()
    rsize = ic.peer_size(vr)
    if call == "Alltoallw":
        try:
            rinfo = parse_bufspecw(recvbuf, rsize)
            sinfo = parse_bufspecw(sendbuf, rsize)
        except (TypeError, ValueError) as exc:
            raise MPIUsageError(f"rank {vr.rank}: {call}: bad buffer: {exc}") from None
    else:
        rinfo = parse_vector_buffer(vr, recvbuf, rsize, call)
        sinfo = parse_vector_buffer(vr, sendbuf, rsize, call)
    got = alltoall_raw(vr, ic, _blocks(sinfo, rsize),
                       [sinfo.block(r)[1] for r in range(rsize)], call)
    place_blocks(rinfo, got)


def Alltoall(ic: Intercomm, sendbuf: Any, recvbuf: Any) -> None:
    """Block j of each rank's buffer goes to rank j of the other group."""
    _alltoall(ic, sendbuf, recvbuf, "Alltoall")


def Alltoallv(ic: Intercomm, sendbuf: Any, recvbuf: Any) -> None:
    """All-to-all between the groups with blocks of varying sizes."""
    _alltoall(ic, sendbuf, recvbuf, "Alltoallv")


def Alltoallw(ic: Intercomm, sendbuf: Any, recvbuf: Any) -> None:
    """All-to-all between the groups with per-block datatypes."""
    _alltoall(ic, sendbuf, recvbuf, "Alltoallw")


def _fold(fn: Any, values: list[Any]) -> bytes | None:
    """Reduce the members' ``(raw bytes or None, numpy dtype)`` in rank order."""
    if any(raw is None for raw, _ in values):
        return None   # a placeholder took part: sizes only
    arrays = [np.frombuffer(raw, dtype=dt) for raw, dt in values]
    return np.asarray(fold(fn, arrays)).astype(arrays[0].dtype, copy=False).tobytes()


def _value(vr: VirtualRank, sendbuf: Any, call: str) -> tuple[tuple[Any, Any], int]:
    info = parse_buffer(vr, sendbuf, call)
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
    value, nbytes = _value(vr, sendbuf, "Reduce")
    values = local_gather(vr, ic, value, nbytes, "reduce")
    if values is not None:
        send_to(vr, ic, root, "reduce", nbytes, _fold(fn, values), "Reduce")


def _reduced(ic: Intercomm, vr: VirtualRank, sendbuf: Any, op: Any, call: str,
             count: int = 0) -> tuple[bytes | None, list[Any]]:
    """The reduction of the other group's buffers, and the local members' *count*s."""
    fn = as_op(op)
    value, nbytes = _value(vr, sendbuf, call)

    def combine(vals: list[Any]) -> Any:
        return (_fold(fn, [v for v, _ in vals]), [c for _, c in vals])

    mine, theirs = exchange(ic, vr, (value, count), call, nbytes, combine)
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


def _nonblocking(name: str, blocking: Callable[..., None]) -> Callable[..., Any]:
    def call(ic: Any, *args: Any, **kwargs: Any) -> Any:
        blocking(ic, *args, **kwargs)
        return done_request(current(), name)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"``{blocking.__name__}``, run at the call; the request is complete."
    return call


_BLOCKING: dict[str, Callable[..., Any]] = {
    "Barrier": Barrier, "Bcast": Bcast, "Gather": Gather, "Gatherv": Gatherv,
    "Scatter": Scatter, "Scatterv": Scatterv, "Allgather": Allgather,
    "Allgatherv": Allgatherv, "Alltoall": Alltoall, "Alltoallv": Alltoallv,
    "Alltoallw": Alltoallw, "Reduce": Reduce, "Allreduce": Allreduce,
    "Reduce_scatter_block": Reduce_scatter_block, "Reduce_scatter": Reduce_scatter,
}

METHODS: dict[str, Callable[..., Any]] = dict(_BLOCKING)
"""The Intercomm methods of this module, blocking, nonblocking and persistent, by name."""
for _name, _fn in _BLOCKING.items():
    METHODS["I" + _name.lower()] = _nonblocking("I" + _name.lower(), _fn)
    METHODS[_name + "_init"] = persistent(_name + "_init", _fn)
