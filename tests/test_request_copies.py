"""``MPI.Request(request)``: another object for the same request, equal to it.

A request does not carry a field for the request it copies: the live copies are listed
in ``bsim.engine.request_state`` while they exist (``origin_of``).  These tests check the
equality mpi4py gives a copy (and a copy of a copy), and that the list forgets a copy
once the copy is gone.
"""

from __future__ import annotations

import gc
from typing import Any

import bsim
from bsim import MPI
from bsim.engine import request_state


def _copies() -> list[Any]:
    comm = MPI.COMM_WORLD
    other = comm.size - 1 - comm.rank
    r = comm.Irecv(bsim.Buffer(8), source=other)
    s = comm.Isend(bsim.Buffer(8), dest=other)
    c = MPI.Request(r)
    cc = MPI.Request(c)
    out = [c == r, r == c, cc == r, cc == c, c == s, s == c, c is r]
    MPI.Request.Waitall([r, s])
    return out


def test_a_copy_equals_its_request_and_a_copy_of_the_copy_too() -> None:
    res = bsim.simulate(_copies, 2)
    assert res.returns == [[True, True, True, True, False, False, False]] * 2


def test_a_copy_is_forgotten_once_it_is_gone() -> None:
    gc.collect()
    before = dict(request_state._ORIGINS)   # copies other tests keep alive (handle tables)
    bsim.simulate(_copies, 2)
    gc.collect()
    assert request_state._ORIGINS == before
