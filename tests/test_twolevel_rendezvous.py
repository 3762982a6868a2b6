"""A message between two nodes of ``twolevel`` takes what its inter-node LogGP row gives,
eager and rendezvous, at both ends (by hand).

Inter row ``L = 5 us, o = 10 us, g = 0, G = 1 ns/B``, intra row ``L = 1 us, o = 1 us,
G = 0.1 ns/B``, 2 cores a node: ranks 0 and 2 are on different nodes.

* Eager, 1,000 B: ``o + L + (s-1) G + o`` = 25.999 us at the receiver; the sender
  returns after its ``o`` = 10 us.
* Rendezvous, 100,000 B (above the 64 KiB eager limit): request-to-send and
  clear-to-send take ``L`` each, then the data ``L + (s-1) G``: the receiver ends at
  ``o + 2 L + L + (s-1) G + o`` = 134.999 us, the sender when its NIC has injected the
  data, ``o + 2 L + (s-1) G`` = 119.999 us.

The engine asked for overheads by size only, so ``twolevel`` charged the smaller row's
``o`` at both ends and put the pair's excess into every wire time, the 0-byte control
messages' too: the rendezvous took 170.999 us (receiver) and 146.999 us (sender), +27%;
on the POWER5+ defaults +20% (207.4 against 249.4 us).
"""

from __future__ import annotations

import pytest

import bsim
from bsim import MPI

INTER = dict(L=5e-6, o=10e-6, G=1e-9)
TWO = ("twolevel:cores=2,nics=1,intra=loggp:L=1e-6;o=1e-6;g=0;G=1e-10,"
       "inter=loggp:L=5e-6;o=1e-5;g=0;G=1e-9")


def _one_message_between(src: int, dst: int, nbytes: int):
    def main() -> None:
        comm = MPI.COMM_WORLD
        if comm.rank == src:
            comm.Send(bsim.Buffer(nbytes), dest=dst)
        elif comm.rank == dst:
            comm.Recv(bsim.Buffer(nbytes), source=src)
    return main


@pytest.mark.parametrize("nbytes", [1000, 100_000])
def test_a_message_between_nodes_takes_its_inter_row_at_both_ends(nbytes):
    L, o, G = INTER["L"], INTER["o"], INTER["G"]
    data = L + (nbytes - 1) * G
    if nbytes <= 65536:
        sender, receiver = o, o + data + o
    else:
        sender, receiver = o + 2 * L + (nbytes - 1) * G, o + 2 * L + data + o
    res = bsim.simulate(_one_message_between(0, 2, nbytes), ranks=4, network=TWO, protocol="loggp")
    assert res.finish[0] == pytest.approx(sender, rel=1e-12)
    assert res.finish[2] == pytest.approx(receiver, rel=1e-12)


def test_the_default_twolevel_matches_its_inter_rows_alone():
    """The POWER5+ defaults: a 100,000-byte rendezvous from rank 0 to rank 16 (another
    node) on ``twolevel`` ends when it does on ``loggp_ranges`` (its inter rows)."""
    main = _one_message_between(0, 16, 100_000)
    two = bsim.simulate(main, ranks=32, network="twolevel", protocol="loggp")
    alone = bsim.simulate(main, ranks=32, network="loggp_ranges", protocol="loggp")
    assert two.finish[16] == alone.finish[16]
    assert two.finish[0] == alone.finish[0]

