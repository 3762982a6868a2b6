"""DNS3D: the tutorial's pencil and transpose algebra by hand, the skeleton against it."""

from __future__ import annotations

import math

import pytest

import bsim
from skeletons.dns3d import main as dns3d_main
from skeletons.dns3d import run_flops
from skeletons.models import dns3d as model


def test_compute_time_by_hand():
    """64^3 on 4 x 2: N_pencils = 16 * 32 = 512; a 64-point FFT is 5 * 64 * 6 = 1,920 flops;
    T_comp = 4 * 512 * (64 T_RK + 9 * 3 * 1,920 t_flop)."""
    t = model.compute_time((64, 64, 64), 4, 2, t_flop=1e-9, t_rk=2e-8)
    assert t == pytest.approx(4 * 512 * (64 * 2e-8 + 9 * 3 * 1920e-9))
    assert model.transpose_time(1000.0, 1, lambda s: 1.0) == 0.0
    assert model.transpose_time(1000.0, 4, lambda s: s) == pytest.approx(3 * 8 * 250)


def test_each_direction_counts_its_own_ffts():
    """64 x 32 x 16 on 2 x 2: (32/2)(16/2) = 128 x-FFTs of 5 * 64 * 6 = 1,920 flops,
    (64/2)(16/2) = 256 y-FFTs of 5 * 32 * 5 = 800, (64/2)(32/2) = 512 z-FFTs of
    5 * 16 * 4 = 320: 614,400 flops = 5 V log2 V / P (V = 2^15), where the tutorial's
    N_pencils = 256 in every direction gives 256 * 3,040 = 778,240 (+26.7%).  A cubic
    grid is the tutorial's formula bit for bit."""
    assert model.fft_counts((64, 32, 16), 2, 2) == (128, 256, 512)
    flops = 128 * 1920 + 256 * 800 + 512 * 320
    assert flops == 614_400 == 5 * 2**15 * 15 // 4
    t = model.compute_time((64, 32, 16), 2, 2, t_flop=1e-9, t_rk=2e-8)
    assert t == pytest.approx(4 * (8192 * 2e-8 + 9 * flops * 1e-9), rel=1e-14)
    literal = model.tutorial_compute_time((64, 32, 16), 2, 2, t_flop=1e-9, t_rk=0.0)
    assert literal == pytest.approx(4 * 256 * 9 * 3040e-9, rel=1e-14)
    for grid, px, pz in [((64, 64, 64), 4, 2), ((128, 128, 128), 1, 1), ((96, 96, 96), 3, 4)]:
        n = grid[0]
        pencils = (n // px) * (n // pz)
        by_hand = 4 * pencils * (n * 2e-8 + 9 * sum(model.fft_time(k, 1e-9) for k in grid))
        assert model.compute_time(grid, px, pz, 1e-9, 2e-8) == by_hand
        assert model.tutorial_compute_time(grid, px, pz, 1e-9, 2e-8) == by_hand


def test_weak_scaling_fft_work_per_core_rises_with_log_v():
    """The tutorial's validation set-up (128^3 per core, n_x, n_y, n_z and p_x, p_z doubled
    in turn, 1 to 512 cores): FFT flops per core per step are 36 * 5 (V/P) log2 V, rising
    21 -> 30 in log2 V; the all-N_pencils count zig-zagged (+35% at 2, 16, 128 cores, -15%
    at 4, 32, 256) on the two grids in three that are not cubic."""
    grid, p, previous = [128, 128, 128], [1, 1], 0.0
    for step in range(10):
        prm = dict(nx=grid[0], ny=grid[1], nz=grid[2], px=p[0], pz=p[1], iterations=1)
        per_core = run_flops(prm) / (p[0] * p[1])
        assert per_core == 36 * 5 * 128**3 * (21 + step)
        assert per_core > previous
        previous = per_core
        grid[step % 3] *= 2
        p[step % 2] *= 2


def test_skeleton_on_a_flat_grid_by_hand():
    """64 x 32 x 16 on 2 x 2 over Hockney, clog collectives: the step is the counted FFTs
    (614,400 flops), 4 V/P T_RK, 32 + 36 transposes of one 8 * 8192 / 2-byte shift each,
    the allreduce and the two Splits; each transpose sends the (p - 1)/p V/P remote points
    of the tutorial's volume table, 8 bytes each."""
    lat, bw, c, d = 2e-6, 1e9, 3e-6, 4e-6
    kw = dict(nx=64, ny=32, nz=16, px=2, pz=2, t_flop=1e-9, t_rk=2e-8)
    res = bsim.simulate(dns3d_main, 4, network=f"hockney:latency={lat},bandwidth={bw}",
                        collectives=f"clog:c={c},d={d}", kwargs=kw, protocol="bsim")
    coll = c + d * 2
    shift = lat + 8 * 8192 / 2 / bw
    expected = 3 * coll + 4 * (8192 * 2e-8 + 9 * 614_400e-9) + (32 + 36) * shift
    assert res.elapsed == pytest.approx(expected, rel=1e-12)
    assert res.total_bytes == 4 * (32 + 36) * 8 * 8192 // 2


@pytest.mark.parametrize("px,pz", [(4, 2), (2, 4), (4, 4)])
def test_skeleton_equals_the_iteration_model_without_contention(px, pz):
    """Hockney network, BSIM receive rule, clog allreduce: the iteration is T_comp + 32
    Y<->X transposes of (px-1) shifts + 36 Y<->Z of (pz-1) + the collective, exactly."""
    lat, bw, c, d = 2e-6, 1e9, 3e-6, 4e-6
    grid = (64, 32, 64)
    kw = dict(nx=64, ny=32, nz=64, px=px, pz=pz, iterations=2, t_flop=1e-9, t_rk=2e-8,
              t_local=1e-9)
    res = bsim.simulate(dns3d_main, px * pz, network=f"hockney:latency={lat},bandwidth={bw}",
                        collectives=f"clog:c={c},d={d}", kwargs=kw, protocol="bsim")

    def m(nbytes: float) -> float:
        return lat + nbytes / bw

    coll = c + d * math.log2(px * pz)
    # + the set-up: two Comm.Split (collectives, c + d log2 P each under this clog)
    expected = 2 * coll + 2 * model.iteration_time(grid, px, pz, m, t_flop=1e-9, t_rk=2e-8,
                                                   t_local=1e-9, collective=coll)
    assert res.elapsed == pytest.approx(expected, rel=1e-12)
    # every shift is one message per rank: 32 (px-1) + 36 (pz-1) per iteration
    assert res.total_messages == 2 * px * pz * (32 * (px - 1) + 36 * (pz - 1))


def test_flops_and_peak():
    """The run's FFT flops: iterations * P * 4 * 9 * sum_d count_d 5 n_d log2 n_d."""
    prm = dict(nx=64, ny=64, nz=64, px=4, pz=2, iterations=3)
    assert run_flops(prm) == pytest.approx(3 * 8 * 4 * 512 * 9 * 3 * 1920)
    # any power-of-two grid: 36 3-D FFTs of 5 V log2 V flops per step
    prm = dict(nx=128, ny=64, nz=32, px=4, pz=2, iterations=3)
    assert run_flops(prm) == pytest.approx(3 * 36 * 5 * 2**18 * 18, rel=1e-14)


def test_runs_on_blue_waters_with_contention():
    """8 ranks of one QCM on the Blue Waters preset with fluid contention (the BSIM
    protocol's flows start when a receive is handled): it used to stop with "flow starts
    ... before now (more than the lookahead)" over 1e-17 s of float noise at t = 9.5 s."""
    from bsim.machines import network_spec
    kw = dict(nx=256, ny=256, nz=256, px=4, pz=2, t_flop=1e-9, t_rk=5e-8)
    res = bsim.simulate(dns3d_main, 8, network=network_spec("bluewaters"), contention="fluid",
                        kwargs=kw, protocol="bsim")
    comp = model.compute_time((256, 256, 256), 4, 2, 1e-9, 5e-8)
    assert comp < res.elapsed < 1.2 * comp


def test_a_machine_scales_the_rk_work_with_the_fft_flop():
    """``t_rk`` (50 ns) is assumed on the same 1 ns-per-flop machine as ``t_flop``: a preset
    sets ``t_flop`` from its peak and ``t_rk`` follows by the same ratio (it stayed 50 ns on
    every machine: 75% of the petascale preset's compute); a ``t_rk`` the user gives stays."""
    from bsim.cli.targets import load_target
    t = load_target("dns3d", {}, None, "petascale_torus")
    ratio = t.params["t_flop"] / 1e-9
    assert ratio < 0.1                                   # a faster machine than assumed
    assert t.params["t_rk"] == pytest.approx(50e-9 * ratio, rel=1e-12)
    assert "t_rk scaled with t_flop" in t.kernel_model
    mine = load_target("dns3d", {"t_rk": 7e-9}, None, "petascale_torus")
    assert mine.params["t_rk"] == 7e-9
    assert load_target("dns3d", {}, None, None).params["t_rk"] == 50e-9


def test_a_given_fft_flop_time_scales_the_rk_work_as_the_machine_s_does():
    """With --machine, ``t_rk`` follows ``t_flop`` whoever set it (an outside review):
    giving the petascale preset's own ``t_flop`` gives the same parameters as leaving it
    to the preset (``t_rk`` stayed 50 ns, a 10% different prediction on bgp), and a
    what-if ``t_flop = 2 ns`` gives ``t_rk = 50 x 2 = 100 ns``."""
    from bsim.cli.targets import load_target
    chosen = load_target("dns3d", {}, None, "petascale_torus").params
    given = load_target("dns3d", {"t_flop": chosen["t_flop"]}, None, "petascale_torus")
    assert given.params["t_rk"] == chosen["t_rk"]
    slower = load_target("dns3d", {"t_flop": 2e-9}, None, "petascale_torus")
    assert slower.params["t_rk"] == pytest.approx(100e-9, rel=1e-12)
    assert "t_rk scaled with t_flop" in slower.kernel_model
