"""The buffer forms of the neighbourhood collectives: ``Neighbor_allgather(v)``,
``Neighbor_alltoall(v, w)``, their nonblocking (``Ineighbor_*``) and persistent
(``Neighbor_*_init``) forms, on every topology (MPI 4.1, Secs. 8.6-8.8).

Each call reads its send blocks (one for every out-neighbour; ``allgather`` sends the
same block to all), exchanges them with :func:`bsim.mpi.topologies.neighbor.post_exchange` and
writes what in-neighbour k sent into receive block k.  Buffer specs are mpi4py's:
BufSpec / BufSpecB (equal blocks), BufSpecV (counts and displacements in elements) and
BufSpecW (counts, byte displacements and a datatype per block; with ``MPI.BOTTOM`` the
displacements are absolute addresses, ``MPI.Get_address``, read and written in place).

Sizes: what in-neighbour k sends must fill receive block k exactly, as MPI requires of
matching type signatures; a message of another size (larger: it would be truncated;
smaller: it would be priced as less than the program means) is refused with
``ERR_TRUNCATE`` (:mod:`bsim.mpi.collectives.block_checks`) by the receiver as it places it, the
only rank that knows both sizes: one check per message received.

Timing rule: as the blocking forms (``neighbor.py``): one point-to-point message per
out-neighbour through the run's network model and protocol, all posted at the call.
A nonblocking call returns one request standing for all of them; waiting on it
charges what waiting on every message would (the ``Waitall`` rule, as
``Isendrecv``'s joined request, ``sendrecv.py``).  A persistent request posts the same
messages at each ``Start`` (send blocks read then), so one start costs exactly what
the nonblocking call made at the start time costs.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...constants import BOTTOM, IN_PLACE
from ...engine.rank import current
from ...errors import MPIUsageError
from ..collectives.block_checks import check_block, check_disjoint
from ..data.buffers import parse_bufspec
from ..data.vector_buffers import BufInfoV, parse_bufspecw
from ..p2p.sendrecv import JoinedRequest, Part, resolve_joined
from ..requests.request import RECV, Prequest, Request, hand_out
from .neighbor import (
    Outgoing,
    Received,
    collect,
    degrees,
    exchange,
    neighbor_allgather,
    neighbor_alltoall,
    post_exchange,
    vector_spec,
)

if TYPE_CHECKING:
    from ...engine.rank import VirtualRank
    from ..comms.comm import Comm

__all__ = ["NeighborCalls", "NeighborRequest", "NeighborPrequest", "blocking",
           "nonblocking", "persistent"]

FORMS = {"allgather": "Neighbor_allgather", "allgatherv": "Neighbor_allgatherv",
         "alltoall": "Neighbor_alltoall", "alltoallv": "Neighbor_alltoallv",
         "alltoallw": "Neighbor_alltoallw"}
"""Each buffer form and its blocking call's name."""


class _Blocks:
    """Blocks of a parsed vector spec: their sizes, and reading and writing them."""

    def __init__(self, info: BufInfoV, n: int, absolute: bool = False) -> None:
        self.info, self.n, self.absolute = info, n, absolute

    def size(self, k: int) -> int:
        return self.info.block(k)[1]

    def read(self, k: int) -> bytes | None:
        off, size = self.info.block(k)
        if self.absolute:   # MPI.BOTTOM: the displacement is the block's address
            return ctypes.string_at(off, size) if size else b""
        mem = self.info.mem
        return bytes(mem[off:off + size]) if mem is not None else None

    def write(self, k: int, data: bytes) -> None:
        off, size = self.info.block(k)
        if self.absolute:
            ctypes.memmove(off, data, len(data))
        elif self.info.mem is not None:
            self.info.mem[off:off + len(data)] = data


def _w_blocks(spec: Any, n: int) -> _Blocks:
    items = list(spec)
    return _Blocks(parse_bufspecw(spec, n), n, absolute=bool(items) and items[0] is BOTTOM)


def _prepare(vr: VirtualRank, comm: Comm, form: str, sendbuf: Any, recvbuf: Any,
             call: str) -> tuple[Outgoing, Callable[[list[Received | None]], None]]:
    """The messages to send (one per out-neighbour), and the function that writes the
    received ones into the receive buffer.

    That function first checks that in-neighbour k's message fills receive block k
    exactly (:func:`~bsim.mpi.collectives.block_checks.check_block`, ``ERR_TRUNCATE``): MPI
    requires the send and receive type signatures to match, and only the receiver knows its
    block's size, so each rank checks the messages it receives, one per in-neighbour."""
    nin, nout = degrees(comm, vr)
    if sendbuf is IN_PLACE:
        raise MPIUsageError(f"rank {vr.rank}: {call}: MPI.IN_PLACE is not allowed in a "
                            f"neighbourhood collective")
    try:
        if form == "alltoallw":
            recv, send = _w_blocks(recvbuf, nin), _w_blocks(sendbuf, nout)
        else:
            recv = _Blocks(vector_spec(recvbuf, nin), nin)
            if form.startswith("allgather"):
                info = parse_bufspec(sendbuf)
                raw = bytes(info.mem) if info.mem is not None else None
                outgoing = [(info.nbytes, raw)] * nout
                send = None
            else:
                send = _Blocks(vector_spec(sendbuf, nout), nout)
    except (TypeError, ValueError, BufferError, KeyError) as exc:
        raise MPIUsageError(f"rank {vr.rank}: {call}: bad buffer: {exc}") from None
    check_disjoint(vr, call, recv.info, nin)   # no location written twice (MPI 4.1 Sec. 8.6)
    if send is not None:
        outgoing = [(send.size(k), send.read(k)) for k in range(nout)]

    me = comm.rank_of(vr)

    def place(got: list[Received | None]) -> None:
        for k, g in enumerate(got):
            if g is None:
                continue   # a PROC_NULL neighbour: the block is left as it was
            nbytes, data, source = g
            check_block(vr, call, nbytes, recv.size(k), None if source == me else source)
            if data is not None:
                recv.write(k, data)
    return outgoing, place


def blocking(comm: Comm, form: str, sendbuf: Any, recvbuf: Any) -> None:
    """The blocking call of *form* (``allgather`` ... ``alltoallw``)."""
    vr = current()
    call = FORMS[form]
    outgoing, place = _prepare(vr, comm, form, sendbuf, recvbuf, call)
    place(exchange(vr, comm, outgoing, call))


def _count_part(req: Any) -> None:
    """A part of *req* resolved: once all have, *req* is known (the ``Waitall`` rule)."""
    req.known += 1
    if req.known == len(req.parts):
        resolve_joined(req, req.parts)
        req.envelope = None   # a collective: the status names no source


class NeighborRequest(JoinedRequest):
    """The request of a nonblocking neighbourhood collective: one part per message."""

    __slots__ = ()

    def part_known(self) -> None:
        """A message resolved (``Part.resolve``)."""
        _count_part(self)


class NeighborPrequest(Prequest):
    """A persistent neighbourhood collective: each ``Start`` posts its messages."""

    __slots__ = ("parts", "known")
    parts: list[Request]
    known: int

    def part_known(self) -> None:
        """A message of the current start resolved (``Part.resolve``)."""
        _count_part(self)


def _post_into(req: Any, comm: Comm, form: str, sendbuf: Any, recvbuf: Any,
               call: str) -> None:
    """Post the messages of one neighbourhood collective as parts of *req*."""
    vr = req.owner
    outgoing, place = _prepare(vr, comm, form, sendbuf, recvbuf, call)
    req.known = 0
    parts: list[Request] = []

    def make(kind: Any) -> Request | None:
        if kind is None:   # every part made
            req.parts = parts
            return None
        part = Part(req, kind)
        parts.append(part)
        return part

    recvs, reqs = post_exchange(vr, comm, outgoing, call, make)
    if not reqs:   # no neighbours: complete at once
        req.resolve(vr.clock, 0.0, vr.clock)
    req.post = lambda: place(collect(recvs))


def nonblocking(comm: Comm, form: str, sendbuf: Any, recvbuf: Any) -> Request:
    """The nonblocking call of *form*: one request for all its messages."""
    vr = current()
    call = "Ineighbor_" + form
    req = NeighborRequest(vr, RECV, call)
    _post_into(req, comm, form, sendbuf, recvbuf, call)
    return hand_out(req)


def persistent(comm: Comm, form: str, sendbuf: Any, recvbuf: Any, info: Any = None) -> Prequest:
    """The persistent call of *form*: an inactive request; each ``Start`` posts it."""
    vr = current()
    call = FORMS[form] + "_init"
    _prepare(vr, comm, form, sendbuf, recvbuf, call)   # bad arguments fail here

    def issue(req: Prequest) -> None:
        req.reset(RECV)
        _post_into(req, comm, form, sendbuf, recvbuf, call)

    return NeighborPrequest(vr, RECV, call, issue)


def _method(form: str, mode: str) -> Callable[..., Any]:
    name = {"blocking": FORMS[form], "nonblocking": "Ineighbor_" + form,
            "persistent": FORMS[form] + "_init"}[mode]
    run = {"blocking": blocking, "nonblocking": nonblocking, "persistent": persistent}[mode]

    def method(comm: Comm, sendbuf: Any, recvbuf: Any, *args: Any, **kwargs: Any) -> Any:
        return run(comm, form, sendbuf, recvbuf, *args, **kwargs)

    what = {"allgather": "gather one block from each in-neighbour",
            "allgatherv": "gather blocks of varying sizes from the in-neighbours",
            "alltoall": "send block k to out-neighbour k, receive block k from "
                        "in-neighbour k",
            "alltoallv": "neighbour all-to-all with blocks of varying sizes",
            "alltoallw": "neighbour all-to-all with per-block counts, byte displacements "
                         "and datatypes"}[form]
    how = {"blocking": "", "nonblocking": " (nonblocking: returns a Request)",
           "persistent": " (persistent: returns an inactive Prequest; Start it)"}[mode]
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"{what[0].upper()}{what[1:]}{how}; one message per neighbour."
    return method


class NeighborCalls:
    """Every neighbourhood collective of a topology communicator (mixin of ``Topocomm``)."""

    __slots__ = ()

    neighbor_allgather = neighbor_allgather
    neighbor_alltoall = neighbor_alltoall
    Neighbor_allgather = _method("allgather", "blocking")
    Neighbor_allgatherv = _method("allgatherv", "blocking")
    Neighbor_alltoall = _method("alltoall", "blocking")
    Neighbor_alltoallv = _method("alltoallv", "blocking")
    Neighbor_alltoallw = _method("alltoallw", "blocking")
    Ineighbor_allgather = _method("allgather", "nonblocking")
    Ineighbor_allgatherv = _method("allgatherv", "nonblocking")
    Ineighbor_alltoall = _method("alltoall", "nonblocking")
    Ineighbor_alltoallv = _method("alltoallv", "nonblocking")
    Ineighbor_alltoallw = _method("alltoallw", "nonblocking")
    Neighbor_allgather_init = _method("allgather", "persistent")
    Neighbor_allgatherv_init = _method("allgatherv", "persistent")
    Neighbor_alltoall_init = _method("alltoall", "persistent")
    Neighbor_alltoallv_init = _method("alltoallv", "persistent")
    Neighbor_alltoallw_init = _method("alltoallw", "persistent")
