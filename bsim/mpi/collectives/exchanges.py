# cython: annotation_typing=False
"""Collectives that move blocks between ranks: gather, scatter, allgather, alltoall (all forms).

mpi4py's names and keywords; the functions are bound as methods of
:class:`bsim.mpi.comms.comm.Comm`.  Cost sizes follow ``netmodels.collective_costs``:
the root's buffer (gather, scatter), one rank's receive buffer (allgather) or
send buffer (alltoall).  Real buffers get the data; placeholders move nothing.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...constants import IN_PLACE
from ...engine.collective_rules import ALL, FANIN, FANOUT, LARGEST
from ...engine.rank import current
from ...errors import MPIUsageError
from ..data.buffers import parse_buffer
from ..data.vector_buffers import parse_bufspecw, parse_vector_buffer
from ..requests.request import Request
from .block_checks import check_block, check_disjoint
from .calls import (
    check_root,
    dumps,
    leave,
    nonblocking_request,
    place_blocks,
    take_part,
    write_into,
)

if TYPE_CHECKING:
    from ..comms.comm import Comm

__all__ = ["gather", "scatter", "allgather", "alltoall", "Gather", "Gatherv", "Igather",
           "Scatter", "Scatterv", "Allgather", "Allgatherv", "Iallgather", "Alltoall",
           "Alltoallv", "Alltoallw", "Ialltoall", "per_rank_objects"]


def gather(comm: Comm, sendobj: Any, root: int = 0) -> list[Any] | None:
    """Gather Python objects to *root*."""
    vr = current()
    root = check_root(comm, vr, root, "gather")
    payload = dumps(sendobj)
    size = comm.size_of(vr)
    # a Gatherv of the pickles (mpi4py's PyMPI_gather), sized P x its own block as the
    # schedules take it: the root pays the formula for the total, a non-root for its own
    # block (it cannot know the others' sizes)
    inst, me, _ = take_part(comm, vr, "gatherv", FANIN, root, len(payload) * size, payload, (),
                            lambda i, r: (sum(i.nbytes) if r == root else i.nbytes[r]) / size)
    result = [pickle.loads(v) for v in inst.values] if me == root else None
    return leave(comm, vr, inst, result)


def per_rank_objects(vr: Any, sendobj: Any, size: int, call: str) -> list[Any]:
    """One object per rank, as mpi4py takes them: a sequence or iterable of *size*
    objects, or None (None for every rank)."""
    if sendobj is None:
        return [None] * size
    try:
        items = list(sendobj)
    except TypeError:
        items = None
    if items is None or len(items) != size:
        raise MPIUsageError(f"rank {vr.rank}: {call}: pass a sequence of {size} objects "
                            f"(or None), got {type(sendobj).__name__}")
    return items


def scatter(comm: Comm, sendobj: Any = None, root: int = 0) -> Any:
    """Scatter a list of Python objects from *root*."""
    vr = current()
    root = check_root(comm, vr, root, "scatter")
    size = comm.size_of(vr)
    me = comm.rank_of(vr)
    payload = None
    counts: list[int] | None = None
    if me == root:
        items = per_rank_objects(vr, sendobj, size, f"scatter(root={root})")
        payload = [dumps(x) for x in items]
        counts = [len(p) for p in payload]
    # as mpi4py (PyMPI_scatter): each rank's pickle length (an MPI_Count, 8 bytes), then a
    # Scatterv of the pickles, sized as Scatterv's (the root's total; P x its own block
    # elsewhere) and priced on the root's total, or under the linear algorithm (MPICH's
    # Scatterv) on each pickle's own size (blocks)
    inst, _, _ = take_part(comm, vr, "scatter", FANOUT, root, 8 * size, counts,
                           (("nbytes", 8 * size),))
    counts = leave(comm, vr, inst, inst.values[root])
    assert counts is not None
    nbytes = sum(counts) if me == root else counts[me] * size
    inst, me, _ = take_part(comm, vr, "scatterv", FANOUT, root, nbytes, payload, (),
                            lambda i, r: i.nbytes[root], True,
                            lambda i: [len(p) for p in i.values[root]])
    return leave(comm, vr, inst, pickle.loads(inst.values[root][me]))


def allgather(comm: Comm, sendobj: Any) -> list[Any]:
    """Gather Python objects to all ranks."""
    vr = current()
    payload = dumps(sendobj)
    size = comm.size_of(vr)
    # as mpi4py (PyMPI_allgather): an Allgather of the pickles' lengths (an MPI_Count, 8
    # bytes each), then an Allgatherv of the pickles, which every rank then sizes on the
    # total (the schedules' allgather size: the whole receive buffer)
    inst, _, _ = take_part(comm, vr, "allgather", ALL, -1, 8 * size, len(payload),
                           (("nbytes", 8),))
    total = leave(comm, vr, inst, sum(inst.values))
    inst, _, _ = take_part(comm, vr, "allgather", ALL, -1, total, payload)
    return leave(comm, vr, inst, [pickle.loads(v) for v in inst.values])


def alltoall(comm: Comm, sendobj: Any) -> list[Any]:
    """Each rank sends item j of its sequence to rank j."""
    vr = current()
    size = comm.size_of(vr)
    payload = [dumps(x) for x in per_rank_objects(vr, sendobj, size, "alltoall")]
    inst, me, _ = take_part(comm, vr, "alltoall", ALL, -1, sum(map(len, payload)), payload, (),
                            LARGEST)
    return leave(comm, vr, inst, [pickle.loads(v[me]) for v in inst.values])


def _name(call: str, blocking: bool) -> str:
    """The MPI call's name: ``Gatherv`` blocking, ``Igatherv`` not."""
    return call if blocking else "I" + call.lower()


def _place_checked(vr: Any, call: str, rinfo: Any, values: list[Any], vector: bool,
                   check_all: bool = True) -> None:
    """Place the members' blocks in *rinfo*; in a v form each value is ``(bytes sent,
    data, ...)`` and, with *check_all*, each size must fill its receive block
    (:func:`check_block`: O(P) here, so an allgatherv checks at one member only)."""
    blocks = values
    if vector:
        # a member not yet arrived has an empty block: an expanded linear Gatherv's root
        # receives only the non-empty blocks and may finish first, as MPICH's does
        if check_all:
            for r, value in enumerate(values):
                if value is not None:
                    check_block(vr, call, value[0], rinfo.block(r)[1], r)
        blocks = [None if value is None else value[1] for value in values]
    place_blocks(rinfo, blocks)


def _Gather(comm: Comm, sendbuf: Any, recvbuf: Any, root: int, vector: bool,
            blocking: bool = True) -> Any:
    vr = current()
    call = _name("Gatherv" if vector else "Gather", blocking)
    root = check_root(comm, vr, root, call)
    size = comm.size_of(vr)
    me = comm.rank_of(vr)
    rinfo = None
    if me == root and recvbuf is not None:
        rinfo = parse_vector_buffer(vr, recvbuf, size, call, not vector)
        if vector:
            check_disjoint(vr, call, rinfo, size)
    if sendbuf is IN_PLACE or (sendbuf is None and rinfo is not None):   # mpi4py: None too
        if rinfo is None:
            raise MPIUsageError(f"rank {vr.rank}: {call}: IN_PLACE only at the root")
        off, n = rinfo.block(me)
        raw = bytes(rinfo.mem[off:off + n]) if rinfo.mem is not None else None
        nb = n
    else:
        sinfo = parse_buffer(vr, sendbuf, call)
        raw, nb = (bytes(sinfo.mem) if sinfo.mem is not None else None), sinfo.nbytes
        if rinfo is not None and not vector:   # the others' sizes equal this one (signature)
            check_block(vr, call, nb, rinfo.block(me)[1])
    # the root pays the formula for its receive buffer; a non-root for the plain op's total
    # (its block x P), or in Gatherv, where it cannot know the others' blocks, for its own.
    # A Gatherv root's value carries its counts: a linear expansion receives only the
    # non-empty blocks (MPICH's gatherv_allcomm_linear.c)
    total = rinfo.nbytes if rinfo is not None else nb * size
    counts = [rinfo.block(r)[1] for r in range(size)] if vector and rinfo is not None \
        else None
    inst, me, req = take_part(comm, vr, "gatherv" if vector else "gather", FANIN, root, total,
                              (nb, raw, counts) if vector else raw,
                              () if vector else (("nbytes", nb),),
                              (lambda i, r: i.nbytes[r] if r == root
                               else i.nbytes[r] / size) if vector else None,
                              blocking, (lambda i: i.values[root][2]) if vector else None)

    def post() -> None:
        if rinfo is not None:
            _place_checked(vr, call, rinfo, inst.values, vector)
    if not blocking:
        return nonblocking_request(comm, vr, inst, req, post)
    post()
    return leave(comm, vr, inst)


def Gather(comm: Comm, sendbuf: Any, recvbuf: Any, root: int = 0) -> None:
    """Gather buffers to *root*."""
    _Gather(comm, sendbuf, recvbuf, root, False)


def Gatherv(comm: Comm, sendbuf: Any, recvbuf: Any, root: int = 0) -> None:
    """Gather buffers of varying sizes to *root*."""
    _Gather(comm, sendbuf, recvbuf, root, True)


def Igather(comm: Comm, sendbuf: Any, recvbuf: Any, root: int = 0) -> Request:
    """Nonblocking gather."""
    return _Gather(comm, sendbuf, recvbuf, root, False, False)


def _Scatter(comm: Comm, sendbuf: Any, recvbuf: Any, root: int, vector: bool,
             blocking: bool = True) -> Any:
    vr = current()
    call = _name("Scatterv" if vector else "Scatter", blocking)
    root = check_root(comm, vr, root, call)
    size = comm.size_of(vr)
    me = comm.rank_of(vr)
    sinfo = parse_vector_buffer(vr, sendbuf, size, call, not vector) if me == root else None
    in_place = recvbuf is IN_PLACE or (recvbuf is None and me == root)   # mpi4py: None too
    rinfo = None if in_place else parse_buffer(vr, recvbuf, call)
    value = None
    if sinfo is not None:   # the root: each block's size, and its bytes unless a placeholder
        sizes = [sinfo.block(r)[1] for r in range(size)]
        data = None
        if sinfo.mem is not None:
            data = [bytes(sinfo.mem[off:off + n]) for off, n in map(sinfo.block, range(size))]
        value = (sizes, data)
    nb = sinfo.nbytes if sinfo is not None else (rinfo.nbytes * size if rinfo else 0)
    # the root's total prices the formula; under the linear algorithm (MPICH's Scatterv)
    # each block is sent and priced as it is (blocks: the root's counts)
    inst, me, req = take_part(comm, vr, "scatterv" if vector else "scatter", FANOUT, root, nb,
                              value, (), lambda i, r: i.nbytes[root], blocking,
                              (lambda i: i.values[root][0]) if vector else None)

    def post() -> None:
        if rinfo is None or inst.values[root] is None:   # or an empty block, done before
            return                                        # the root came (linear, expanded)
        sizes, data = inst.values[root]
        check_block(vr, call, sizes[me], rinfo.nbytes, root)
        if data is not None:
            write_into(rinfo, data[me])
    if not blocking:
        return nonblocking_request(comm, vr, inst, req, post)
    post()
    return leave(comm, vr, inst)


def Scatter(comm: Comm, sendbuf: Any, recvbuf: Any, root: int = 0) -> None:
    """Scatter equal blocks from *root*."""
    _Scatter(comm, sendbuf, recvbuf, root, False)


def Scatterv(comm: Comm, sendbuf: Any, recvbuf: Any, root: int = 0) -> None:
    """Scatter blocks of varying sizes from *root*."""
    _Scatter(comm, sendbuf, recvbuf, root, True)


def _Allgather(comm: Comm, sendbuf: Any, recvbuf: Any, vector: bool,
               blocking: bool = True) -> Any:
    vr = current()
    call = _name("Allgatherv" if vector else "Allgather", blocking)
    ident = comm.coll_identity(vr)   # (rank_of and size_of in one call, for arrive too)
    _, me, size = ident
    rinfo = parse_vector_buffer(vr, recvbuf, size, call, not vector)
    if vector:
        check_disjoint(vr, call, rinfo, size)
    if sendbuf is IN_PLACE or sendbuf is None:   # mpi4py takes None as IN_PLACE
        off, n = rinfo.block(me)
        raw = bytes(rinfo.mem[off:off + n]) if rinfo.mem is not None else None
        nb = n
    else:
        sinfo = parse_buffer(vr, sendbuf, call)
        raw, nb = (bytes(sinfo.mem) if sinfo.mem is not None else None), sinfo.nbytes
        # its own block here (plain form: the others' sizes equal this one, signature);
        # in the v form member 0 checks every block once all have arrived
        check_block(vr, call, nb, rinfo.block(me)[1])
    inst, me, req = take_part(comm, vr, "allgather", ALL, -1, rinfo.nbytes,
                              (nb, raw) if vector else raw, () if vector else (("nbytes", nb),),
                              LARGEST, blocking, None, ident)
    if not blocking:
        return nonblocking_request(comm, vr, inst, req,
                                   _allgather_post(vr, call, rinfo, inst, vector, me == 0))
    _place_checked(vr, call, rinfo, inst.values, vector, me == 0)
    return leave(comm, vr, inst)


def _allgather_post(vr: Any, call: str, rinfo: Any, inst: Any, vector: bool,
                    check_all: bool) -> Callable[[], None]:
    """A nonblocking allgather's post: the members' blocks placed at completion (a closure
    made here, so that the blocking call, compiled, makes none)."""
    def post() -> None:
        _place_checked(vr, call, rinfo, inst.values, vector, check_all)
    return post


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
    call = _name("Alltoallw" if typed else "Alltoallv" if vector else "Alltoall", blocking)
    size = comm.size_of(vr)
    if typed:
        try:
            rinfo = parse_bufspecw(recvbuf, size)
            sinfo = rinfo if sendbuf is IN_PLACE or sendbuf is None \
                else parse_bufspecw(sendbuf, size)
        except (TypeError, ValueError) as exc:
            raise MPIUsageError(f"rank {vr.rank}: {call}: bad buffer: {exc}") from None
    else:
        rinfo = parse_vector_buffer(vr, recvbuf, size, call, not vector)
        sinfo = rinfo if sendbuf is IN_PLACE or sendbuf is None \
            else parse_vector_buffer(vr, sendbuf, size, call, not vector)
        if not vector:   # equal blocks: every rank's block for me has my send block's size
            check_block(vr, call, sinfo.block(0)[1], rinfo.block(0)[1])
    if vector:
        check_disjoint(vr, call, rinfo, size)
    data = None
    if sinfo.mem is not None:
        data = []
        for r in range(size):
            off, n = sinfo.block(r)
            data.append(bytes(sinfo.mem[off:off + n]))
    # v/w forms: each rank's send block sizes travel with it, to check against the receives
    value = ([sinfo.block(r)[1] for r in range(size)], data) if vector else data
    inst, me, req = take_part(comm, vr, "alltoall", ALL, -1, sinfo.nbytes, value,
                              () if vector else (("nbytes", sinfo.nbytes),), LARGEST, blocking)

    def post() -> None:   # block r of the receive buffer is rank r's block for me
        if vector:
            for r, (sizes, _) in enumerate(inst.values):
                expected = rinfo.block(r)[1]
                if sizes[me] != expected:
                    raise MPIUsageError(
                        f"rank {vr.rank}: {call}: rank {r} sends {sizes[me]} bytes to this "
                        f"rank but receive block {r} holds {expected} bytes (send and receive "
                        f"counts must match)")
            blocks = [None if d is None else d[me] for _, d in inst.values]
        else:
            blocks = [None if v is None else v[me] for v in inst.values]
        place_blocks(rinfo, blocks)
    if not blocking:
        return nonblocking_request(comm, vr, inst, req, post)
    post()
    return leave(comm, vr, inst)


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


def Igatherv(comm: Comm, sendbuf: Any, recvbuf: Any, root: int = 0) -> Request:
    """Nonblocking gather of blocks of varying sizes."""
    return _Gather(comm, sendbuf, recvbuf, root, True, False)


def Iscatter(comm: Comm, sendbuf: Any, recvbuf: Any, root: int = 0) -> Request:
    """Nonblocking scatter."""
    return _Scatter(comm, sendbuf, recvbuf, root, False, False)


def Iscatterv(comm: Comm, sendbuf: Any, recvbuf: Any, root: int = 0) -> Request:
    """Nonblocking scatter of blocks of varying sizes."""
    return _Scatter(comm, sendbuf, recvbuf, root, True, False)


def Iallgatherv(comm: Comm, sendbuf: Any, recvbuf: Any) -> Request:
    """Nonblocking allgather of blocks of varying sizes."""
    return _Allgather(comm, sendbuf, recvbuf, True, False)


def Ialltoallv(comm: Comm, sendbuf: Any, recvbuf: Any) -> Request:
    """Nonblocking all-to-all with blocks of varying sizes."""
    return _Alltoall(comm, sendbuf, recvbuf, True, False)


def Ialltoallw(comm: Comm, sendbuf: Any, recvbuf: Any) -> Request:
    """Nonblocking all-to-all with per-block datatypes."""
    return _Alltoall(comm, sendbuf, recvbuf, True, False, typed=True)
