"""Collective timing: the three dependency rules and every cost source, derived by hand.

Network: Hockney l = 2 us, w = 1 GB/s, so one message of s bytes costs c(s) = 2e-6 + s*1e-9.
Default (analytic) algorithms for these small sizes (MPICH thresholds, docs/collectives.md):
binomial bcast/reduce K*c(n), recursive-doubling allreduce K*c(n), dissemination barrier
K*c(0), with K = ceil(log2 P).
"""

from __future__ import annotations

import math

import pytest

import bsim
from bsim import MPI

L, W = 2e-6, 1e9
NET = f"hockney:latency={L},bandwidth={W}"


def c(nbytes: float) -> float:
    return L + nbytes / W


def K(P: int) -> int:
    return math.ceil(math.log2(P))


ARRIVE = [3e-3, 0.0, 5e-3, 1e-3, 2e-3, 4e-3, 0.5e-3, 6e-3]


@pytest.mark.parametrize("P", [2, 4, 8])
def test_allreduce_with_skewed_arrivals_all_finish_at_max_plus_T(P):
    """All-to-all rule: finish = max(arrivals) + T, wait = max - own, comm = T."""
    n = 64

    def main():
        comm = MPI.COMM_WORLD
        bsim.add_time(ARRIVE[comm.rank])
        comm.Allreduce(bsim.Buffer(n), bsim.Buffer(n), op=MPI.SUM)

    res = bsim.simulate(main, ranks=P, network=NET, protocol="bsim")
    m = max(ARRIVE[:P])
    T = K(P) * c(n)
    for r in range(P):
        assert res.finish[r] == m + T
        assert res.wait[r] == m - ARRIVE[r]
        assert res.comm[r] == T


def test_bcast_from_a_late_root():
    """Fan-out rule: non-roots finish at max(own, root) + T; the root at own + T."""
    P, root, n = 4, 2, 1000

    def main():
        comm = MPI.COMM_WORLD
        bsim.add_time(ARRIVE[comm.rank])
        comm.Bcast(bsim.Buffer(n), root=root)

    res = bsim.simulate(main, ranks=P, network=NET, protocol="bsim")
    T = K(P) * c(n)                 # binomial: 2 * 3 us
    t_root = ARRIVE[root]           # 5 ms, later than everyone
    for r in range(P):
        assert res.finish[r] == max(ARRIVE[r], t_root) + T
        assert res.wait[r] == max(0.0, t_root - ARRIVE[r])


def test_bcast_from_an_early_root_does_not_wait_for_late_ranks():
    """A non-root arriving after the root pays only T, and the root never waits."""
    P, root, n = 4, 1, 1000         # rank 1 arrives at 0

    def main():
        comm = MPI.COMM_WORLD
        bsim.add_time(ARRIVE[comm.rank])
        comm.Bcast(bsim.Buffer(n), root=root)

    res = bsim.simulate(main, ranks=P, network=NET, protocol="bsim")
    T = K(P) * c(n)
    assert res.finish.tolist() == [a + T for a in ARRIVE[:P]]
    assert res.wait.tolist() == [0.0] * P


def test_reduce_where_only_the_root_waits():
    """Fan-in rule: non-roots finish at own + T; the root at max(arrivals) + T."""
    P, root, n = 8, 1, 256

    def main():
        comm = MPI.COMM_WORLD
        bsim.add_time(ARRIVE[comm.rank])
        comm.Reduce(bsim.Buffer(n), bsim.Buffer(n), op=MPI.SUM, root=root)

    res = bsim.simulate(main, ranks=P, network=NET, protocol="bsim")
    T = K(P) * c(n)
    for r in range(P):
        if r == root:
            assert res.finish[r] == max(ARRIVE[:P]) + T
            assert res.wait[r] == max(ARRIVE[:P]) - ARRIVE[r]
        else:
            assert res.finish[r] == ARRIVE[r] + T and res.wait[r] == 0.0


@pytest.mark.parametrize("P", [2, 3, 4, 7, 16])
def test_barrier_is_dissemination(P):
    """Barrier: ceil(log2 P) rounds of zero-byte messages after the last arrival."""
    def main():
        MPI.COMM_WORLD.Barrier()

    res = bsim.simulate(main, ranks=P, network=NET, protocol="bsim")
    assert res.finish.tolist() == [K(P) * L] * P


@pytest.mark.parametrize("P", [2, 64, 4096])
def test_clog_source_is_c_plus_d_log2_P(P):
    """The MILC paper's allreduce model: T = c + d*log2(P), independent of size."""
    cc, d = 5e-6, 3e-6

    def main():
        MPI.COMM_WORLD.allreduce(1.0)

    res = bsim.simulate(main, ranks=P, network=NET, collectives=f"clog:c={cc},d={d}",
                        protocol="bsim")
    assert res.finish[0] == cc + d * math.log2(P)


def test_per_operation_override_of_the_source():
    """A dict picks clog for allreduce while bcast stays analytic."""
    def main():
        comm = MPI.COMM_WORLD
        comm.Bcast(bsim.Buffer(1000), root=0)
        t1 = MPI.Wtime()
        comm.Allreduce(bsim.Buffer(8), bsim.Buffer(8))
        return t1, MPI.Wtime()

    res = bsim.simulate(main, ranks=4, network=NET,
                        collectives={"default": "analytic", "allreduce": "clog:c=1e-5,d=0"},
                        protocol="bsim")
    t1, t2 = res.returns[3]
    assert t1 == 2 * c(1000) and t2 == t1 + 1e-5


def test_measured_table_interpolates_in_P_and_size(tmp_path):
    """The BSIM paper's PRIMEQUEST method: bilinear interpolation of a (P, bytes) table."""
    table = tmp_path / "allreduce.csv"
    table.write_text("op,nprocs,nbytes,seconds\n"
                     "allreduce,2,0,10e-6\nallreduce,2,1000,20e-6\n"
                     "allreduce,8,0,30e-6\nallreduce,8,1000,60e-6\n")

    def main():
        comm = MPI.COMM_WORLD
        comm.Allreduce(bsim.Buffer(1000), bsim.Buffer(1000))   # on a table point
        t1 = MPI.Wtime()
        comm.Allreduce(bsim.Buffer(500), bsim.Buffer(500))     # between sizes
        return t1, MPI.Wtime() - t1

    at8 = bsim.simulate(main, ranks=8, network=NET, collectives=f"table:path={table}",
                        protocol="bsim")
    t1, t2 = at8.returns[0]
    assert t1 == 60e-6
    assert t2 == pytest.approx((30e-6 + 60e-6) / 2, rel=1e-12)
    at5 = bsim.simulate(main, ranks=5, network=NET, collectives=f"table:path={table}",
                        protocol="bsim")
    t1, t2 = at5.returns[0]
    # P = 5 is halfway between 2 and 8: at 1000 B (20 + 60)/2 = 40 us; at 500 B (15 + 45)/2
    assert t1 == pytest.approx(40e-6, rel=1e-12)
    assert t2 == pytest.approx(30e-6, rel=1e-12)


@pytest.mark.parametrize("op,alg,P,n,hand", [
    ("bcast", "binomial", 8, 1000, 3 * c(1000)),             # log2 8 rounds
    ("bcast", "binomial", 16, 1000, 4 * c(1000)),
    ("allreduce", "recursive_doubling", 8, 64, 3 * c(64)),
    ("allreduce", "ring", 6, 6000, 2 * 5 * c(1000)),         # 2(P-1) steps of n/P
    ("allgather", "ring", 5, 5000, 4 * c(1000)),             # P-1 steps of n/P
    ("barrier", "dissemination", 7, 0, 3 * c(0)),            # ceil(log2 7) rounds
    ("alltoall", "pairwise", 4, 4000, 3 * c(1000)),          # P-1 exchanges of n/P
    ("reduce", "binomial", 8, 512, 3 * c(512)),
])
def test_algorithmic_expansion_agrees_with_its_analytic_twin(op, alg, P, n, hand):
    """On a contention-free network the expanded messages finish when the formula says."""
    def main():
        comm = MPI.COMM_WORLD
        buf = bsim.Buffer(n)
        if op == "bcast":
            comm.Bcast(buf, root=0)
        elif op == "allreduce":
            comm.Allreduce(buf, bsim.Buffer(n))
        elif op == "allgather":
            comm.Allgather(bsim.Buffer(n // P), bsim.Buffer(n))
        elif op == "barrier":
            comm.Barrier()
        elif op == "alltoall":
            comm.Alltoall(buf, bsim.Buffer(n))
        elif op == "reduce":
            comm.Reduce(buf, bsim.Buffer(n), root=0)

    expanded = bsim.simulate(main, ranks=P, network=NET, collectives=f"algorithmic:{op}={alg}",
                             protocol="bsim")
    formula = bsim.simulate(main, ranks=P, network=NET, collectives=f"analytic:{op}={alg}",
                            protocol="bsim")
    assert formula.elapsed == pytest.approx(hand, rel=1e-12)
    assert expanded.elapsed == pytest.approx(hand, rel=1e-12)
    assert expanded.total_messages > 0 and formula.total_messages == 0
    assert all(math.isclose(f, ca + w + cm, rel_tol=1e-9) for f, ca, w, cm in
               zip(expanded.finish, expanded.calc, expanded.wait, expanded.comm))


def test_free_sends_let_a_non_power_of_two_tree_finish_in_its_depth():
    """bsim protocol: the root's sends cost nothing, so P=5 binomial bcast takes 2 hops, not 3.

    Tree (MPICH, root 0): round 0: 0->4; round 1: 0->2; round 2: 0->1, 2->3.  With free sends
    the longest chain is 0->2->3 = 2c; the port-model formula K*c = 3c charges the root's
    three sends one after another (the loggp protocol serializes them through the NIC gap).
    """
    def main():
        MPI.COMM_WORLD.Bcast(bsim.Buffer(1000), root=0)

    res = bsim.simulate(main, ranks=5, network=NET, collectives="algorithmic:bcast=binomial",
                        protocol="bsim")
    assert res.finish.tolist() == [0.0, c(1000), c(1000), 2 * c(1000), c(1000)]


def test_nonblocking_allreduce_request_completes_like_the_blocking_rule():
    """Iallreduce + Wait: done at max(wait time, max arrival) + T."""
    P, n = 4, 8

    def main():
        comm = MPI.COMM_WORLD
        req = comm.Iallreduce(bsim.Buffer(n), bsim.Buffer(n))
        bsim.add_time(1e-3 if comm.rank == 0 else 0.0)
        req.Wait()

    res = bsim.simulate(main, ranks=P, network=NET, protocol="bsim")
    T = K(P) * c(n)
    # everyone arrived at 0; rank 0 waits at 1 ms (then pays T), the others at 0
    assert res.finish.tolist() == [1e-3 + T, T, T, T]


@pytest.mark.parametrize("protocol", ["bsim", "loggp"])
def test_nonblocking_collectives_overlap_compute_and_each_other_under_loggp(protocol):
    """Under loggp nonblocking operations overlap add_time (the design's rule), collectives
    included: posted at 0 they end at T whatever the rank computes meanwhile, and two of
    them waited together end at max(T_a, T_b).  Under bsim a nonblocking call behaves as
    blocking at its Wait (the seed's irecv + wait rule): 1 ms + T_a, and T_a + T_b in
    turn.  T_a and T_b are the blocking calls' own times on the same network."""
    P = 4

    def blocking(which):
        def main():
            comm = MPI.COMM_WORLD
            if which == "allreduce":
                comm.Allreduce(bsim.Buffer(800), bsim.Buffer(800))
            else:
                comm.Barrier()
        return float(bsim.simulate(main, ranks=P, network=NET, protocol=protocol).elapsed)

    Ta, Tb = blocking("allreduce"), blocking("barrier")
    assert Ta > Tb > 0

    def overlap():
        comm = MPI.COMM_WORLD
        req = comm.Iallreduce(bsim.Buffer(800), bsim.Buffer(800))
        bsim.add_time(1e-3 if comm.rank == 0 else 0.0)
        req.Wait()

    def together():
        comm = MPI.COMM_WORLD
        MPI.Request.Waitall([comm.Iallreduce(bsim.Buffer(800), bsim.Buffer(800)),
                             comm.Ibarrier()])

    f = bsim.simulate(overlap, ranks=P, network=NET, protocol=protocol).finish
    g = bsim.simulate(together, ranks=P, network=NET, protocol=protocol).finish
    if protocol == "loggp":
        assert f[0] == 1e-3 and f[1:].tolist() == pytest.approx([Ta] * 3, rel=1e-12)
        assert g.tolist() == pytest.approx([Ta] * P, rel=1e-12)   # max(Ta, Tb) = Ta
    else:
        assert f[0] == pytest.approx(1e-3 + Ta, rel=1e-12)
        assert g.tolist() == pytest.approx([Ta + Tb] * P, rel=1e-12)
