"""Requests and messages are recycled: compiled, ``RequestState`` and ``Message`` keep a
free list, so a new request may live in a freed one's memory (``request_state.py``).

A recycled object must start as a new one does.  These tests leave every field of the
freed requests set to something no new request has, then check that the requests the
fast path makes next (``new_request``, which sets a few fields and leaves the rest as
the allocation gives them) hold what ``RequestState.__init__`` sets, field by field.
Interpreted, nothing is recycled and the same checks hold.
"""

from __future__ import annotations

import gc
from typing import Any

import bsim
from bsim import MPI
from bsim.engine.request_state import STATE_FIELDS, RequestState

_DIRTY = dict(ctx=("dirty",), src=12345, tag=999, avail=7.0, cost=3.0, partner=2.0,
              t_post=1.0, waited=True, envelope=(1, 2, 3), payload=b"old", lower=True,
              rinfo="old", error=RuntimeError("old"), post=print, flow="old",
              cancelled=True, handed=True)


def _fields(req: Any) -> dict[str, Any]:
    return {f: getattr(req, f) for f in STATE_FIELDS if f not in ("owner", "kind", "call")}


def _after_dirty_requests() -> list[Any]:
    comm = MPI.COMM_WORLD
    other = comm.size - 1 - comm.rank
    for _ in range(3):   # more than one round: the list holds what the last round freed
        reqs = [comm.Irecv(bsim.Buffer(8), source=other, tag=1) for _ in range(40)]
        reqs += [comm.Isend(bsim.Buffer(8), dest=other, tag=1) for _ in range(40)]
        MPI.Request.Waitall(reqs)
        for r in reqs:   # completed: dirty every field, then let them go
            for name, value in _DIRTY.items():
                setattr(r, name, value)
        del reqs, r
        gc.collect()
    # the receive first: no message of tag 2 exists yet, so the post leaves it unmatched
    recv = comm.Irecv(bsim.Buffer(8), source=other, tag=2)
    fresh_recv = _fields(recv)
    send = comm.Isend(bsim.Buffer(8), dest=other, tag=2)
    fresh_send = _fields(send)
    MPI.Request.Waitall([recv, send])
    return [fresh_recv, fresh_send]


def _without(fields: dict[str, Any], *names: str) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if k not in names}


def test_a_request_made_after_freed_ones_starts_as_a_new_one() -> None:
    new = _fields(RequestState(None))   # what __init__ sets (a null request's own state)
    res = bsim.simulate(_after_dirty_requests, 2)
    for fresh_recv, fresh_send in res.returns:
        assert fresh_recv["handed"] is fresh_send["handed"] is True   # nonblocking calls
        # a receive: what the post sets (context, source, tag, time, buffer), the rest new
        assert fresh_recv["avail"] is None
        assert _without(fresh_recv, "ctx", "src", "tag", "t_post", "rinfo", "handed") == \
            _without(new, "ctx", "src", "tag", "t_post", "rinfo", "handed")
        # an eager send: resolved at the post (its three times), the rest new
        assert _without(fresh_send, "avail", "cost", "partner", "handed") == \
            _without(new, "avail", "cost", "partner", "handed")
