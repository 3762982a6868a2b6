"""PHASE Gram-Schmidt: band blocks dealt cyclically over the band groups (BSIM paper, Fig. 2).

Fig. 2 maps local block ``nb`` of band rank ``myir`` to global block
``nbss = (nb-1)*Ni + myir + 1`` and orthogonalizes it against the broadcast block
``nbs`` when ``nbss >= nbs + 1``.  These tests check the deal, the work per group
and the message sequence of every step against hand counts.
"""

from __future__ import annotations

from typing import Any

import pytest

import bsim
import skeletons.phase as phase
from skeletons import registry
from skeletons.phase import block_owner, later_blocks, main


def fig2_later(s: int, g: int, pb: int, nblk: int) -> int:
    """Fig. 2's loop transcribed (1-based): local blocks with nbss >= nbs + 1."""
    nbs = s + 1
    return sum(1 for nb in range(1, nblk + 1) if (nb - 1) * pb + g + 1 >= nbs + 1)


@pytest.mark.parametrize("pb,nblk", [(1, 3), (2, 2), (3, 5), (4, 4), (7, 2)])
def test_deal_follows_fig2(pb, nblk):
    """block_owner inverts nbss = (nb-1) Ni + myir + 1; later_blocks counts Fig. 2's if."""
    for g in range(pb):
        for nb in range(1, nblk + 1):
            assert block_owner((nb - 1) * pb + g, pb) == (g, nb - 1)
        for s in range(pb * nblk):
            assert later_blocks(s, g, pb, nblk) == fig2_later(s, g, pb, nblk)


def test_cc_blocks_per_group_by_hand():
    """4 groups x 4 blocks: group g holds global blocks g, 4+g, 8+g, 12+g, and each is
    orthogonalized against every earlier global block: CC for g + (4+g) + (8+g) + (12+g)
    = 24 + 4g blocks, i.e. 24/28/32/36 (a contiguous deal: 6/22/38/54)."""
    got = [sum(later_blocks(s, g, 4, 4) for s in range(16)) for g in range(4)]
    assert got == [24, 28, 32, 36]


def test_zgemm_work_per_group_by_hand():
    """pb = 4 groups x nblk = 4 blocks of nep = 1 band, nfp = 32, nproj = 0, free FFTs,
    dgemm at a flat 1 GFlop/s, network zero: calc is Gram-Schmidt's zgemms only.

    A block zgemm is 8 * 1 * 1 * 32 = 256 flops = 256 ns.  Group g: 4 normalizations
    + CC and the update for 24 + 4g blocks each = 4 + 2 (24 + 4g) = 52, 60, 68, 76 blocks.
    (The contiguous deal gave 4 + 2 (6, 22, 38, 54) = 16, 48, 80, 112.)
    """
    res = bsim.simulate(main, ranks=8, network="zero",
                        kwargs=dict(pb=4, pf=2, ne=16, nf=64, nblk=4, nproj=0,
                                    fft_flop_time=0.0, kernel="flat:rate=1e9", verbose=False))
    for rank in range(8):
        g = rank // 2
        blocks = 4 + 2 * (24 + 4 * g)
        assert res.calc[rank] == pytest.approx(blocks * 256e-9, rel=1e-12)
        # FFT flops are counted even when free: the same in every group
        assert res.returns[rank]["flops"] - res.returns[0]["flops"] == 8 * g * 256


def test_messages_per_step_with_uneven_bands():
    """pb = 3, nblk = 2, band_counts 4/2/2 (nep = 2, 1, 1), nf = 64 over pf = 2 (nfp = 32).

    Global blocks 0..5 belong to groups 0, 1, 2, 0, 1, 2 (nep_o = 2, 1, 1, 2, 1, 1);
    step s: the owner's normalization allreduce (nep_o^2), Bcast from root s % 3 of
    nfp nep_o = 64, 32, 32, 64, 32, 32 elements, then each group's CC allreduce of
    nep_o nep_g k elements, k = its blocks after s:
      group 0 (blocks 0, 3): s=0: norm 4, k=1 -> 4; s=1: k=1 -> 2; s=2: 2; s=3: norm 4.
      group 1 (blocks 1, 4): s=0: k=2 -> 4; s=1: norm 1, k=1 -> 1; s=2: 1; s=3: 2;
        s=4: norm 1.
      group 2 (blocks 2, 5): s=0: k=2 -> 4; s=1: k=2 -> 2; s=2: norm 1, k=1 -> 1;
        s=3: 2; s=4: 1; s=5: norm 1.
    """
    B = [("bcast", s % 3, c) for s, c in enumerate((64, 32, 32, 64, 32, 32))]
    want = {
        0: [("allreduce", 4), B[0], ("allreduce", 4), B[1], ("allreduce", 2), B[2],
            ("allreduce", 2), ("allreduce", 4), B[3], B[4], B[5]],
        1: [B[0], ("allreduce", 4), ("allreduce", 1), B[1], ("allreduce", 1), B[2],
            ("allreduce", 1), B[3], ("allreduce", 2), ("allreduce", 1), B[4], B[5]],
        2: [B[0], ("allreduce", 4), B[1], ("allreduce", 2), ("allreduce", 1), B[2],
            ("allreduce", 1), B[3], ("allreduce", 2), B[4], ("allreduce", 1),
            ("allreduce", 1), B[5]],
    }
    logs: dict[tuple[int, int], list[tuple[Any, ...]]] = {}
    original = phase._SCF.gram_schmidt

    def recorded(self: Any) -> None:
        log = logs.setdefault((self.g, self.wavec.Get_rank()), [])
        bandc, allreduce = self.bandc, self.allreduce

        class Band:
            def Bcast(self, buf: Any, root: int = 0) -> None:
                log.append(("bcast", root, buf.count))
                bandc.Bcast(buf, root=root)

        def counted(count: int) -> None:
            log.append(("allreduce", count))
            allreduce(count)

        self.bandc, self.allreduce = Band(), counted
        try:
            original(self)
        finally:
            self.bandc, self.allreduce = bandc, allreduce

    phase._SCF.gram_schmidt = recorded    # shared modules: the ranks see the patch
    try:
        bsim.simulate(main, ranks=6, network="zero", private_modules=False,
                      kwargs=dict(pb=3, pf=2, ne=8, nf=64, nblk=2, band_counts="4/2/2",
                                  nproj=0, verbose=False))
    finally:
        phase._SCF.gram_schmidt = original
    assert logs == {(g, f): want[g] for g in range(3) for f in range(2)}


def test_fft_speedup_divides_only_the_fft_step():
    """One rank, ne = 4, nf = 32, nblk = 1, nproj = 4, mesh 4^3 (as test_phase's by-hand
    case): FFT step 15.36 + 1.536 us at 1 ns/flop, 3 zgemms of 4,096 flops at 0.173 ns.
    speedup = 4, fft_speedup = 2: 16.896 / 2 + 3 * 0.708608 / 4 us; fft_speedup = 0 is
    speedup."""
    fft, zg = 6 * 4 * 640e-9 + 4 * 64 * 6e-9, 3 * 4096 * 0.173e-9
    for fs, want in ((2.0, fft / 2 + zg / 4), (0.0, (fft + zg) / 4)):
        res = bsim.simulate(main, ranks=1, network="zero",
                            kwargs=dict(pb=1, pf=1, ne=4, nf=32, nblk=1, nproj=4,
                                        speedup=4.0, fft_speedup=fs, verbose=False))
        assert res.returns[0]["time"] == pytest.approx(want, rel=1e-12)


def test_iterations_minimum_is_one():
    """The registry refuses iterations = 0 as main does (it used to list 0 as allowed)."""
    sk = registry.get("phase")
    assert sk.params["iterations"].minimum == 1
    with pytest.raises(ValueError, match="iterations=0 must be >= 1"):
        sk.resolve({"iterations": "0"})
