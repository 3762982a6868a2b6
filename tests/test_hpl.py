"""HPL skeleton: flop accounting, zero-network bound, HPL's communication patterns, kernels."""

from __future__ import annotations

import math

import pytest
from conftest import needs_mpiexec, run_mpiexec

import bsim
from skeletons import registry
from skeletons.hpl import (
    BCASTS,
    KernelModel,
    bcast_steps,
    bexchange_plan,
    global_flops,
    main,
    numroc,
    panel_flops,
)
from skeletons.models.hpl import hpl_flops

USEFUL = ("pfact", "dtrsm", "dgemm", "backsolve")


def run(network: str = "hockney:latency=1e-5,bandwidth=1e9", **kw):
    kw.setdefault("verbose", False)
    return bsim.simulate(main, ranks=kw["p"] * kw["q"], network=network, kwargs=kw)


def lu_flops_unblocked(n: int) -> float:
    """Column-by-column LU of [A | b] plus the back solve, counted independently.

    Column i: idamax over n-i entries, dscal of n-i-1, rank-1 update of
    (n-i-1) x (n-i) (the remaining columns including b): 2 flops each.  Back
    solve: n^2.  Blocking (panels, dtrsm, dgemm) regroups these flops without
    changing their number.  Closed form: 2/3 n^3 + 2 n^2 - 2n/3.
    """
    return float(sum((n - i) + (n - i - 1) + 2 * (n - i - 1) * (n - i) for i in range(n)) + n * n)


@pytest.mark.parametrize("kw", [
    dict(n=200, nb=16, p=2, q=2, depth=0, bcast="1ring", swap="bexchange"),
    dict(n=203, nb=16, p=3, q=2, depth=1, bcast="2ringM", swap="long", pmap="col"),
    dict(n=150, nb=12, p=2, q=3, depth=1, bcast="blong", swap="mix", nbmin=2, ndiv=3),
    dict(n=128, nb=8, p=4, q=1, depth=1, bcast="blongM", swap="allgatherv", pivot="panel"),
])
def test_flops_sum_to_hpl_count(kw):
    """Sum over ranks of panel + dtrsm + dgemm + back-solve flops = the unblocked LU count."""
    res = run(**kw)
    n = kw["n"]
    total = sum(r[k] for r in res.returns for k in USEFUL)
    assert total == pytest.approx(lu_flops_unblocked(n), rel=1e-12)
    assert lu_flops_unblocked(n) == pytest.approx(2 / 3 * n**3 + 2 * n**2 - 2 * n / 3, rel=1e-12)
    # HPL credits 2/3 n^3 + 3/2 n^2: the difference is n^2/2 - 2n/3 = O(n^2)
    assert total - hpl_flops(n) == pytest.approx(n * n / 2 - 2 * n / 3, rel=1e-9)
    # the per-kind split matches the global formulas of the blocked algorithm
    g = global_flops(n, kw["nb"])
    for kind in USEFUL:
        assert sum(r[kind] for r in res.returns) == pytest.approx(g[kind], rel=1e-12)


def test_panel_flops_small_case():
    """A 3 x 2 panel: col 0: 3 + 2*(1 + 2) = 9; col 1: 2 + 1*1 = 3; total 12."""
    assert panel_flops(3, 2) == 12.0


@pytest.mark.parametrize("depth", [0, 1])
def test_zero_network_time_approaches_ideal_plus_panel_path(depth):
    """Zero network, flat rate r: ideal + crit <= T <= ideal + crit + N^2 NB (1/P + 1/Q) / r.

    ideal = (2/3 N^3) / (P Q r); crit = sum over panels of panel_flops / (P r)
    (each panel factorized on one process column of P ranks, on the critical
    path).  The excess is the block-cyclic imbalance (the busiest rank holds
    at most one extra NB block row and column of each trailing matrix) and the
    dtrsm every process row repeats, both O(N^2 NB): so T / (ideal + crit) -> 1
    as N / NB grows.
    """
    rate, nb, p, q = 1e9, 16, 2, 2
    ratios = []
    for blocks in (8, 16, 32):
        n = nb * blocks
        t = run("zero", n=n, nb=nb, p=p, q=q, depth=depth, kernel="flat:rate=1e9",
                bcast="1ring", swap="bexchange").returns[0]["time"]
        ideal = 2 * n**3 / (3 * p * q * rate)
        crit = sum(panel_flops(n - j, min(nb, n - j)) for j in range(0, n, nb)) / (p * rate)
        assert ideal + crit <= t <= ideal + crit + n * n * nb * (1 / p + 1 / q) / rate
        ratios.append(t / (ideal + crit))
    assert ratios[0] > ratios[1] > ratios[2] > 1.0


def test_flat_rate_single_rank_time_is_flops_over_rate():
    """1 x 1 grid, zero network: every flop is on rank 0, so T = flops / rate exactly."""
    n, nb = 100, 10
    res = run("zero", n=n, nb=nb, p=1, q=1, kernel="flat:rate=2e9")
    assert res.returns[0]["time"] == pytest.approx(lu_flops_unblocked(n) / 2e9, rel=1e-12)
    assert res.returns[0]["gflops"] == pytest.approx(hpl_flops(n) / res.returns[0]["time"] / 1e9)


def test_pivot_exchange_per_column_message_count():
    """pivot=column: each panel column is one binary exchange: log2(P) messages per rank.

    P = 4, Q = 1, depth 0, bexchange swap: per panel each rank sends log2 4 = 2
    pivot messages per column (jb columns) and 2 swap messages (one per round)
    when trailing columns remain; the panel bcast is empty (Q = 1) and the back
    solve sends no row messages (Q = 1).  n = 32, nb = 8: 4 panels, 3 of them
    with trailing columns, plus the last panel's column b: all 4 swap.
    """
    res = run(n=32, nb=8, p=4, q=1, depth=0, swap="bexchange")
    per_rank = 4 * 8 * 2 + 4 * 2
    assert list(res.messages) == [per_rank] * 4
    res = run(n=32, nb=8, p=4, q=1, depth=0, swap="bexchange", pivot="panel")
    assert list(res.messages) == [4 * 2 + 4 * 2] * 4


def test_bexchange_plan_non_power_of_two():
    """P = 6, root 0: ranks 4, 5 fold into 0, 1; butterfly over 0..3; results sent back."""
    assert bexchange_plan(4, 6, 0) == [(0, -1), (-1, 0)]
    assert bexchange_plan(0, 6, 0) == [(-1, 4), (1, 1), (2, 2), (4, -1)]
    assert bexchange_plan(3, 6, 0) == [(2, 2), (1, 1)]
    # relative to the root: with root 2, relative rank 0 is rank 2
    assert bexchange_plan(2, 6, 2) == [(-1, 0), (3, 3), (4, 4), (0, -1)]


@pytest.mark.parametrize("variant", [v for v in BCASTS if v != "ibcast"])
@pytest.mark.parametrize("size", [2, 3, 5, 8])
def test_bcast_delivers_whole_panel_to_everyone(variant, size):
    """Every non-root receives the whole panel: once (rings) or as pieces (spread-roll).

    Spread-roll: a rank gets its subtree's pieces from its parent (its own piece
    and those it forwards) and, in the roll, every piece but its own, so it
    receives ``count + subtree - own piece >= count`` elements.
    """
    count = 6 * size
    for d in range(1, size):
        got = sum(r[1] for _, r in bcast_steps(variant, d, size, count) if r is not None)
        if variant.startswith("blong") and not (variant == "blongM" and d == 1):
            assert count <= got < 2 * count
        else:
            assert got == count
    sends = {d: [x for s, _ in bcast_steps(variant, d, size, count) for x, _ in s]
             for d in range(size)}
    assert all(0 <= x < size for v in sends.values() for x in v)


def test_ring_topologies():
    """1ring: 0->1->2->3->4; 1ringM: 0->1, 0->2->3->4; 2ringM: 0->1, 0->2->3, 0->4."""
    def edges(variant, size=5):
        return sorted((d, x) for d in range(size)
                      for s, _ in bcast_steps(variant, d, size, 1) for x, _ in s)
    assert edges("1ring") == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert edges("1ringM") == [(0, 1), (0, 2), (2, 3), (3, 4)]
    assert edges("2ring") == [(0, 1), (0, 3), (1, 2), (3, 4)]
    assert edges("2ringM") == [(0, 1), (0, 2), (0, 4), (2, 3)]


def test_numroc():
    """10 rows in blocks of 3 on 2 processes: blocks 0, 2 (3 + 3) and 1, 3 (3 + 1)."""
    assert [numroc(10, 3, i, 2) for i in range(2)] == [6, 4]
    assert [numroc(7, 2, i, 3) for i in range(3)] == [3, 2, 2]


def test_kernel_models(tmp_path):
    """Preset piecewise fit, flat rate and a user table give the expected seconds."""
    pq = KernelModel.build("primequest")
    assert pq.dgemm(1e6) == pytest.approx(0.173e-3)
    assert pq.dgemm(20e6) == pytest.approx(0.173e-9 * 10e6 + 0.165e-9 * 10e6)
    ps = KernelModel.build("petascale_torus")
    # Fig. 4's shape at 63% of 512 GFlop/s: 10 MFlop at 0.173/0.165 times the large slope,
    # the rest at 1 / 322.56 GFlop/s
    large = 1 / 322.56e9
    assert ps.dgemm(322.56e9) == pytest.approx(10e6 * large * 0.173 / 0.165
                                               + (322.56e9 - 10e6) * large)
    assert ps.dgemm(1e6) == pytest.approx(1e6 * large * 0.173 / 0.165)
    assert KernelModel.build("flat:rate=1e9").dtrsm(5e8) == pytest.approx(0.5)
    f = tmp_path / "k.csv"
    f.write_text("kernel,flops,seconds\ndgemm,100,1e-6\ndgemm,200,1.5e-6\n")
    t = KernelModel.build(f"table:path={f}")
    assert t.dgemm(50) == pytest.approx(0.5e-6)
    assert t.dgemm(150) == pytest.approx(1.25e-6)
    assert t.idamax(300) == pytest.approx(2.0e-6)      # extrapolated; falls back to dgemm
    with pytest.raises(ValueError, match="flat needs"):
        KernelModel.build("flat:speed=1")


def test_bad_parameters_raise():
    """Unknown variants and a wrong rank count raise ValueError naming the parameter."""
    with pytest.raises(bsim.RankError, match="bcast"):
        run(n=16, nb=4, p=1, q=2, bcast="3ring")
    with pytest.raises(bsim.RankError, match="p\\*q"):
        bsim.simulate(main, ranks=3, kwargs=dict(n=16, nb=4, p=1, q=2, verbose=False))


def test_depth_one_hides_panel_factorization():
    """Look-ahead overlaps the next panel with the update: depth 1 is faster than depth 0."""
    kw = dict(n=512, nb=32, p=2, q=4, bcast="1ringM", swap="mix", kernel="primequest")
    t0 = run("hockney:latency=4e-5,bandwidth=1e8", depth=0, **kw).returns[0]["time"]
    t1 = run("hockney:latency=4e-5,bandwidth=1e8", depth=1, **kw).returns[0]["time"]
    assert t1 < t0


def test_registered_and_listed():
    """`bsim run hpl` finds it; its parameters carry HPL.dat names."""
    sk = registry.get("hpl")
    for name in ("n", "nb", "p", "q", "pfact", "nbmin", "ndiv", "bcast", "depth", "swap",
                 "swap_threshold", "pmap", "kernel"):
        assert name in sk.params
    assert sk.ranks(sk.resolve({"p": "3", "q": "5"})) == 15
    assert "swap_threshold" in sk.describe()


def test_memory_constant_in_n():
    """No matrix is allocated: the rank state does not grow with N (counters only)."""
    import tracemalloc
    small = run("zero", n=64, nb=8, p=2, q=2)
    tracemalloc.start()
    try:
        large = run("zero", n=4096, nb=8, p=2, q=2, pivot="panel")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert set(small.returns[1]) == set(large.returns[1])
    assert math.isfinite(large.returns[0]["time"])
    # a real 2 x 2 run would hold a 2048 x 2048 block of doubles per rank: 32 MiB each,
    # 128 MiB in all.  The simulation of all four ranks must stay far below one block.
    assert peak < 4 * 2**20


@needs_mpiexec
def test_runs_under_real_mpiexec():
    """Under real mpiexec -n 4 with mpi4py every broadcast and swap variant completes."""
    code = ("from skeletons.hpl import main; from mpi4py import MPI\n"
            "for b, s, d in [('1ring','bexchange',0), ('1ringM','mix',1), ('2ring','long',1),"
            " ('2ringM','long',0), ('blong','mix',1), ('blongM','allgatherv',1),"
            " ('ibcast','mix',1)]:\n"
            "    out = main(n=120, nb=8, p=2, q=2, bcast=b, swap=s, depth=d, verbose=False)\n"
            "ok = MPI.COMM_WORLD.gather('time' in out)\n"
            "if MPI.COMM_WORLD.rank == 0: print('done', ok)")
    out = run_mpiexec(4, code)
    assert out.returncode == 0, out.stderr
    assert "done [True, False, False, False]" in out.stdout


@pytest.mark.parametrize("table", [
    '{model = "linear", unit = "flops", slope = 5e-10, slope_var = 1e-4, rel_residual = 0.01}',
    '{model = "piecewise", unit = "flops", slope_small = 5e-10, slope_large = 1e-10, '
    'break_flops = 1e15, continuous = true, slope_small_var = 1e-3, rel_residual = 0.02}',
    '{model = "cache2", unit = "flops", b1 = 5e-10, b2 = 1e-10, s = 1e15}',
])
def test_a_table_bsim_fit_kernel_writes_prices_hpl(tmp_path, table):
    """[kernels.hpl_blas] dgemm as `bsim fit kernel` writes it (model, unit, *_var and
    rel_residual besides its parameters) is read by its formula: 5e-10 s per flop below a
    break no call reaches gives T = flops x 5e-10 on a 1 x 1 grid with a zero network (it
    was refused: 'expected {rate} or {slope_small, slope_large, break_flops}')."""
    path = tmp_path / "fitted.toml"
    path.write_text('name = "fitted"\ndescription = "d"\nsource = "s"\ncores_per_node = 1\n'
                    '[network]\nmodel = "zero"\n'
                    f'[kernels.hpl_blas]\ndgemm = {table}\n')
    n, nb = 100, 10
    res = run("zero", n=n, nb=nb, p=1, q=1, kernel=str(path))
    assert res.returns[0]["time"] == pytest.approx(lu_flops_unblocked(n) * 5e-10, rel=1e-12)


def test_a_fitted_table_over_other_units_is_refused(tmp_path):
    path = tmp_path / "cells.toml"
    path.write_text('name = "c"\ndescription = "d"\nsource = "s"\ncores_per_node = 1\n'
                    '[network]\nmodel = "zero"\n[kernels.hpl_blas]\n'
                    'dgemm = {model = "linear", unit = "cells", slope = 1e-9}\n')
    with pytest.raises(bsim.RankError, match="a fit over 'cells'"):
        run("zero", n=32, nb=8, p=1, q=1, kernel=str(path))
