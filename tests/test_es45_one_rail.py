"""``es45:fattree1``: the ASCI Q fat-tree with one rail, the rest as ``es45:fattree``."""

from __future__ import annotations

import pytest

import bsim
from bsim import MPI
from bsim.machines import network_spec


def test_the_one_rail_variant_differs_from_the_two_rail_one_by_the_rails_only():
    one, two = network_spec("es45", "fattree1"), network_spec("es45", "fattree")
    assert "rails=2" in two and one == two.replace("rails=2,rail_policy=assign", "rails=1")


def test_four_cores_sending_off_node_share_one_rail():
    """Each of a node's 4 ranks sends 1 MB to the next node (block mapping, 4 cores): on one
    rail the four flows share one 340 MB/s link, 4 x 1e6 / 340e6 = 11.76 ms plus the 5 us
    latency; on two rails (ranks assigned to rails) twice as fast (5.88 ms)."""
    s = 10 ** 6

    def main():
        comm = MPI.COMM_WORLD
        if comm.rank < 4:
            comm.Send(bsim.Buffer(s), dest=comm.rank + 4)
        else:
            comm.Recv(bsim.Buffer(s), source=comm.rank - 4)

    t1 = bsim.simulate(main, 8, machine="es45:fattree1", protocol="bsim",
                       contention="fluid").elapsed
    t2 = bsim.simulate(main, 8, machine="es45:fattree", protocol="bsim",
                       contention="fluid").elapsed
    assert t1 == pytest.approx(5e-6 + 4 * s / 340e6, rel=1e-6)
    assert t2 == pytest.approx(5e-6 + 2 * s / 340e6, rel=1e-6)
