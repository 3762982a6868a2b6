"""Collective prices an outside review derived by hand (docs/collectives.md's formulas).

Network: Hockney 1 us, 1 GB/s, so ``t(s) = 1 us + s ns``; protocol ``bsim``.  Every
expected time is built from the formulas of docs/collectives.md, never from bsim's output.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import bsim
from bsim import MPI
from bsim.errors import CollectiveMismatchError

NET = "hockney:latency=1e-6,bandwidth=1e9"
SOURCES = ["analytic", "algorithmic"]


def t(nbytes: float) -> float:
    """One message of *nbytes* on the test network, in seconds."""
    return 1e-6 + nbytes * 1e-9


def _intercomm(world, k: int):
    """Split *world* into ranks ``< k`` (group 0) and the rest; the intercommunicator."""
    color = 0 if world.rank < k else 1
    local = world.Split(color, world.rank)
    ic = local.Create_intercomm(0, world, k if color == 0 else 0, tag=7)
    local.Barrier()
    return ic, local, color


# -- 1. lowercase allgather ---------------------------------------------------------------

@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("comm_kind", ["world", "dup"])
def test_lowercase_allgather_is_priced_on_every_ranks_pickle(source, comm_kind):
    """8 ranks each allgather a 100 kB object (a pickle of L = 100,009 bytes).

    As mpi4py: an Allgather of the 8-byte lengths (recursive doubling on 64 B, P = 8:
    t(8) + t(16) + t(32)), then an Allgatherv of the pickles on the whole receive buffer,
    n = 8 L (recursive doubling, P a power of two: sum_{i<3} t(2^i L) = t(L) + t(2L) + t(4L)):
    3 us + 56 ns + 3 us + 7 L ns = 706.119 us at every rank, expanded or as a formula.
    Before, the expansion ran on one pickle (n = L: 90.5 us, less than the 700 us that
    700 kB take to arrive at 1 GB/s) and the formula left the lengths out (703.06 us)."""
    L = len(pickle.dumps(b"x" * 100000, pickle.HIGHEST_PROTOCOL))
    assert L == 100009

    def call(world):
        comm = world.Dup() if comm_kind == "dup" else world
        comm.Barrier()
        t0 = MPI.Wtime()
        got = comm.allgather(b"x" * 100000)
        assert got == [b"x" * 100000] * 8
        return MPI.Wtime() - t0

    res = bsim.simulate(lambda: call(MPI.COMM_WORLD), ranks=8, network=NET,
                        collectives=source, protocol="bsim")
    expected = t(8) + t(16) + t(32) + t(L) + t(2 * L) + t(4 * L)
    assert res.returns == pytest.approx([expected] * 8, rel=1e-12)


# -- 2. intercommunicator collectives expanded ---------------------------------------------

def _ic_allgather(world):
    ic, _, _ = _intercomm(world, 8)
    t0 = MPI.Wtime()
    ic.Allgather(np.zeros(12500), np.zeros(12500 * 8))   # 100 kB a rank
    return MPI.Wtime() - t0


def _ic_allreduce(world):
    ic, _, _ = _intercomm(world, 8)
    t0 = MPI.Wtime()
    ic.Allreduce(np.zeros(125000), np.zeros(125000))     # 1 MB
    return MPI.Wtime() - t0


@pytest.mark.parametrize("source", SOURCES)
def test_intercomm_allgather_expanded_moves_the_whole_group(source):
    """Groups of 8 + 8, Allgather of 100 kB a rank (docs: T_gather(|L|) + p2p + T_bcast(|L|)).

    Gather of n = 800 kB, binomial: t(100k) + t(200k) + t(400k) = 703 us; the leaders swap
    800 kB: t(800k) = 801 us; each leader broadcasts 800 kB, which every member knows (its
    receive buffer), so MPICH's rule picks scatter_ring_allgather (n >= 524288, P = 8):
    binomial scatter t(400k) + t(200k) + t(100k) = 703 us plus ring (P-1) t(n/P) =
    7 x 101 = 707 us.  Total 703 + 801 + 1410 = 2914 us at every rank.  Before, the
    expansion gathered one block (the leader ended at 891.5 us) and forwarded 0 bytes
    below depth 1."""
    res = bsim.simulate(lambda: _ic_allgather(MPI.COMM_WORLD), ranks=16, network=NET,
                        collectives=source, protocol="bsim")
    expected = (t(1e5) + t(2e5) + t(4e5)) + t(8e5) + (t(4e5) + t(2e5) + t(1e5) + 7 * t(1e5))
    assert res.returns == pytest.approx([expected] * 16, rel=1e-12)


@pytest.mark.parametrize("source", SOURCES)
def test_intercomm_allreduce_expanded_matches_the_formula(source):
    """Groups of 8 + 8, Allreduce of n = 1 MB: local reduce, Rabenseifner (n > 2048):
    halving t(500k) + t(250k) + t(125k) = 878 us and a binomial gather of the same sizes,
    878 us; the leaders swap t(1 MB) = 1001 us; the broadcast, scatter_ring_allgather:
    878 + 7 t(125k) = 878 + 882 = 1760 us.  Total 1756 + 1001 + 1760 = 4517 us at every
    rank (before: 4004 us at the leaders, about 5005 elsewhere, expanded)."""
    res = bsim.simulate(lambda: _ic_allreduce(MPI.COMM_WORLD), ranks=16, network=NET,
                        collectives=source, protocol="bsim")
    halves = t(5e5) + t(2.5e5) + t(1.25e5)
    expected = 2 * halves + t(1e6) + halves + 7 * t(1.25e5)
    assert res.returns == pytest.approx([expected] * 16, rel=1e-12)


@pytest.mark.parametrize("source", SOURCES)
def test_intercomm_gather_leader_gathers_the_whole_group(source):
    """One root against a group of 8, Gather of 200 B a rank (1,600 B in all: below
    MPICH's 2,048, so through the group's leader; from 2,048 B the gather is linear,
    tests/test_inter_rooted_algorithms.py): the leader ends its binomial gather of
    1,600 B at t(200) + t(400) + t(800) (it then sends to the root; sends are free under
    ``bsim``).  Before, expanded, the leader gathered 200 B: a gather of one block."""
    def call(world):
        ic, local, color = _intercomm(world, 1)
        t0 = MPI.Wtime()
        if color == 0:
            ic.Gather(None, np.zeros(25 * 8), root=MPI.ROOT)
        else:
            ic.Gather(np.zeros(25), None, root=0)
        return MPI.Wtime() - t0

    res = bsim.simulate(lambda: call(MPI.COMM_WORLD), ranks=9, network=NET,
                        collectives=source, protocol="bsim")
    assert res.returns[1] == pytest.approx(t(200) + t(400) + t(800), rel=1e-12)


# -- 3. intercommunicator collectives choose their algorithm by size ----------------------

def test_intercomm_bcast_of_a_large_buffer_runs_scatter_ring_allgather():
    """Groups of 8 + 8, a 1 MB Bcast from group 0's rank 0: t(1 MB) to the other leader,
    then a local Bcast of 1 MB that every member knows (MPICH passes the count): P = 8,
    n >= 524288, scatter_ring_allgather: t(500k) + t(250k) + t(125k) + 7 t(125k) = 1760 us.
    The receiving group ends at 1001 + 1760 = 2761 us (before: binomial, 4004 us)."""
    def call(world):
        ic, local, color = _intercomm(world, 8)
        a = np.zeros(125000)
        t0 = MPI.Wtime()
        if color == 0:
            ic.Bcast(a, root=MPI.ROOT if local.rank == 0 else MPI.PROC_NULL)
        else:
            ic.Bcast(a, root=0)
        return MPI.Wtime() - t0

    res = bsim.simulate(lambda: call(MPI.COMM_WORLD), ranks=16, network=NET, protocol="bsim")
    expected = t(1e6) + t(5e5) + t(2.5e5) + t(1.25e5) + 7 * t(1.25e5)
    assert res.returns[8:] == pytest.approx([expected] * 8, rel=1e-12)
    assert res.collective_algorithms["bcast"].get("scatter_ring_allgather") == 1


def test_intercomm_allreduce_of_a_large_buffer_runs_rabenseifner():
    """Groups of 8 + 8, Allreduce of 1 MB, analytic: 1756 + 1001 + 1760 = 4517 us (the
    derivation of the expanded test above; before: binomial reduce and bcast, 7 t(1 MB)
    = 7007 us)."""
    res = bsim.simulate(lambda: _ic_allreduce(MPI.COMM_WORLD), ranks=16, network=NET,
                        protocol="bsim")
    halves = t(5e5) + t(2.5e5) + t(1.25e5)
    assert res.returns == pytest.approx([3 * halves + t(1e6) + 7 * t(1.25e5)] * 16,
                                        rel=1e-12)
    assert res.collective_algorithms["reduce"] == {"rabenseifner": 2}


# -- 4. intercommunicator reductions price the vector, not the bookkeeping ----------------

@pytest.mark.parametrize("k, nbytes", [(4, 1000), (64, 8)])
def test_intercomm_allreduce_broadcasts_only_the_vector(k, nbytes):
    """Groups of k + k, Allreduce of *nbytes* (small: binomial reduce and bcast, K = log2 k):
    K t(n) + t(n) + K t(n).  4 + 4, 1000 B: 5 t(1000) = 10.000 us; 64 + 64, 8 B:
    13 t(8) = 13.104 us.  Before, the broadcast also carried 8 bytes per member of the
    remote group's counts: 10.064 and 16.176 us (+23%)."""
    def call(world):
        ic, _, _ = _intercomm(world, k)
        t0 = MPI.Wtime()
        ic.Allreduce(np.zeros(nbytes // 8), np.zeros(nbytes // 8))
        return MPI.Wtime() - t0

    res = bsim.simulate(lambda: call(MPI.COMM_WORLD), ranks=2 * k, network=NET, protocol="bsim")
    K = k.bit_length() - 1
    assert max(res.returns) == pytest.approx((2 * K + 1) * t(nbytes), rel=1e-12)


def test_intercomm_reduce_scatter_block_broadcasts_only_the_vector():
    """Groups of 4 + 4, Reduce_scatter_block of 250 B a rank (a 1000 B vector): as the
    Allreduce above, 2 t(1000) + t(1000) + 2 t(1000) = 10.000 us (before 10.064)."""
    def call(world):
        ic, _, _ = _intercomm(world, 4)
        t0 = MPI.Wtime()
        ic.Reduce_scatter_block(np.zeros(1000, np.uint8), np.zeros(250, np.uint8))
        return MPI.Wtime() - t0

    res = bsim.simulate(lambda: call(MPI.COMM_WORLD), ranks=8, network=NET, protocol="bsim")
    assert max(res.returns) == pytest.approx(5 * t(1000), rel=1e-12)


# -- 5. a nonblocking collective never matches a blocking one -----------------------------

@pytest.mark.parametrize("protocol", ["bsim", "loggp"])
def test_ibarrier_does_not_match_barrier(protocol):
    """MPI 4.1 Sec. 6.12: rank 0's Ibarrier and the others' Barrier are a collective
    mismatch, reported as other mismatches are: both calls and both ranks."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            comm.Ibarrier().Wait()
        else:
            comm.Barrier()

    net = NET if protocol == "bsim" else "loggp:L=1e-6,o=0,g=0,G=1e-9"
    with pytest.raises(CollectiveMismatchError,
                       match=r"rank \d called (nonblocking )?barrier\(\), rank \d called "
                             r"(nonblocking )?barrier\(\)") as err:
        bsim.simulate(main, ranks=4, network=net, protocol=protocol)
    assert "nonblocking barrier()" in str(err.value)


def test_iallreduce_does_not_match_allreduce():
    """The same for an Iallreduce on rank 1 and an Allreduce on the others."""
    def main():
        comm = MPI.COMM_WORLD
        a, b = np.zeros(4), np.zeros(4)
        if comm.rank == 1:
            comm.Iallreduce(a, b).Wait()
        else:
            comm.Allreduce(a, b)

    with pytest.raises(CollectiveMismatchError, match=r"nonblocking allreduce\(op=SUM"):
        bsim.simulate(main, ranks=4, network=NET, protocol="bsim")
