"""The papers' closed-form models: Sweep3D (tutorial), MILC, HPL and PHASE (BSIM paper)."""

from __future__ import annotations

import math

import pytest

from bsim.machines import load_machine
from skeletons.models import hpl, milc, phase, sweep3d

# -- Sweep3D (modeling tutorial) --------------------------------------------------------------


def test_nsweep_counts_k_and_angle_blocks():
    """Nsweep = (nz/mk) * (mm/mmi): 100 planes in blocks of 10, 6 angles in blocks of 3."""
    assert sweep3d.nsweep(nz=100, mk=10, mm=6, mmi=3) == 20


@pytest.mark.parametrize("nz,mk,mm,mmi", [(100, 7, 6, 3), (100, 10, 6, 4), (0, 1, 6, 3)])
def test_nsweep_rejects_ragged_blocks(nz, mk, mm, mmi):
    """A block size that does not divide its extent (or a zero extent) is an error."""
    with pytest.raises(ValueError):
        sweep3d.nsweep(nz, mk, mm, mmi)


def test_zero_comm_octant_2x2_single_block():
    """px = py = 2, nz = mk, mm = mmi: one wavefront crossing 3 diagonals, (2+2-1)*Tcpu."""
    # Tcpu = it*jt*mk*mmi*Tcell = 10*10*10*3*120 ns = 3.6e-4 s; 3 steps.
    assert sweep3d.sweep_steps(2, 2, nz=10, mk=10, mm=3, mmi=3) == 3
    t = sweep3d.octant_time_nocomm(2, 2, 10, 10, 3, 3, it=10, jt=10)
    assert t == pytest.approx(3 * 3.6e-4, rel=1e-12)


@pytest.mark.parametrize("px,py,expected", [(1, 1, 20), (4, 3, 25), (8, 8, 34)])
def test_sweep_steps_pipeline_fill_plus_wavefronts(px, py, expected):
    """Steps = (px + py - 1) + (Nsweep - 1) with Nsweep = 20."""
    assert sweep3d.sweep_steps(px, py, 100, 10, 6, 3) == expected


def test_tmsg_at_the_es40_fit_size():
    """Tmsg(12000 B) = 11 us + 12000 * 3.4 ns = 51.8 us (tutorial ES40 parameters)."""
    assert sweep3d.tmsg(12000) == pytest.approx(51.8e-6, rel=1e-12)


def test_message_bytes_by_direction():
    """i-face jt*mk*mmi*8 = 6*10*3*8 = 1440 B; j-face it*mk*mmi*8 = 5*10*3*8 = 1200 B."""
    assert sweep3d.message_bytes(it=5, jt=6, mk=10, mmi=3) == (1440, 1200)


def test_octant_comm_matches_tutorial_formula_for_square_subgrids():
    """it == jt: Tcomm = (2(px+py-2) + 4(Nsweep-1)) Tmsg = 86 * 15.08 us for 4x3, Nsweep 20."""
    # L = 5*10*3*8 = 1200 B -> Tmsg = 11 us + 4.08 us = 15.08 us; 2*5 + 4*19 = 86 messages.
    t = sweep3d.octant_comm_time(4, 3, 100, 10, 6, 3, it=5, jt=5)
    assert t == pytest.approx(86 * 15.08e-6, rel=1e-12)


def test_octant_time_is_comp_plus_comm():
    """T = Tcomp + Tcomm (tutorial, Combining Pipelines)."""
    args = (4, 3, 100, 10, 6, 3, 5, 5)
    # Tcpu = it*jt*mk*mmi*Tcell = 5*5*10*3*120 ns = 90 us; (4+3-1) + (20-1) = 25 steps;
    # Tcomm = 86 Tmsg(1200 B) = 86 * 15.08 us (see the test above)
    comp, comm = 25 * 90e-6, 86 * 15.08e-6
    assert sweep3d.octant_comp_time(*args) == pytest.approx(comp, rel=1e-12)
    assert sweep3d.octant_time(*args) == pytest.approx(comp + comm, rel=1e-12)   # 3546.88 us


def test_octant_table_delays_and_total():
    """Delays 1, py, 1, px+py-1, ... total 2px + 4py + 2 (tutorial octant table)."""
    rows = sweep3d.octant_delays(4, 3)
    assert [r.octant for r in rows] == ["-i-j-k", "-i-j+k", "-i+j-k", "-i+j+k",
                                        "+i-j-k", "+i-j+k", "+i+j-k", "+i+j+k"]
    assert [r.delay for r in rows] == [1, 3, 1, 6, 1, 3, 1, 6]
    assert sum(r.delay for r in rows) == 2 * 4 + 4 * 3 + 2


def test_back_to_back_octants_share_a_corner():
    """The delay-1 pairs are the two k directions leaving one grid corner."""
    assert sweep3d.back_to_back_pairs() == [("-i-j-k", "-i-j+k"), ("-i+j-k", "-i+j+k"),
                                            ("+i-j-k", "+i-j+k"), ("+i+j-k", "+i+j+k")]


def test_pipeline_fills_tend_to_three():
    """(2p + 4p + 2)/(2p - 1): 14/3 for p = 2, -> 3 for large square grids (tutorial)."""
    assert sweep3d.pipeline_fills(2, 2) == pytest.approx(14 / 3)
    assert sweep3d.pipeline_fills(1000, 1000) == pytest.approx(3.0, abs=0.01)
    assert sweep3d.pipeline_fills(2, 8) != sweep3d.pipeline_fills(8, 2)


def test_iteration_on_one_process_is_eight_octants_of_blocks():
    """px = py = 1: 8 * Nsweep blocks back to back, no messages."""
    assert sweep3d.iteration_steps(1, 1, 100, 10, 6, 3) == 8 * 20
    assert sweep3d.iteration_comm_time(1, 1, 100, 10, 6, 3, 5, 5) == 0.0


def test_iteration_steps_2x2_single_block():
    """px = py = 2, Nsweep = 1: only the octant delays, 2*2 + 4*2 + 2 = 14 steps."""
    assert sweep3d.iteration_steps(2, 2, 10, 10, 3, 3) == 14


def test_iteration_comm_counts():
    """Iteration comm = 2(8N-1)(Ti+Tj) + 4(px-1)Ti + 8(py-1)Tj (documented generalisation)."""
    ti = sweep3d.tmsg(6 * 10 * 3 * 8)     # jt = 6
    tj = sweep3d.tmsg(5 * 10 * 3 * 8)     # it = 5
    expected = 2 * (8 * 20 - 1) * (ti + tj) + 4 * 3 * ti + 8 * 2 * tj
    assert sweep3d.iteration_comm_time(4, 3, 100, 10, 6, 3, it=5, jt=6) == pytest.approx(
        expected, rel=1e-12)


def test_sweep3d_time_scales_with_iterations():
    """Whole run = iterations * one iteration, with it = nx/px and jt = ny/py."""
    one = sweep3d.iteration_time(4, 3, 100, 10, 6, 3, it=5, jt=6)
    run = sweep3d.sweep3d_time(20, 18, 100, 4, 3, 10, 6, 3, iterations=3)
    assert run == pytest.approx(3 * one)
    with pytest.raises(ValueError):
        sweep3d.sweep3d_time(21, 18, 100, 4, 3, 10, 6, 3)


# -- MILC su3_rmd (MILC paper) ------------------------------------------------------


def test_kernel_time_two_level_cache():
    """Eq. 1 with BG/P FF: in cache b1*V, beyond s the rest at b2."""
    assert milc.kernel_time(1410e-6, 1479e-6, 1500, 1000) == pytest.approx(1.41)
    # 1500 * 1410 us + 2596 * 1479 us = 2.115 + 3.839484 s
    assert milc.kernel_time(1410e-6, 1479e-6, 1500, 4096) == pytest.approx(5.954484)
    with pytest.raises(ValueError):
        milc.kernel_time(1.0, 1.0, 1.0, -1)


def test_message_size_hypercube():
    """A(V) = 18 f V^(3/4): V = 4^4, f = 4 -> 18*4*64 = 4608 bytes; halves for CG."""
    assert milc.message_size_cubic(256, f=4) == pytest.approx(4608)
    assert milc.halo_sizes((4, 4, 4, 4), f=4) == pytest.approx((4608,) * 4)
    assert milc.message_size((4, 4, 4, 4), f=4) == pytest.approx(4608)


def test_message_size_unequal_extents():
    """Faces V/L_d of a 2x4x4x8 block are 128, 64, 64, 32 sites; mean face 72 sites."""
    assert milc.halo_sizes((2, 4, 4, 8), f=4) == pytest.approx((9216, 4608, 4608, 2304))
    assert milc.message_size((2, 4, 4, 8), f=4) == pytest.approx(72 * 72)


def test_local_extents_require_divisibility():
    """MILC needs p_d | n_d; 16^3 x 32 on 2x2x2x4 gives 8x8x8x8."""
    assert milc.local_extents((16, 16, 16, 32), (2, 2, 2, 4)) == (8, 8, 8, 8)
    with pytest.raises(ValueError):
        milc.local_extents((16, 16, 16, 32), (3, 2, 2, 4))


RUN = milc.MilcRun(trajecs=2, warms=1, steps=3, meas=2, niters=100)
# md_steps = 3 * (2 + 1) = 9; measurements = 2 // 2 = 1


def test_call_and_gather_counts():
    """Per-call gathers FF 1616, GF 828, LL 8, FL 288; CG 16/iter and 16/invocation."""
    assert milc.call_counts(RUN) == {"FF": 9, "GF": 9, "LL": 28, "FL": 28, "CG": 100,
                                     "CG_calls": 20}
    assert milc.gather_counts(RUN) == {"FF": 14544, "GF": 7452, "LL": 224, "FL": 8064,
                                       "CG": 1600, "CG_init": 320}


def test_eq3_coefficients():
    """3332 = 1616 + 828 + 3*(8 + 288) per step and 296 = 8 + 288 per measurement (Eq. 3)."""
    assert milc.n_messages(RUN) == {"A": 3332 * 9 + 296 * 1, "A/2": 1600, "A/6": 320}


def test_allreduce_count_eq4():
    """nred = niters + 2 (md_steps + 2 measurements) = 100 + 2 * (9 + 2) = 122 (Eq. 4)."""
    assert milc.n_allreduce(RUN) == 122


def test_p2p_time_counts_bytes():
    """With m(x) = x, Tp2p is the byte total: 30284*4608 + 1600*2304 + 320*768."""
    total = milc.p2p_time(lambda x: x, RUN, volume=256, f=4)
    assert total == pytest.approx(30284 * 4608 + 1600 * 2304 + 320 * 768)
    same = milc.p2p_time(lambda x: x, RUN, extents=(4, 4, 4, 4), f=4)
    assert same == pytest.approx(total)


def test_p2p_time_skips_uncut_dimensions():
    """A dimension with one process sends nothing: 3 of 4 dimensions pay."""
    cut = milc.p2p_time(lambda x: 1.0, RUN, extents=(4, 4, 4, 4), grid=(1, 2, 2, 2))
    assert cut == pytest.approx(0.75 * (30284 + 1600 + 320))


def test_serial_time_eq2():
    """Tser with b = 1, 10, 100, 1000, 10000 s/site for FF, GF, LL, FL, CG at V = 1."""
    kernels = {name: {"b1": b, "b2": b, "s": 0} for name, b in
               zip(("FF", "GF", "LL", "FL", "CG"), (1, 10, 100, 1000, 10000), strict=True)}
    # 9*(1 + 10 + 3*1100) + 1*1100 + 100*10000
    assert milc.serial_time(kernels, 1, RUN) == pytest.approx(1_030_899)


def test_allreduce_and_total_eq5():
    """Tred = c + d log2 P (XT5: 238 + 51*10 us at P = 1024); Tpar = Tser + Tp2p + Tcoll."""
    assert milc.allreduce_time(1024, 238e-6, 51e-6) == pytest.approx(748e-6)
    k = load_machine("xt5").kernels["milc"]
    m = milc.hockney(12.1e-6, 167 * 2**20)
    # Eq. 5 written out from the paper, independently of the module's helpers.  V = 4096
    # sites: A = 18 * 4 * 4096^(3/4) = 36864 B; RUN has (t+w) steps = 9, floor(t/meas) = 1.
    def eq1(name):
        b = k[name]
        return b["b1"] * min(b["s"], 4096) + b["b2"] * max(0, 4096 - b["s"])

    def msg(x):
        return 12.1e-6 + x / (167 * 2**20)

    tser = 9 * (eq1("FF") + eq1("GF") + 3 * (eq1("LL") + eq1("FL"))) + (eq1("LL") + eq1("FL")) \
        + 100 * eq1("CG")                                                        # Eq. 2
    tp2p = msg(36864) * (3332 * 9 + 296) + 16 * msg(18432) * 100 \
        + 16 * msg(6144) * (2 * 9 + 2 * 1)                                       # Eq. 3
    tcoll = (100 + 2 * (9 + 2 * 1)) * (238e-6 + 51e-6 * 9)                       # Eq. 4, P=512
    parts = tser + tp2p + tcoll
    assert milc.collective_time(RUN, 512, 238e-6, 51e-6) == pytest.approx(tcoll, rel=1e-12)
    assert milc.serial_time(k, 4096, RUN) == pytest.approx(tser, rel=1e-12)
    assert milc.p2p_time(m, RUN, volume=4096) == pytest.approx(tp2p, rel=1e-12)
    assert milc.total_time(k, m, RUN, 512, 238e-6, 51e-6, volume=4096) == pytest.approx(
        parts, rel=1e-12)
    ext = milc.local_extents((32, 32, 32, 64), (4, 4, 4, 8))     # 8^4 = 4096 sites, P = 512
    assert milc.total_time(k, m, RUN, 512, 238e-6, 51e-6, extents=ext) == pytest.approx(
        parts, rel=1e-12)


def test_cg_only_time():
    """One CG solve: niters T(CG) + 16 niters m(A/2) + 16 m(A/6) + (niters + 1) Tred."""
    cg = {"b1": 1e-6, "b2": 2e-6, "s": 100}
    m = milc.hockney(1e-5, 1e8)
    a = milc.message_size_cubic(256)
    expected = (50 * milc.kernel_time(1e-6, 2e-6, 100, 256) + 16 * 50 * m(a / 2)
                + 16 * m(a / 6) + 51 * milc.allreduce_time(64, 1e-6, 2e-6))
    assert milc.cg_time(cg, m, 50, 64, 1e-6, 2e-6, volume=256) == pytest.approx(expected)


def test_power5_mixed_model_bandwidth():
    """m(x) = m_inter(x/2), congestion 8: asymptotic 2/(8 * 0.0011 us/B) ~ 227 MB/s (III-C 2)."""
    x = 1_000_000
    # half = 5e5 B > 32 KiB: 5.8 + 2*40 us + (5e5 - 1) * 8 * 1.1 ns
    assert milc.power5_message_time(x) == pytest.approx(85.8e-6 + 499_999 * 8.8e-9)
    slope = milc.power5_message_time(2 * x) - milc.power5_message_time(x)
    assert x / slope == pytest.approx(227e6, rel=0.005)


def test_machine_tables_match_paper_statements():
    """The MILC paper, Sec. V: XT5 beats XE6 in cache on force kernels but loses out of cache."""
    xt5 = load_machine("xt5").kernels["milc"]
    xe6 = load_machine("xe6").kernels["milc"]
    for name in ("FF", "GF", "FL"):
        assert xt5[name]["b1"] < xe6[name]["b1"]
    for name in milc.KERNELS:
        assert xt5[name]["b2"] > xe6[name]["b2"]


def test_bgp_core_slower_than_x86_in_cache():
    """The MILC paper, Sec. V: a BG/P core is roughly 4-7x slower in cache than the x86 cores."""
    bgp = load_machine("bgp").kernels["milc"]
    for other in ("xt5", "xe6", "ds1"):
        k = load_machine(other).kernels["milc"]
        for name in ("FF", "GF", "LL", "CG"):
            assert 4.0 <= bgp[name]["b1"] / k[name]["b1"] <= 7.5


# -- HPL (netlib scalability page, the BSIM paper) -------------------------------------------


def test_hpl_flops():
    """2/3 N^3 + 3/2 N^2 at N = 1000 is 668,166,666.67."""
    assert hpl.hpl_flops(1000) == pytest.approx(668_166_666.6667)


def test_petascale_hpl_is_about_1_5_exaflop():
    """The BSIM paper, Sec. IV.B: N = 1310720 needs about 1.5 EFlop."""
    assert hpl.hpl_flops(1_310_720) == pytest.approx(1.5e18, rel=0.01)


def test_dgemm_fit_piecewise():
    """0.173 ns/flop up to 10 MFlop, 0.165 above (BSIM paper, Fig. 4)."""
    assert hpl.dgemm_time(1e6) == pytest.approx(1.73e-4)
    assert hpl.dgemm_time(1e7) == pytest.approx(1.73e-3)
    assert hpl.dgemm_time(2e7) == pytest.approx(1.73e-3 + 1.65e-3)
    assert hpl.dgemm_time(2e7, continuous=False) == pytest.approx(3.3e-3)
    assert hpl.dgemm_flops(100, 200, 300) == 12_000_000
    with pytest.raises(ValueError):
        hpl.dgemm_time(-1)


@pytest.mark.parametrize("p,q,expected", [
    (1, 1, 0.666_666_667 + 0.02 + 1e-4),       # log2(1) = 0: alpha term N*P/NB
    (2, 2, 0.166_666_667 + 0.01 + 0.0103),      # alpha: 1e-5 * 1000 * (101 + 2) / 100
])
def test_thpl_by_hand(p, q, expected):
    """Thpl at N = 1000, NB = 100, alpha = 10 us, beta = 10 ns/word, gamma3 = 1 ns/flop."""
    assert hpl.hpl_time(1000, 100, p, q, 1e-5, 1e-8, 1e-9) == pytest.approx(expected, rel=1e-8)


def test_hpl_efficiency_closed_form():
    """E = 1 / (1 + 3b(3P+Q)/(4gN) + 3aPQ((NB+1)log2 P + P)/(2N^2 NB g))."""
    n, nb, p, q, a, b, g = 50_000, 192, 8, 16, 5e-6, 2e-9, 3e-11
    closed = 1 / (1 + 3 * b * (3 * p + q) / (4 * g * n)
                  + 3 * a * p * q * ((nb + 1) * math.log2(p) + p) / (2 * n**2 * nb * g))
    assert hpl.hpl_efficiency(n, nb, p, q, a, b, g) == pytest.approx(closed, rel=1e-12)
    assert hpl.hpl_efficiency(n, nb, p, q, 0.0, 0.0, g) == pytest.approx(1.0)


def test_hpl_phase_sum_converges_to_thpl():
    """The summed phase model approaches Thpl as N grows (lower-order terms fade)."""
    ratio = [hpl.hpl_time_phases(n, 100, 4, 4, 1e-5, 1e-8, 1e-9)
             / hpl.hpl_time(n, 100, 4, 4, 1e-5, 1e-8, 1e-9) for n in (2000, 20000)]
    assert ratio[1] < ratio[0]
    assert ratio[1] == pytest.approx(1.0, abs=0.03)


def test_hpl_time_machine_converts_bandwidth_to_words():
    """beta = 8 bytes / bandwidth."""
    assert hpl.hpl_time_machine(1000, 100, 2, 2, latency=1e-5, bandwidth=8e8,
                                seconds_per_flop=1e-9) == pytest.approx(
        hpl.hpl_time(1000, 100, 2, 2, 1e-5, 1e-8, 1e-9))


# -- PHASE zgemm block (BSIM paper, Fig. 3) -----------------------------------------------


def test_zgemm_block_time_smallest_tiles():
    """Nep = Nfp = 32: mx = 1, nx = 8, jx = 1 -> (7.9e-8 + 15.047 us... ) / 2 * Nblk."""
    # 7.9e-8 + 0.512e-6 + 8*1.141e-6 + 8*0.666e-6 = 15.047e-6
    assert phase.zgemm_tiles(32, 32) == (1, 8, 1)
    assert phase.zgemm_block_time(32, 32, nblk=4) == pytest.approx(15.047e-6 / 2 * 4)


def test_zgemm_scale_factors():
    """Nep*Nescale = 256, Nfp*Nfscale = 128 -> (8, 8, 4); 257 bands cross to (9, 16)."""
    assert phase.zgemm_tiles(32, 32, nescale=8, nfscale=4) == (8, 8, 4)
    # 7.9e-8 + 8*(4*0.512 + 8*1.141 + 32*0.666) us = 7.9e-8 + 259.904e-6
    assert phase.zgemm_block_time(32, 32, 1, nescale=8, nfscale=4) == pytest.approx(
        (7.9e-8 + 259.904e-6) / 2)
    assert phase.zgemm_tiles(257, 1)[:2] == (9, 16)
    assert phase.zgemm_block_time(32, 32, 0) == 0.0


def test_phase_message_counts():
    """Bcast Nfp*Nep*Nfscale*Nescale; allreduce Nep^2 (Nblk-nbsn+1) Nescale^2; 16 B each."""
    assert phase.bcast_count(10, 20, nescale=2, nfscale=3) == 1200
    assert phase.allreduce_count(10, nblk=5, nbsn=2, nescale=2) == 1600
    assert phase.bcast_bytes(10, 20, 2, 3) == 19200
    assert phase.allreduce_bytes(10, 5, 2, 2) == 25600
