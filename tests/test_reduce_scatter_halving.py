"""Recursive-halving reduce_scatter on a non-power of two sends MPICH's uneven halves.

MPICH's ``MPIR_Reduce_scatter_intra_recursive_halving`` (reduce_scatter_intra_recursive_
halving.c) first folds ``r = P - P2`` ranks into partners (the whole vector, ``t(n)``);
each of the first ``r`` survivors then carries two blocks (``newcnts``), so at each step
a pair's two halves differ in size.  Six ranks, ``b`` bytes per rank (``n = 6b``),
survivors carrying ``[2b, 2b, b, b]``:

* step 1 (distance 2): the lower half holds ``b + b = 2b``, the upper ``2b + 2b = 4b``:
  survivor 0 sends 2b and receives 4b;
* step 2 (distance 1): survivors 0 and 1 swap 2b each, survivors 2 and 3 b each;
* unfold: ``b`` back to each folded rank.

Critical path (port model, Hockney ``t(s) = 1 us + s / 1 GB/s``, b = 50,000 B):
``t(300 kB) + t(200 kB) + t(100 kB) + t(50 kB) = 301 + 201 + 101 + 51 = 654 us``; bsim
halved evenly (``t(n/2) + t(n/4)``: 579 us).  Powers of two are unchanged: 4 ranks x
100 kB, ``t(200 kB) + t(100 kB) = 302 us``.
"""

from __future__ import annotations

import pytest

import bsim
from bsim import MPI
from netmodels.collective_algorithms import chain, critical_path
from netmodels.collective_schedules import schedule, schedule_time

HOCKNEY = "hockney:latency=1e-6,bandwidth=1e9"


def t(s: float) -> float:
    return 1e-6 + s / 1e9


def test_six_ranks_send_mpichs_per_pair_sizes() -> None:
    """bsim folds rank 2i+1 into 2i (survivors: real ranks 0, 2, 4, 5); the sizes are
    MPICH's newcnts halves, derived above."""
    b = 50_000
    assert schedule("reduce_scatter", "recursive_halving", 6, 6 * b) == [
        [(1, 0, 6 * b), (3, 2, 6 * b)],                                  # fold
        [(0, 4, 2 * b), (2, 5, 2 * b), (4, 0, 4 * b), (5, 2, 4 * b)],    # distance 2
        [(0, 2, 2 * b), (2, 0, 2 * b), (4, 5, b), (5, 4, b)],            # distance 1
        [(0, 1, b), (2, 3, b)],                                          # unfold
    ]


@pytest.mark.parametrize(("P", "blocks"), [
    (6, (6, 4, 2, 1)),    # newcnts [2, 2, 1, 1]: 4 blocks, then 2
    (7, (7, 4, 2, 1)),    # newcnts [2, 2, 2, 1]: 4 (2 + 2 against 2 + 1), then 2
    (5, (5, 3, 2, 1)),    # newcnts [2, 1, 1, 1]: 3 (2 + 1 against 1 + 1), then 2
    (3, (3, 2, 1)),       # newcnts [2, 1]: 2 against 1
    (12, (12, 8, 4, 2, 1)),   # P2 = 8, r = 4: newcnts [2, 2, 2, 2, 1, 1, 1, 1]
])
def test_formula_and_schedule_follow_the_uneven_halves(P: int, blocks: tuple[int, ...]) -> None:
    """Time ``sum t(k b)`` over the blocks of the path (fold, steps, unfold), by hand from
    MPICH's newcnts; the schedule's evaluation is the same float."""
    b = 1000
    want = sum(t(k * b) for k in blocks)
    path = critical_path("reduce_scatter", "recursive_halving", P, P * b)
    assert [size for size, _ in path] == [k * b for k in blocks]
    assert chain(path, t) == pytest.approx(want, rel=1e-12)
    assert schedule_time("reduce_scatter", "recursive_halving", P, P * b, t) == chain(path, t)


def _reduce_scatter_block(P: int, b: int, collectives: str) -> bsim.Result:
    def main() -> None:
        comm = MPI.COMM_WORLD
        comm.Reduce_scatter_block(bsim.Buffer(b * comm.size), bsim.Buffer(b))
    return bsim.simulate(main, ranks=P, network=HOCKNEY, collectives=collectives, protocol="bsim")


def test_six_ranks_by_hand_analytic_and_expanded() -> None:
    """Analytic: every rank at 654 us.  Expanded under the bsim protocol (sends free, the
    receiver pays): ranks 1, 3 receive the fold at 0 and their partners 0, 2 pay it,
    301 us; 0 then receives 4b from rank 4 (sent at 0): 502; 0 and 2 swap 2b: 603; ranks
    1 and 3 receive their block: 654.  Ranks 4, 5 receive 2b from 0 and 2 (sent at 301):
    402, then swap b: 453."""
    b = 50_000
    res = _reduce_scatter_block(6, b, "analytic")
    assert res.finish.tolist() == pytest.approx([654e-6] * 6, rel=1e-12)
    res = _reduce_scatter_block(6, b, "algorithmic")
    assert res.finish.tolist() == pytest.approx(
        [603e-6, 654e-6, 603e-6, 654e-6, 453e-6, 453e-6], rel=1e-12)
    assert res.collective_algorithms == {"reduce_scatter": {"recursive_halving": 1}}
    for collectives in ("analytic", "algorithmic"):   # a power of two halves evenly, as before
        res = _reduce_scatter_block(4, 100_000, collectives)   # t(200 kB) + t(100 kB)
        assert res.finish.tolist() == pytest.approx([302e-6] * 4, rel=1e-12)
