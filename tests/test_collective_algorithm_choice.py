"""One collective instance runs one algorithm at every member, chosen from what all members know.

MPICH chooses some algorithms by size (alltoall: Bruck at <= 256 B a block on >= 8 ranks,
else pairwise).  A v-variant's members do not all know every count, so MPICH's own v-variants
do not choose by size (Alltoallv/w: isend/irecv, costed as pairwise; Gatherv/Scatterv:
linear).  bsim chose from each member's own size, so under ``--collectives algorithmic`` an
Alltoallv on 8 ranks where rank 0 sends 300 B a block and the others 100 B ran Bruck at
ranks 1-7 and pairwise at rank 0: a false DeadlockError at 3.8 us.

Network: Hockney 1 us, 1 GB/s: t(s) = 1 us + s ns.
"""

from __future__ import annotations

import numpy as np
import pytest

import bsim
from bsim import MPI

NET = "hockney:latency=1e-6,bandwidth=1e9"


def t(nbytes: float) -> float:
    return 1e-6 + nbytes * 1e-9


def _alltoallv(big: int, small: int):
    def main():
        comm = MPI.COMM_WORLD
        P, me = comm.Get_size(), comm.Get_rank()
        sc = [big if me == 0 else small] * P
        rc = [big if r == 0 else small for r in range(P)]
        comm.Alltoallv([np.zeros(sum(sc), np.uint8), (sc, None), MPI.BYTE],
                       [np.zeros(sum(rc), np.uint8), (rc, None), MPI.BYTE])
    return main


def _uneven(op: str):
    """A v-variant or a lowercase call whose members' sizes differ (rank r: 40 (r + 1) ** 2 B)."""
    def main():
        comm = MPI.COMM_WORLD
        P, me = comm.Get_size(), comm.Get_rank()
        counts = [40 * (r + 1) ** 2 for r in range(P)]
        mine = counts[me]
        if op == "Alltoallv":
            sc = [mine] * P
            rc = [counts[r] for r in range(P)]
            comm.Alltoallv([np.zeros(sum(sc), np.uint8), (sc, None), MPI.BYTE],
                           [np.zeros(sum(rc), np.uint8), (rc, None), MPI.BYTE])
        elif op == "Allgatherv":
            comm.Allgatherv(np.zeros(mine, np.uint8), [np.zeros(sum(counts), np.uint8), counts])
        elif op == "Gatherv":
            recv = [np.zeros(sum(counts), np.uint8), counts] if me == 1 % P else None
            comm.Gatherv(np.zeros(mine, np.uint8), recv, root=1 % P)
        elif op == "Scatterv":
            send = [np.zeros(sum(counts), np.uint8), counts] if me == 0 else None
            comm.Scatterv(send, np.zeros(mine, np.uint8), root=0)
        elif op == "allreduce":   # pickles of 3 kB at rank 0 (past MPICH's 2048 B), small else
            comm.allreduce(bytes(3000 if me == 0 else 8), op=MPI.MAX)
        elif op == "alltoall":
            comm.alltoall([bytes(300 if me == 0 else 10)] * P)
        elif op == "allgather":
            comm.allgather(bytes(mine * 100))
        elif op == "reduce":
            comm.reduce(bytes(3000 if me == 2 % P else 8), op=MPI.MAX, root=0)
    return main


@pytest.mark.parametrize("P", [3, 4, 8, 9, 16])
@pytest.mark.parametrize("op", ["Alltoallv", "Allgatherv", "Gatherv", "Scatterv", "allreduce",
                                "alltoall", "allgather", "reduce"])
def test_uneven_sizes_under_algorithmic_complete(op, P):
    """No false deadlock whatever the members' sizes (each call straddles an MPICH size
    threshold between members), and the expansion sends messages."""
    res = bsim.simulate(_uneven(op), ranks=P, network=NET, collectives="algorithmic",
                        protocol="bsim")
    assert res.elapsed > 0
    assert res.total_messages > 0


@pytest.mark.parametrize("P", [4, 8, 16])
def test_even_alltoallv_is_pairwise_at_every_size_in_both_sources(P):
    """100 B a block on P ranks: pairwise, P - 1 rounds of t(100) (MPICH's Alltoallv does not
    switch to Bruck at <= 256 B), the same expanded and as a formula."""
    for source in ("analytic", "algorithmic"):
        res = bsim.simulate(_alltoallv(100, 100), ranks=P, network=NET, collectives=source,
                            protocol="bsim")
        assert res.finish.tolist() == pytest.approx([(P - 1) * t(100)] * P, rel=1e-12), source


def test_uneven_alltoallv_by_hand():
    """4 ranks, rank 0 sends 300 B a block, the others 100 B; pairwise round k: r -> r + k.

    bsim protocol: sends are free, a rank posts round k once its round k-1 receive is done,
    and a receive ends at max(own ready, sender's post) + t(s); t(100) = 1.1, t(300) = 1.3 us.
      round 1: 0->1 (300): 1 ends 1.3; 1->2, 2->3, 3->0: 1.1           F = [1.1, 1.3, 1.1, 1.1]
      round 2: 0->2 (300): max(1.1, 1.1) + 1.3 = 2.4; 1->3: max(1.1, 1.3) + 1.1 = 2.4;
               2->0: 2.2; 3->1: max(1.3, 1.1) + 1.1 = 2.4                F = [2.2, 2.4, 2.4, 2.4]
      round 3: 0->3 (300): max(2.4, 2.2) + 1.3 = 3.7; 1->0: max(2.2, 2.4) + 1.1 = 3.5;
               2->1, 3->2: 3.5                                           F = [3.5, 3.5, 3.5, 3.7]
    The formula charges every member the largest buffer's pairwise time, 3 t(300) = 3.9 us.
    """
    exp = bsim.simulate(_alltoallv(300, 100), ranks=4, network=NET, collectives="algorithmic",
                        protocol="bsim")
    assert exp.finish.tolist() == pytest.approx([3.5e-6, 3.5e-6, 3.5e-6, 3.7e-6], rel=1e-12)
    formula = bsim.simulate(_alltoallv(300, 100), ranks=4, network=NET, protocol="bsim")
    assert formula.finish.tolist() == pytest.approx([3 * t(300)] * 4, rel=1e-12)


@pytest.mark.parametrize("P", [8, 16])
def test_reviewers_alltoallv_no_longer_deadlocks(P):
    """8 and 16 ranks, rank 0 300 B a block, others 100 B: every round's slowest receive is
    at most t(300), so every rank ends between (P - 1) t(100) and (P - 1) t(300)."""
    res = bsim.simulate(_alltoallv(300, 100), ranks=P, network=NET, collectives="algorithmic",
                        protocol="bsim")
    for f in res.finish:
        assert (P - 1) * t(100) - 1e-15 <= f <= (P - 1) * t(300) + 1e-15


def test_a_sized_call_still_follows_mpichs_size_rule():
    """Alltoall (its size in the signature): Bruck at 100 B a block on 8 ranks, 3 rounds of
    4 blocks (Bruck round k forwards the blocks whose index has bit k set): 3 t(400)."""
    def main():
        comm = MPI.COMM_WORLD
        comm.Alltoall(np.zeros(800, np.uint8), np.zeros(800, np.uint8))

    for source in ("analytic", "algorithmic"):
        res = bsim.simulate(main, ranks=8, network=NET, collectives=source, protocol="bsim")
        assert res.elapsed == pytest.approx(3 * t(400), rel=1e-12), source


@pytest.mark.parametrize("P", [4, 8])
def test_linear_bcast_expansion_sends_free_under_bsim_and_serialises_under_loggp(P):
    """docs/collectives.md, "Where expansion and formula agree": the linear bcast's root
    sends P - 1 messages of n = 80 kB x P.  Under bsim sends are free: every non-root ends at
    t(n), the formula (port model) at (P - 1) t(n).  Under loggp with G = 1 ns/B the root's
    NIC sends one at a time, each holding it LogGP's gap (n - 1) G, after a request-to-send
    and clear-to-send (2 L): non-root k ends at 2 L + k (n - 1) G + L, serialised as the
    formula's P - 1 messages are."""
    n = 80000 * P

    def main():
        MPI.COMM_WORLD.Bcast(np.zeros(n, np.uint8), root=0)

    free = bsim.simulate(main, ranks=P, network=NET, collectives="algorithmic:bcast=linear",
                         protocol="bsim")
    assert free.finish.tolist() == pytest.approx([0.0] + [t(n)] * (P - 1), rel=1e-12)
    formula = bsim.simulate(main, ranks=P, network=NET, collectives="analytic:bcast=linear",
                            protocol="bsim")
    assert formula.elapsed == pytest.approx((P - 1) * t(n), rel=1e-12)
    gp = "loggp:L=1e-6,o=0,g=0,G=1e-9"
    ser = bsim.simulate(main, ranks=P, network=gp, protocol="loggp",
                        collectives="algorithmic:bcast=linear")
    for k in range(1, P):
        assert ser.finish[k] == pytest.approx(3e-6 + k * (n - 1) * 1e-9, rel=1e-9)
