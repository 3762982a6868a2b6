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
from typing import TYPE_CHECKING, Any

from ..engine.matching import Message, post_receive
from .requests import PROC_NULL, RECV, SEND, Request

if TYPE_CHECKING:
    from ..engine.rank import VirtualRank
    from .cartesian import Cartcomm

__all__ = ["neighbors", "exchange"]


def neighbors(cart: Cartcomm, me: int) -> list[int]:
    """Communicator ranks of the ``2 * ndim`` neighbors of rank *me* (PROC_NULL past edges)."""
    coords = cart._coords_of(me)
    out = []
    for d in range(len(cart._dims)):
        for step in (-1, 1):
            c = list(coords)
            c[d] += step
            if not cart._periods[d] and not 0 <= c[d] < cart._dims[d]:
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
            rreq.kind = 2   # done
    return out


def dumps(obj: Any) -> bytes:
    """Pickle for a lowercase neighbor collective."""
    return pickle.dumps(obj, pickle.HIGHEST_PROTOCOL)
