"""Collective schedules: rounds of messages, their data flow and their timing."""

from __future__ import annotations

import pytest

from netmodels.collective_costs import (
    ALGORITHMS,
    Analytic,
    CollectiveSpecError,
    bruck_blocks,
    chain,
    critical_path,
)
from netmodels.collective_schedules import evaluate, schedule, schedule_time
from netmodels.flat import Hockney, LogGP

SIZES = [1, 2, 3, 4, 5, 7, 8, 16, 33]
PAIRS = [(op, alg) for op, algs in ALGORITHMS.items() for alg in algs]
ROOTED = ("bcast", "reduce", "gather", "scatter")


def hockney(nbytes):
    # l = 1 us, w = 1 GB/s
    return 1e-6 + nbytes / 1e9


def flow(rounds, nprocs):
    """Which ranks' contributions each rank holds after *rounds* (a message carries
    everything its sender held when its round began)."""
    held = [{r} for r in range(nprocs)]
    for rnd in rounds:
        before = [set(h) for h in held]
        for src, dst, _ in rnd:
            held[dst] |= before[src]
    return held


# -- structure ---------------------------------------------------------------------------

def test_binomial_bcast_p8_rounds():
    """Binomial bcast on 8 ranks: farthest child first, as MPICH."""
    assert schedule("bcast", "binomial", 8, 100) == [
        [(0, 4, 100)],
        [(0, 2, 100), (4, 6, 100)],
        [(0, 1, 100), (2, 3, 100), (4, 5, 100), (6, 7, 100)],
    ]


def test_binomial_bcast_rotated_root():
    """A non-zero root rotates the tree: ranks are (relative + root) mod P."""
    assert schedule("bcast", "binomial", 4, 8, root=3) == [[(3, 1, 8)], [(3, 0, 8), (1, 2, 8)]]


def test_binomial_gather_p5_sizes():
    """Binomial gather on 5 ranks of 5000 B moves subtrees of 1, 2 and 1 blocks."""
    assert schedule("gather", "binomial", 5, 5000) == [
        [(1, 0, 1000), (3, 2, 1000)],
        [(2, 0, 2000)],
        [(4, 0, 1000)],
    ]


def test_recursive_doubling_allreduce_folds_extra_ranks():
    """On 6 ranks, ranks 1 and 3 fold into 0 and 2, four ranks exchange, then unfold."""
    rounds = schedule("allreduce", "recursive_doubling", 6, 8)
    assert rounds[0] == [(1, 0, 8), (3, 2, 8)]
    # virtual ranks 0..3 are real 0, 2, 4, 5
    assert rounds[1] == [(0, 2, 8), (2, 0, 8), (4, 5, 8), (5, 4, 8)]
    assert rounds[2] == [(0, 4, 8), (2, 5, 8), (4, 0, 8), (5, 2, 8)]
    assert rounds[3] == [(0, 1, 8), (2, 3, 8)]


def test_ring_and_pairwise_shapes():
    """Ring allgather sends to the right neighbour; pairwise alltoall shifts by k in round k."""
    assert schedule("allgather", "ring", 3, 300) == [[(0, 1, 100), (1, 2, 100), (2, 0, 100)]] * 2
    assert schedule("alltoall", "pairwise", 3, 300) == [
        [(0, 1, 100), (1, 2, 100), (2, 0, 100)],
        [(0, 2, 100), (1, 0, 100), (2, 1, 100)],
    ]


def test_dissemination_barrier_p5():
    """Dissemination on 5 ranks: 3 rounds, rank r signals r + 2^k mod 5 with 0 bytes."""
    rounds = schedule("barrier", "dissemination", 5, 0)
    assert len(rounds) == 3
    assert rounds[2] == [(0, 4, 0), (1, 0, 0), (2, 1, 0), (3, 2, 0), (4, 3, 0)]


def test_bruck_blocks_counts_set_bits():
    """bruck_blocks(P, k) counts the indices below P with bit k set."""
    # P=5: bit 0 -> {1, 3}, bit 1 -> {2, 3}, bit 2 -> {4}
    assert [bruck_blocks(5, k) for k in range(3)] == [2, 2, 1]
    for nprocs in range(1, 70):
        for k in range(8):
            assert bruck_blocks(nprocs, k) == sum(1 for i in range(nprocs) if i >> k & 1)


def test_uneven_sizes_are_floats():
    """Blocks that do not divide evenly are fractional bytes; even ones stay ints."""
    assert schedule("allgather", "ring", 3, 100)[0][0] == (0, 1, 100 / 3)
    assert isinstance(schedule("allgather", "ring", 4, 100)[0][0][2], int)


def test_one_rank_has_no_rounds():
    """Every collective on one rank is empty."""
    for op, alg in PAIRS:
        assert schedule(op, alg, 1, 100) == []


@pytest.mark.parametrize("op, alg", PAIRS)
@pytest.mark.parametrize("nprocs", SIZES)
def test_no_self_messages_and_ranks_in_range(op, alg, nprocs):
    """No schedule sends a message to its own rank or names a rank out of range."""
    for rnd in schedule(op, alg, nprocs, 64, root=nprocs // 2):
        assert rnd
        for src, dst, nbytes in rnd:
            assert src != dst and 0 <= src < nprocs and 0 <= dst < nprocs and nbytes >= 0


@pytest.mark.parametrize("op, alg", PAIRS)
@pytest.mark.parametrize("nprocs", SIZES)
def test_data_flow(op, alg, nprocs):
    """After the schedule every rank that needs a contribution holds it."""
    root = nprocs - 1
    held = flow(schedule(op, alg, nprocs, 64, root=root), nprocs)
    everyone = set(range(nprocs))
    if op in ("bcast", "scatter"):
        assert all(root in h for h in held)
    elif op in ("reduce", "gather"):
        assert held[root] == everyone
    elif op in ("scan", "exscan"):
        assert all(set(range(r + 1)) <= held[r] for r in range(nprocs))
    else:                                   # barrier and the all-to-all kind
        assert all(h == everyone for h in held)


def test_ring_allgather_moves_p_minus_1_blocks_per_rank():
    """Each rank of a ring allgather sends and receives P-1 blocks."""
    sent = [0] * 5
    received = [0] * 5
    for rnd in schedule("allgather", "ring", 5, 5000):
        for src, dst, nbytes in rnd:
            sent[src] += nbytes
            received[dst] += nbytes
    assert sent == received == [4000] * 5


# -- timing ------------------------------------------------------------------------------

def test_evaluate_binomial_bcast_by_hand():
    """Binomial bcast of 1000 B on 8 ranks: every rank is busy until 3 message times."""
    finish = evaluate(schedule("bcast", "binomial", 8, 1000), hockney)
    # One message: 1e-6 + 1000/1e9 = 2e-6.  Round 0: 0->4 ends at 2e-6; round 1: 0->2 and
    # 4->6 end at 4e-6; round 2: 0->1, 2->3, 4->5, 6->7 end at 6e-6.  Every rank sends or
    # receives in round 2, so all finish at 6e-6.
    assert finish == pytest.approx([6e-6] * 8, rel=1e-12)
    # On 5 ranks rank 4 (round 0) and rank 2 (round 1) finish early:
    # 0->4 at 2e-6; 0->2 at 4e-6; 0->1 and 2->3 at 6e-6
    assert evaluate(schedule("bcast", "binomial", 5, 1000), hockney) == pytest.approx(
        [6e-6, 6e-6, 6e-6, 6e-6, 2e-6], rel=1e-12)


def test_evaluate_serialises_ports():
    """A rank sends one message at a time and receives one at a time."""
    # linear gather on 4 ranks, 1 us each: root receives at 1, 2, 3 us
    assert evaluate([[(1, 0, 0), (2, 0, 0), (3, 0, 0)]], hockney) == pytest.approx(
        [3e-6, 1e-6, 2e-6, 3e-6], rel=1e-12)


def test_evaluate_waits_for_both_ends():
    """A message starts when sender and receiver have finished their earlier rounds."""
    # rank 1 arrives at 5 us; 0 -> 1 then takes 1 us: done at 6 us
    assert evaluate([[(0, 1, 0)]], hockney, start=[0.0, 5e-6]) == pytest.approx(
        [6e-6, 6e-6], rel=1e-12)


def test_evaluate_rejects_bad_messages():
    """Self messages, ranks out of range and negative sizes are refused."""
    with pytest.raises(ValueError, match="bad message"):
        evaluate([[(1, 1, 8)]], hockney, nprocs=2)
    with pytest.raises(ValueError, match="bad message"):
        evaluate([[(0, 2, 8)]], hockney, nprocs=2)
    with pytest.raises(ValueError, match="negative size"):
        evaluate([[(0, 1, -8)]], hockney)
    with pytest.raises(ValueError, match="start has"):
        evaluate([], hockney, nprocs=3, start=[0.0])


@pytest.mark.parametrize("op, alg", PAIRS)
@pytest.mark.parametrize("nprocs", SIZES)
def test_schedule_equals_analytic_twin(op, alg, nprocs):
    """On a contention-free Hockney network every schedule takes exactly its analytic time."""
    for nbytes in (0, 1000, 12345, 1 << 20):
        for root in {0, nprocs - 1}:
            expected = Analytic({op: alg}).time(op, nprocs, nbytes, hockney)
            assert schedule_time(op, alg, nprocs, nbytes, hockney, root) == expected


@pytest.mark.parametrize("p2p", [Hockney(latency=40e-6, bandwidth=100e6),
                                 LogGP(L=5.8e-6, o=14e-6, g=3.3e-6, G=1.3e-9),
                                 lambda n: 3e-6 + (n ** 0.5) * 1e-8])
def test_twin_exact_for_other_monotone_costs(p2p):
    """The twin equality holds for any message cost that grows with size."""
    for op, alg in PAIRS:
        for nprocs in SIZES:
            assert schedule_time(op, alg, nprocs, 5000, p2p) == chain(
                critical_path(op, alg, nprocs, 5000), p2p)


def test_default_algorithm_schedule():
    """algorithm=None expands MPICH's default choice."""
    assert schedule("allreduce", None, 8, 8000) == schedule("allreduce", "rabenseifner", 8, 8000)
    assert schedule("allgather", "default", 6, 60) == schedule("allgather", "bruck", 6, 60)


def test_power_of_two_only_algorithms_fall_back():
    """Recursive-doubling allgather on 6 ranks is expanded as Bruck, as it is costed."""
    assert schedule("allgather", "recursive_doubling", 6, 60) == schedule(
        "allgather", "bruck", 6, 60)
    assert schedule("bcast", "scatter_doubling_allgather", 6, 60) == schedule(
        "bcast", "scatter_ring_allgather", 6, 60)


def test_schedule_argument_errors():
    """Unknown ops/algorithms and bad roots or sizes raise errors naming the valid choices."""
    with pytest.raises(CollectiveSpecError, match="binomial, scatter_doubling_allgather"):
        schedule("bcast", "pipeline", 4, 8)
    with pytest.raises(CollectiveSpecError, match="unknown collective op"):
        schedule("allreduse", "ring", 4, 8)
    with pytest.raises(CollectiveSpecError, match="root"):
        schedule("bcast", "binomial", 4, 8, root=4)
    with pytest.raises(CollectiveSpecError, match="nbytes"):
        schedule("bcast", "binomial", 4, -8)
    with pytest.raises(CollectiveSpecError, match="nprocs"):
        schedule("bcast", "binomial", 0, 8)


def test_rabenseifner_reduce_gathers_as_the_mirror_of_its_halving():
    """MPICH's reduce_intra_reduce_scatter_gather.c: recursive halving at distance 1, 2,
    4 (``mask`` from 1 up) with halves of n/2, n/4, n/8, then the binomial gather to the
    root with ``mask`` from pof2/2 down, ``pof2 / (2 mask)`` blocks a step: ranks 4..7
    send one block (n/8) to 0..3, ranks 2, 3 two blocks to 0, 1, rank 1 four blocks to
    0.  bsim gathered nearest first, half the data travelling the farthest (a reduce cost
    up to 1.84 times an allreduce of the same size on a torus)."""
    rounds = schedule("reduce", "rabenseifner", 8, 8000)
    assert [sorted(r) for r in rounds[3:]] == [
        [(4, 0, 1000), (5, 1, 1000), (6, 2, 1000), (7, 3, 1000)],
        [(2, 0, 2000), (3, 1, 2000)],
        [(1, 0, 4000)]]
    assert [sorted({(abs(s - d), n) for s, d, n in r}) for r in rounds[:3]] == [
        [(1, 4000)], [(2, 2000)], [(4, 1000)]]


def test_a_reduce_is_never_dearer_than_the_allreduce_of_the_same_size():
    """An allreduce does all a reduce does and more: on 4-core nodes (twolevel) the two
    Rabenseifner schedules cost the same (the reduce ends where the allreduce's last
    exchanges begin, the same distance-1 partners), on a flat network too."""
    def p2p(src: int, dst: int, nbytes: float) -> float:   # nodes of 4 ranks
        return (5e-7 + nbytes / 5e9) if src // 4 == dst // 4 else (5e-6 + nbytes / 1e9)
    for P in (8, 16):
        times = {op: max(evaluate(schedule(op, "rabenseifner", P, 2**20), None, P,
                                  pair_cost=p2p)) for op in ("reduce", "allreduce")}
        assert times["reduce"] <= times["allreduce"]
        flat = {op: schedule_time(op, "rabenseifner", P, 2**20, lambda n: 5e-6 + n / 1e9)
                for op in ("reduce", "allreduce")}
        assert flat["reduce"] <= flat["allreduce"]


def test_scan_exchanges_both_ways_as_mpich_does():
    """MPICH's scan_intra_recursive_doubling.c (and exscan's): at mask = 1, 2, 4 every
    rank Sendrecv's with ``rank ^ mask`` when it exists.  bsim sent only ``r -> r + 2^k``,
    so low ranks finished without waiting for high ones: with rank 7 of 8 late by 100 us,
    ranks 0..6 ended at 6 us; in MPICH they all wait for it (analytic: 106 us)."""
    for op in ("scan", "exscan"):
        six = schedule(op, "recursive_doubling", 6, 80)
        assert [sorted(r) for r in six] == [
            [(0, 1, 80), (1, 0, 80), (2, 3, 80), (3, 2, 80), (4, 5, 80), (5, 4, 80)],
            [(0, 2, 80), (1, 3, 80), (2, 0, 80), (3, 1, 80)],
            [(0, 4, 80), (1, 5, 80), (4, 0, 80), (5, 1, 80)]]
        late = evaluate(schedule(op, "recursive_doubling", 8, 1000), lambda n: 1e-6 + n / 1e9,
                        start=[0.0] * 7 + [1e-4])
        assert late == pytest.approx([1e-4 + 3 * 2e-6] * 8)
