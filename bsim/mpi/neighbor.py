"""Neighborhood collectives on Cartesian communicators (MPI-3 ``MPI_Neighbor_*``).

The neighbors of a rank are, for each dimension ``d`` in order, its source
and destination of ``Shift(d, 1)``: neighbor ``2d`` is the negative
direction, ``2d + 1`` the positive one (MPI 3.1, Sec. 7.6); ``PROC_NULL``
neighbors (past a non-periodic edge) send and receive nothing.

The operation is performed as what it is on a real machine: one message to
and from each neighbor, all posted at once and completed together
(``Waitall``), on a context private to the call, so the network model,
contention and the protocol price them; there is no formula ``T``.  A
message to neighbor ``k`` carries tag ``k``; the receiver expects it from
its neighbor ``k ^ 1`` (the opposite direction), which is what makes
periodic dimensions of size 1 or 2 (where both neighbors are one rank)
unambiguous.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..constants import PROC_NULL
from ..engine.matching import Message, post_receive
from ..engine.rank import current
from ..errors import MPIUsageError
from .buffers import parse_bufspec, parse_bufspecv
from .cartesian import coords_of
from .requests import DONE, RECV, SEND, Request

if TYPE_CHECKING:
    from ..engine.rank import VirtualRank
    from .comm import Cartcomm

__all__ = ["neighbors", "exchange", "neighbor_allgather", "neighbor_alltoall",
           "Neighbor_allgather", "Neighbor_alltoall"]


def neighbors(cart: Cartcomm, me: int) -> list[int]:
    """Communicator ranks of the ``2 * ndim`` neighbors of rank *me* (PROC_NULL past edges)."""
    coords = coords_of(cart, me)
    out = []
    for d in range(len(cart.cart_dims)):
        for step in (-1, 1):
            c = list(coords)
            c[d] += step
            if not cart.cart_periods[d] and not 0 <= c[d] < cart.cart_dims[d]:
                out.append(PROC_NULL)
            else:
                out.append(cart.Get_cart_rank(c))
    return out


def exchange(vr: VirtualRank, cart: Cartcomm, outgoing: list[tuple[int, Any]],
             call: str) -> list[tuple[int, Any] | None]:
    """Send ``outgoing[k] = (nbytes, payload)`` to neighbor k; return what each neighbor sent.

    Returns, per neighbor k, ``(nbytes, payload)`` of the message received from it
    (None for a PROC_NULL neighbor).  Payloads are bytes (or None for placeholders).
    """
    seqs = vr.coll_seq
    if seqs is None:
        seqs = vr.coll_seq = {}
    key = ("nbr", cart.coll_context(vr))
    count = seqs.get(key, 0)
    seqs[key] = count + 1
    ctx = (key, count)
    me = cart.rank_of(vr)
    nbrs = neighbors(cart, me)
    eng = vr.engine
    proto = eng.protocol
    vr.ops += 1
    recvs: list[Request | None] = []
    reqs = []
    for k, nb in enumerate(nbrs):
        if nb == PROC_NULL:
            recvs.append(None)
            continue
        req = Request(vr, RECV, call)
        req.ctx = ctx
        req.src, req.tag = cart.world_rank(nb, vr), k ^ 1
        req.t_post = vr.clock
        req.lower = True      # keep the payload on the request
        post_receive(vr, req)
        recvs.append(req)
        reqs.append(req)
    for k, nb in enumerate(nbrs):
        if nb == PROC_NULL:
            continue
        nbytes, payload = outgoing[k]
        world = cart.world_rank(nb, vr)
        req = Request(vr, SEND, call)
        msg = Message(ctx, vr.rank, world, me, k, nbytes, payload, True)
        vr.msgs += 1
        vr.nbytes += nbytes
        proto.send(vr, eng.ranks[world], msg, req, False)
        reqs.append(req)
    if reqs:
        vr.settle(reqs, call)
    out: list[tuple[int, Any] | None] = []
    for rreq in recvs:
        if rreq is None:
            out.append(None)
        else:
            st = rreq.envelope
            out.append((st[2] if st else 0, rreq.payload))
            rreq.kind = DONE
    return out


def dumps(obj: Any) -> bytes:
    """Pickle for a lowercase neighbor collective."""
    return pickle.dumps(obj, pickle.HIGHEST_PROTOCOL)


# -- the neighborhood collectives, bound as Cartcomm methods -------------------------------
def _nbr_count(cart: Cartcomm) -> int:
    return 2 * len(cart.cart_dims)


def neighbor_allgather(cart: Cartcomm, sendobj: Any) -> list[Any]:
    """Each neighbor's object (None from a PROC_NULL neighbor)."""
    payload = dumps(sendobj)
    got = exchange(current(), cart, [(len(payload), payload)] * _nbr_count(cart),
                   "neighbor_allgather")
    return [None if g is None else pickle.loads(g[1]) for g in got]


def neighbor_alltoall(cart: Cartcomm, sendobj: Sequence[Any]) -> list[Any]:
    """Send item k to neighbor k; return what each neighbor sent to this rank."""
    vr = current()
    n = _nbr_count(cart)
    if sendobj is None or len(sendobj) != n:
        raise MPIUsageError(f"rank {vr.rank}: neighbor_alltoall: pass {n} objects, one "
                            f"per neighbor")
    out = [(len(p), p) for p in map(dumps, sendobj)]
    got = exchange(vr, cart, out, "neighbor_alltoall")
    return [None if g is None else pickle.loads(g[1]) for g in got]


def _neighbor_buffers(cart: Cartcomm, sendbuf: Any, recvbuf: Any, call: str,
                      alltoall: bool) -> None:
    vr = current()
    n = _nbr_count(cart)
    try:
        rinfo = parse_bufspecv(recvbuf, n)
        if alltoall:
            sv = parse_bufspecv(sendbuf, n)
            out = []
            for k in range(n):
                off, size = sv.block(k)
                out.append((size, bytes(sv.mem[off:off + size]) if sv.mem is not None
                            else None))
        else:
            si = parse_bufspec(sendbuf)
            raw = bytes(si.mem) if si.mem is not None else None
            out = [(si.nbytes, raw)] * n
    except (TypeError, ValueError) as exc:
        raise MPIUsageError(f"rank {vr.rank}: {call}: bad buffer: {exc}") from None
    got = exchange(vr, cart, out, call)
    if rinfo.mem is not None:
        for k, g in enumerate(got):
            if g is not None and g[1] is not None:
                off, size = rinfo.block(k)
                rinfo.mem[off:off + min(size, len(g[1]))] = g[1][:size]


def Neighbor_allgather(cart: Cartcomm, sendbuf: Any, recvbuf: Any) -> None:
    """Gather one block from each neighbor (block k of recvbuf from neighbor k)."""
    _neighbor_buffers(cart, sendbuf, recvbuf, "Neighbor_allgather", False)


def Neighbor_alltoall(cart: Cartcomm, sendbuf: Any, recvbuf: Any) -> None:
    """Send block k of sendbuf to neighbor k; receive block k from neighbor k."""
    _neighbor_buffers(cart, sendbuf, recvbuf, "Neighbor_alltoall", True)
