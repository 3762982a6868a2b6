"""Under ``--contention fluid`` and the ``bsim`` protocol a rank handles its receives one
at a time in order of send time, ties in list order (``docs/protocols.md``); the order
decides which flows share links.  Two ways a tie was lost (an outside review):

* zero lookahead (a network of latency 0): a message sent at this very instant was not
  yet known when the rank chose, so it took the other;
* send times one float ulp apart (ranks whose clocks took different rounding paths):
  the later was handled second though it came first in the list.

Both broke symmetric programs on symmetric machines.  A ring where every rank receives
from its right, then its left neighbour, 16 KiB each, on a flat 1 GB/s network: the
receives from the right are a permutation, no link carries two flows, then the same for
the left: ``2 x 16384 B / 1 GB/s`` = 32.768 us (+ the latency), on every rank.  Taken in
the wrong order on some ranks, two flows share a sender's link: 65.536 us.
"""

from __future__ import annotations

import pytest

import bsim
from bsim import MPI

N = 16384


def _ring() -> None:
    comm = MPI.COMM_WORLD
    right, left = (comm.rank + 1) % comm.size, (comm.rank - 1) % comm.size
    MPI.Request.Waitall([comm.Irecv(bsim.Buffer(N), source=right),
                         comm.Irecv(bsim.Buffer(N), source=left),
                         comm.Isend(bsim.Buffer(N), dest=right),
                         comm.Isend(bsim.Buffer(N), dest=left)])


@pytest.mark.parametrize("latency", [0.0, 1e-12, 1e-6])
def test_a_ring_takes_its_receives_in_list_order_whatever_the_latency(latency):
    res = bsim.simulate(_ring, ranks=4, network=f"hockney:latency={latency},bandwidth=1e9",
                        contention="fluid", protocol="bsim")
    expected = 2 * N / 1e9 + 2 * latency
    assert list(res.finish) == pytest.approx([expected] * 4, rel=1e-12)


def _halo(iterations: int) -> None:
    comm = MPI.COMM_WORLD
    px = 4
    i, j = comm.rank % px, comm.rank // px
    py = comm.size // px
    peers = [(i + 1) % px + j * px, (i - 1) % px + j * px,
             i + ((j + 1) % py) * px, i + ((j - 1) % py) * px]
    for _ in range(iterations):
        bsim.add_time(1e-4)
        reqs = [comm.Irecv(bsim.Buffer(N), source=q) for q in peers]
        reqs += [comm.Isend(bsim.Buffer(N), dest=q) for q in peers]
        MPI.Request.Waitall(reqs)


@pytest.mark.parametrize("scale", [1.0, 0.51, 0.5, 0.49, 0.25])
def test_a_second_halo_iteration_repeats_the_first(scale):
    """A 4 x 2 periodic halo on a 2-ary 3-tree: every rank ends the first iteration at
    the same time, up to float rounding, so the second repeats it.  At half the
    latency, even and odd ranks ended one ulp apart and the second iteration took 233 us
    instead of 168 us."""
    net = (f"fattree:k=2,n=3,link_bandwidth=1e9,hop_latency={1e-7 * scale},"
           f"latency={1e-6 * scale}")
    one = bsim.simulate(_halo, ranks=8, network=net, contention="fluid", args=(1,), protocol="bsim")
    two = bsim.simulate(_halo, ranks=8, network=net, contention="fluid", args=(2,), protocol="bsim")
    assert two.elapsed == pytest.approx(2 * one.elapsed, rel=1e-9)
