"""``Spawn`` under fluid contention: the new ranks' links join the shared ones.

Hand derivations on a Hockney network (latency ``l``, bandwidth ``w``), whose fluid layer
shares each rank's NICs (``FlatNics``): a message alone costs what it costs without
contention; two messages of ``s`` bytes entering one NIC together each move at half speed,
so the later of them ends ``s/w`` later than without contention.
"""

from __future__ import annotations

import sys

import pytest

import bsim

LAT, BW = 1e-6, 1e9
NET = f"hockney:latency={LAT},bandwidth={BW}"
SIZE = 1_000_000

CHILD = f"""
import bsim
from mpi4py import MPI
parent = MPI.Comm.Get_parent()
MPI.COMM_WORLD.Barrier()
t = MPI.Wtime()
parent.Send(bsim.buffer({SIZE}, MPI.BYTE), dest=0, tag=1)
parent.recv(source=0, tag=3)   # once both have arrived: nothing else shares the NIC
parent.send(t, dest=0, tag=2)
"""


def _two_children_send_to_the_parent():
    from bsim import MPI
    inter = MPI.COMM_SELF.Spawn(sys.executable, ["-c", CHILD], 2)
    reqs = [inter.Irecv(bsim.buffer(SIZE, MPI.BYTE), source=i, tag=1) for i in range(2)]
    MPI.Request.Waitall(reqs)
    done = MPI.Wtime()
    for i in range(2):
        inter.send(None, dest=i, tag=3)
    return done, [inter.recv(source=i, tag=2) for i in range(2)]


@pytest.mark.parametrize("ranks", [1, 3])
def test_two_spawned_ranks_share_the_parents_nic(ranks):
    """Both children send at the same time T (after their barrier); eager sends (LogGP,
    ``o = g = 0``), so without contention both arrive at ``T + l + s/w``; sharing the
    parent's receiving NIC, both at ``T + l + 2 s/w``."""
    proto = f"loggp:eager_limit={2 * SIZE}"
    out = {}
    for contention in ("none", "fluid"):
        res = bsim.simulate(_two_children_send_to_the_parent, ranks, network=NET,
                            protocol=proto, contention=contention)
        done, starts = res.returns[0]
        assert starts[0] == starts[1]   # the barrier releases both at once
        out[contention] = done - starts[0]
    assert out["none"] == pytest.approx(LAT + SIZE / BW, rel=1e-9)
    assert out["fluid"] == pytest.approx(LAT + 2 * SIZE / BW, rel=1e-9)


def test_a_lone_message_to_a_spawned_rank_costs_what_it_costs_without_contention():
    """The spawn handshake's messages travel alone: ``Spawn`` returns at ``2 (l + 40/w)``
    under the bsim protocol with and without contention (``tests/test_spawn.py``)."""
    from bsim import MPI
    code = "from mpi4py import MPI\nMPI.Comm.Get_parent().send(MPI.Wtime(), dest=0)\n"

    def main():
        child = MPI.COMM_SELF.Spawn(sys.executable, ["-c", code])
        return MPI.Wtime(), child.recv(source=0)

    one = LAT + 40 / BW
    for contention in ("none", "fluid"):
        spawned, started = bsim.simulate(main, 1, network=NET, protocol="bsim",
                                         contention=contention).returns[0]
        assert started == pytest.approx(one, rel=1e-12)
        assert spawned == pytest.approx(2 * one, rel=1e-12)


def test_spawned_ranks_on_a_twolevel_network_bring_their_nodes_nics():
    """``twolevel`` with 2 cores a node: 2 ranks fill node 0, the 2 children get node 1,
    whose NICs the fluid layer did not have at the start; their messages to the parent
    cross them (two flows into node 0's receiving NIC: the same halving)."""
    net = f"twolevel:cores=2,inter=hockney:latency={LAT};bandwidth={BW}"
    proto = f"loggp:eager_limit={2 * SIZE}"
    out = {}
    for contention in ("none", "fluid"):
        done, starts = bsim.simulate(_two_children_send_to_the_parent, 2, network=net,
                                     protocol=proto, contention=contention).returns[0]
        out[contention] = done - starts[0]
    assert out["fluid"] - out["none"] == pytest.approx(SIZE / BW, rel=1e-6)
