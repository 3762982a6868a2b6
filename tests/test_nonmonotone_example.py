"""The non-monotone case of ``docs/protocols.md``: under ``loggp`` with one injection queue,
contention that delays one receiver's handshake lets another receiver be served first, and
its message arrives earlier than without contention."""

from __future__ import annotations

import pytest

import bsim
from bsim import MPI

NET = "loggp:L=1e-06,o=0,g=0,G=1e-09"
us = 1e-6


def main():
    c = MPI.COMM_WORLD
    if c.rank == 0:
        reqs = [c.Isend(bsim.Buffer(20000), dest=1, tag=0),
                c.Isend(bsim.Buffer(100000), dest=1, tag=1)]
        bsim.add_time(25 * us)
        reqs.append(c.Isend(bsim.Buffer(100000), dest=2, tag=2))
        MPI.Request.Waitall(reqs)
    elif c.rank == 1:
        MPI.Request.Waitall([c.Irecv(bsim.Buffer(20000), source=0, tag=0),
                             c.Irecv(bsim.Buffer(100000), source=0, tag=1),
                             c.Irecv(bsim.Buffer(200000), source=3, tag=3)])
    elif c.rank == 2:
        c.Recv(bsim.Buffer(100000), source=0, tag=2)
    else:
        c.Send(bsim.Buffer(200000), dest=1, tag=3)


def test_contention_lets_a_later_handshake_be_served_first():
    """Without contention, by hand: rank 1's clear-to-send is back at 21.999 us (behind the
    20,000 bytes, 20.999 us), its data holds the NIC to 121.998 us; rank 2's data leaves
    then and arrives 1 us + 99.999 us later, at 222.997 us.  With contention rank 2 is
    served first and finishes earlier; rank 1 finishes later."""
    alone = bsim.simulate(main, 4, network=NET, protocol="loggp")
    shared = bsim.simulate(main, 4, network=NET, protocol="loggp", contention="fluid")
    assert alone.finish[2] == pytest.approx(222.997 * us, rel=1e-9)
    assert alone.finish[1] == pytest.approx(202.999 * us, rel=1e-9)
    assert shared.finish[2] < alone.finish[2] - 50 * us
    assert shared.finish[1] > alone.finish[1]
