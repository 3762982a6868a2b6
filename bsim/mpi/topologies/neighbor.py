"""Neighbourhood collectives (MPI 4.1, Sec. 8.6): the exchange every form shares, and
the lowercase (pickled) forms; the buffer forms are in ``neighbor_buffers.py``.

A rank's neighbours come from its topology (:func:`bsim.mpi.topologies.graphs.routes`):
Cartesian grids have, per dimension ``d``, the source and destination of
``Shift(d, 1)`` (block ``2d`` the negative direction, ``2d + 1`` the positive one);
a graph, the node's neighbours; a distributed graph, the rank's sources (receives)
and destinations (sends).  A ``PROC_NULL`` neighbour (past an open edge of a grid)
is sent nothing and receives nothing: its block of the receive buffer is left as it
was, and the lowercase forms give None for it.

Timing rule: the operation is performed as it is on a real machine (MPICH posts
exactly these messages): one point-to-point message to each out-neighbour and from
each in-neighbour, all posted at once on a context private to the call, so the run's
network model, contention and protocol price every message (``T = l + s/w`` of each
message under ``hockney``); the call completes as ``Waitall`` over them
(``docs/protocols.md``: each message handled in order of availability, ``t =
max(t, avail) + cost``).  There is no collective formula ``T``.  A message carries
the tag :func:`~bsim.mpi.topologies.graphs.routes` gives it, which pairs each send with
its receive (``docs/collectives.md``, "Topologies and neighborhood collectives").
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...constants import PROC_NULL
from ...engine.matching import Message, post_receive
from ...engine.rank import current
from ...errors import MPIUsageError
from ..data.buffers import parse_bufspec
from ..data.vector_buffers import BufInfoV, parse_bufspecv
from ..requests.request import DONE, RECV, SEND, Request
from .graphs import routes

if TYPE_CHECKING:
    from ...engine.rank import VirtualRank
    from ..comms.comm import Comm

__all__ = ["Outgoing", "Received", "post_exchange", "collect", "exchange", "degrees",
           "vector_spec", "neighbor_allgather", "neighbor_alltoall"]

Outgoing = list[tuple[int, Any]]
"""Per out-neighbour, ``(nbytes, payload)``: payload bytes, or None for a placeholder."""

Received = tuple[int, Any, int]
"""From one in-neighbour, ``(nbytes, payload, the sender's rank in the communicator)``."""


def degrees(comm: Comm, vr: VirtualRank) -> tuple[int, int]:
    """``(indegree, outdegree)`` of the calling rank (PROC_NULL neighbours included)."""
    sources, _, dests, _ = routes(comm, comm.rank_of(vr))
    return len(sources), len(dests)


def post_exchange(vr: VirtualRank, comm: Comm, outgoing: Outgoing, call: str,
                  make: Any = None) -> tuple[list[Request | None], list[Request]]:
    """Post the receives and sends of one neighbourhood collective.

    Returns, per in-neighbour, its receive request (None for PROC_NULL) and the list of
    every request posted.  *make(kind)*, when given, makes the requests (parts of one
    nonblocking request); all are made before any is posted, since a part may resolve
    as it is posted.
    """
    seqs = vr.coll_seq
    if seqs is None:
        seqs = vr.coll_seq = {}
    key = ("nbr", comm.coll_context(vr))
    count = seqs.get(key, 0)
    seqs[key] = count + 1
    ctx = (key, count)
    me = comm.rank_of(vr)
    sources, rtags, dests, stags = routes(comm, me)
    if len(outgoing) != len(dests):   # pragma: no cover - the callers' contract
        raise AssertionError(f"{call}: {len(outgoing)} blocks for {len(dests)} neighbours")
    vr.ops += 1

    def new(kind: Any) -> Request:
        if make is None:
            return Request(vr, kind, call)
        req: Request = make(kind)
        req.kind = kind
        return req

    recvs: list[Request | None] = [None if s == PROC_NULL else new(RECV) for s in sources]
    sends: list[Request | None] = [None if d == PROC_NULL else new(SEND) for d in dests]
    everything = [r for r in recvs if r is not None] + [r for r in sends if r is not None]
    if make is not None:
        make(None)   # all parts made: the parent may now count them
    for req, s, tag in zip(recvs, sources, rtags):
        if req is not None:
            req.ctx = ctx
            req.src, req.tag = comm.world_rank(s, vr), tag
            req.t_post = vr.clock
            req.lower = True      # keep the payload on the request
            post_receive(vr, req)
    eng = vr.engine
    proto = eng.protocol
    for sreq, d, tag, (nbytes, payload) in zip(sends, dests, stags, outgoing):
        if sreq is not None:
            world = comm.world_rank(d, vr)
            msg = Message(ctx, vr.rank, world, me, tag, nbytes, payload, True)
            vr.msgs += 1
            vr.nbytes += nbytes
            proto.send(vr, eng.ranks[world], msg, sreq, False)
    return recvs, everything


def collect(recvs: list[Request | None]) -> list[Received | None]:
    """``(nbytes, payload, sender)`` received from each in-neighbour (None for
    PROC_NULL): the sender's rank comes with the message, for the size checks of
    ``neighbor_buffers.py``."""
    out: list[Received | None] = []
    for rreq in recvs:
        if rreq is None:
            out.append(None)
            continue
        st = rreq.envelope   # (sender's rank, tag, bytes), set as the message matched
        out.append(None if st is None else (st[2], rreq.payload, st[0]))
        rreq.payload = None
        rreq.kind = DONE
    return out


def exchange(vr: VirtualRank, comm: Comm, outgoing: Outgoing,
             call: str) -> list[Received | None]:
    """Send ``outgoing[k]`` to out-neighbour k and wait for all (blocking form); return
    what each in-neighbour sent (None for a PROC_NULL neighbour)."""
    recvs, reqs = post_exchange(vr, comm, outgoing, call)
    if reqs:
        vr.settle(reqs, call)
    return collect(recvs)


def dumps(obj: Any) -> bytes:
    """Pickle for a lowercase neighbor collective."""
    return pickle.dumps(obj, pickle.HIGHEST_PROTOCOL)


def vector_spec(spec: Any, nblocks: int) -> BufInfoV:
    """:func:`parse_bufspecv` that also takes zero blocks (no neighbours)."""
    if nblocks == 0:
        info = parse_bufspec(spec)   # checked; no block is read or written
        return BufInfoV(None, [], [], info.datatype)
    return parse_bufspecv(spec, nblocks)


# -- lowercase forms, bound as Topocomm methods ----------------------------
def neighbor_allgather(comm: Comm, sendobj: Any) -> list[Any]:
    """Each in-neighbour's object (None from a PROC_NULL neighbour)."""
    vr = current()
    payload = dumps(sendobj)
    got = exchange(vr, comm, [(len(payload), payload)] * degrees(comm, vr)[1],
                   "neighbor_allgather")
    return [None if g is None else pickle.loads(g[1]) for g in got]


def neighbor_alltoall(comm: Comm, sendobj: Sequence[Any]) -> list[Any]:
    """Send item k to out-neighbour k; return what each in-neighbour sent to this rank."""
    vr = current()
    n = degrees(comm, vr)[1]
    if sendobj is None or len(sendobj) != n:
        got_n = "None" if sendobj is None else len(sendobj)
        raise MPIUsageError(f"rank {vr.rank}: neighbor_alltoall: pass {n} objects, one "
                            f"per out-neighbour (got {got_n})")
    out = [(len(p), p) for p in map(dumps, sendobj)]
    got = exchange(vr, comm, out, "neighbor_alltoall")
    return [None if g is None else pickle.loads(g[1]) for g in got]
