"""PHASE skeleton: message counts and sizes per SCF iteration, scale factors, load imbalance."""

from __future__ import annotations

import pytest
from conftest import needs_mpiexec, run_mpiexec

import bsim
from skeletons import registry
from skeletons.models.phase import zgemm_block_time
from skeletons.phase import band_split, expected_counts, fft_mesh, main, zgemm_time

KINDS = ("bcast", "bcast_bytes", "allreduce", "allreduce_bytes", "alltoall", "alltoall_bytes")


def run(network: str = "hockney:latency=4e-5,bandwidth=1e8", **kw):
    kw.setdefault("verbose", False)
    return bsim.simulate(main, ranks=kw.get("pb", 4) * kw.get("pf", 8), network=network,
                         kwargs=kw)


def test_counts_of_a_hand_checked_case():
    """pb=2, pf=2, nblk=2, ne=8 (nep=2), nf=64 (nfp=32), nproj=4, fft_grid=1 (mesh 4^3).

    Blocks are dealt cyclically (Fig. 2): group 0 holds global blocks 0 and 2,
    group 1 blocks 1 and 3.  Band group 0 per iteration:
      bcast: pb*nblk = 4 calls of 16*nfp*nep = 1024 bytes -> 4096 bytes.
      allreduce: pseudo-potential 16*nloc*nproj = 16*4*4 = 256 bytes; 2 block
        normalizations of 16*nep^2 = 64 bytes; CC after block 0 and after block 1
        (1 later local block, block 2: 64 bytes each); after blocks 2, 3: none.
        5 calls, 256 + 128 + 128 = 512 bytes.
      alltoall: one batch of 4 bands: 4 calls of 16 * pf * ceil(4 * 64 / 4) = 2048 bytes.
    Band group 1 (blocks 1, 3): CC after block 0 (2 later blocks: 128 bytes), after
      blocks 1 and 2 (block 3: 64 each): allreduce 1 + 2 + 3 = 6 calls,
      256 + 128 + 128 + 64 + 64 = 640 bytes.
    """
    res = run(pb=2, pf=2, nblk=2, ne=8, nf=64, nproj=4, fft_grid=1.0)
    g0 = {k: res.returns[0][k] for k in KINDS}
    assert g0 == {"bcast": 4, "bcast_bytes": 4096, "allreduce": 5, "allreduce_bytes": 512,
                  "alltoall": 4, "alltoall_bytes": 8192}
    g1 = {k: res.returns[2][k] for k in KINDS}
    assert g1["allreduce"] == 6 and g1["allreduce_bytes"] == 640
    assert res.returns[0]["mesh"] == 4


@pytest.mark.parametrize("kw", [
    dict(),
    dict(pb=3, pf=4, ne=60, nblk=5, nescale=4, nfscale=8, fft_batch=3),
    dict(band_counts="28/12/12/12", iterations=2),
    dict(pb=1, pf=4, nblk=3, ne=30),
])
def test_counts_match_documented_formulas(kw):
    """Every rank's calls and bytes per iteration equal expected_counts (the documented ones)."""
    res = run(**kw)
    pf, iters = kw.get("pf", 8), kw.get("iterations", 1)
    args = {k: kw[k] for k in ("nescale", "nfscale", "fft_batch", "band_counts") if k in kw}
    for rank, got in enumerate(res.returns):
        exp = expected_counts(kw.get("ne", 64), kw.get("nf", 4096), kw.get("pb", 4), pf,
                              kw.get("nblk", 4), rank // pf, **args)
        assert {k: got[k] for k in KINDS} == {k: v * iters for k, v in exp.items()}


def test_scale_factors_scale_message_sizes():
    """nescale multiplies band counts, nfscale wavenumber counts: bcast bytes scale by both."""
    base = run(pb=2, pf=2, ne=8, nf=64, nblk=2).returns[0]
    scaled = run(pb=2, pf=2, ne=8, nf=64, nblk=2, nescale=3, nfscale=5).returns[0]
    assert scaled["bcast_bytes"] == 15 * base["bcast_bytes"]
    # the CC allreduces scale by nescale^2; the pseudo-potential one by nescale
    pseudo = 16 * 4 * 32            # 16 nloc nproj: scales by nescale only
    assert scaled["allreduce_bytes"] == 3 * pseudo + 9 * (base["allreduce_bytes"] - pseudo)


def test_zgemm_time_is_fig3_per_block():
    """zgemm_time(m, n, k) for m = n = Nep, k = Nfp is Fig. 3's time per block (Nblk = 1)."""
    assert zgemm_time(40, 40, 500) == pytest.approx(zgemm_block_time(40, 500, 1))
    # mx = 2, nx = 8, jx = 16: (7.9e-8 + 2 * (0.512e-6*16 + 1.141e-6*8 + 0.666e-6*128)) / 2
    assert zgemm_time(40, 40, 500) == pytest.approx(
        (7.9e-8 + 2 * (0.512e-6 * 16 + 1.141e-6 * 8 + 0.666e-6 * 128)) / 2)
    assert zgemm_time(0, 4, 4) == 0.0


def test_band_split():
    """Even split, remainder to whole groups, explicit counts per group."""
    assert band_split(64, 4, 4) == [4, 4, 4, 4]
    assert band_split(72, 4, 4) == [5, 5, 4, 4]
    assert band_split(64, 4, 4, "28/12/12/12") == [7, 3, 3, 3]
    with pytest.raises(ValueError, match="multiple of nblk"):
        band_split(64, 4, 4, "30/10/12/12")


def test_fft_mesh():
    """n = ceil((fft_grid nf nfscale)^(1/3)): 2 * 4096 = 8192 -> 21 (20^3 = 8000 < 8192)."""
    assert fft_mesh(4096, 1, 2.0) == 21
    assert fft_mesh(32, 2, 1.0) == 4


def test_uneven_bands_grow_wait_time():
    """The BSIM paper Sec. IV.D: an uneven band distribution shows up as wait (load imbalance).

    Same total bands (64) on 4 groups: 16 each vs 28/12/12/12.  Scale factors
    make the block sizes span several zgemm tiles so work follows band counts.
    """
    kw = dict(pb=4, pf=4, ne=64, nblk=4, nescale=32, nfscale=16, nf=1024)
    even = run(**kw)
    uneven = run(band_counts="28/12/12/12", **kw)
    assert uneven.wait.mean() > 1.5 * even.wait.mean()
    assert uneven.returns[0]["time"] > even.returns[0]["time"]
    for r in (even, uneven):
        assert r.finish == pytest.approx(r.calc + r.wait + r.comm)
    # the light groups wait for the heavy one: their wait exceeds its own
    heavy, light = uneven.wait[:4].mean(), uneven.wait[4:].mean()
    assert light > heavy


def test_registered_and_listed():
    """`bsim run phase` finds it with its parameters."""
    sk = registry.get("phase")
    for name in ("ne", "nf", "pb", "pf", "nblk", "nescale", "nfscale", "iterations"):
        assert name in sk.params
    assert sk.ranks(sk.resolve({"pb": "3", "pf": "5"})) == 15


def test_wrong_rank_count_raises():
    """pb*pf must equal the world size."""
    with pytest.raises(bsim.RankError, match="pb\\*pf"):
        bsim.simulate(main, ranks=3, kwargs=dict(pb=2, pf=2, verbose=False))


@pytest.mark.parametrize("zgemm", ["fig3", "flops"])
def test_one_rank_iteration_time_by_hand(zgemm):
    """pb = pf = 1, ne = 4, nf = 32, nblk = 1, nproj = 4: the iteration time summed by hand.

    One rank: no messages, so time = the sum of the kernel times.  mesh n = ceil(64^(1/3))
    = 4, nep = nloc = 4, nfp = 32, one FFT batch of 4 bands:
      FFT: 2 directions x 3 steps of 4 * (16 * 5 * 4 * log2 4 = 640) flops * 1 ns = 15.36 us
           + V_loc 4 * 64 * 6 * 1 ns = 1.536 us;
      pseudo-potential: 2 zgemms of (4 x 4, k = 32); Gram-Schmidt: 1 block normalization of
      (Nep = 4, Nfp = 32), no later block (nbsn = 2 > nblk).  ``fig3``: all three have
      mx = 1, nx = 8, jx = 1: (7.9e-8 + 0.512 + 8 * 1.141 + 8 * 0.666 us) / 2 = 7.5235 us.
      ``flops``: each is 8 * 4 * 4 * 32 = 4,096 flops, below Fig. 4's 10 MFlop break:
      4,096 * 0.173 ns = 0.708608 us.
    """
    res = run("zero", pb=1, pf=1, ne=4, nf=32, nblk=1, nproj=4, fft_grid=2.0, zgemm=zgemm)
    t = res.returns[0]["time"]
    per_zgemm = 15.047e-6 / 2 if zgemm == "fig3" else 4096 * 0.173e-9
    expected = 6 * 4 * 640 * 1e-9 + 4 * 64 * 6 * 1e-9 + 3 * per_zgemm
    assert t == pytest.approx(expected, rel=1e-12)          # 39.4665 us / 19.021824 us
    # flops: FFT 6 * 4 * 640 + V_loc 4 * 64 * 6 + 3 zgemms of 4,096
    assert res.returns[0]["flops"] == 6 * 4 * 640 + 4 * 64 * 6 + 3 * 4096
    assert res.returns[0]["mesh"] == 4
    assert res.calc[0] == pytest.approx(expected, rel=1e-12)


@needs_mpiexec
def test_runs_under_real_mpiexec():
    """Under real mpiexec -n 4 the skeleton completes and counts as in the simulation."""
    code = ("from skeletons.phase import main, expected_counts; from mpi4py import MPI\n"
            "out = main(pb=2, pf=2, ne=16, nf=256, nblk=2, band_counts='12/4', verbose=False)\n"
            "exp = expected_counts(16, 256, 2, 2, 2, MPI.COMM_WORLD.rank // 2,"
            " band_counts='12/4')\n"
            "ok = MPI.COMM_WORLD.gather(all(out[k] == v for k, v in exp.items()))\n"
            "if MPI.COMM_WORLD.rank == 0: print('done', all(ok), len(ok))")
    out = run_mpiexec(4, code)
    assert out.returncode == 0, out.stderr
    assert "done True 4" in out.stdout


def test_the_fig3_formula_as_transcribed_computes_faster_than_the_core():
    """Fig. 3's zgemm formula, as printed, at the scale factors of a real run: above the
    6.4 GFlop/s Itanium 2 core's peak (AbovePeakError); the flop-counted zgemm at Fig. 4's
    dgemm rate (0.165 ns/flop = 6.06 GFlop/s) stays below it."""
    from skeletons.phase import SKELETON
    kw = dict(pb=1, pf=1, ne=64, nf=4096, nblk=2, nescale=32, nfscale=8, nproj=64,
              verbose=False)
    with pytest.raises(bsim.errors.AbovePeakError, match="above the machine's peak 6.4 GFlop/s"):
        bsim.simulate(main, 1, kwargs=dict(kw, zgemm="fig3"), machine="primequest",
                      flops=lambda returns: SKELETON.flops(kw, returns))
    res = bsim.simulate(main, 1, kwargs=dict(kw, zgemm="flops"), machine="primequest",
                        flops=lambda returns: SKELETON.flops(kw, returns))
    assert 0.5 * 6.4e9 < res.flops / res.elapsed < 1 / 0.165e-9
