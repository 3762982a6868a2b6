"""phase: first-principles MD (DFT, Car-Parrinello) parallelized over bands and wavenumbers.

PHASE (BSIM paper, Sec. III.B-C) distributes the bands and the plane-wave
coefficients (wavenumbers) over a ``pb x pf`` process grid: rank
``g * pf + f`` holds band group ``g`` and wavenumber slice ``f`` (``nfp = nf /
pf`` coefficients).  Band group ``g`` holds ``nblk`` blocks of ``nep_g`` bands
(``band_counts``; by default ``ne`` split as evenly as possible).  The blocks
are dealt **cyclically** over the groups, as in the BSIM paper's Fig. 2
(``nbss = (nb-1)*Ni + myir + 1``: local block ``nb`` of band rank ``myir`` is
global block ``nbss``, with ``Ni`` band groups): 0-based, global block ``s``
is local block ``s // pb`` of group ``s % pb``.  An uneven ``band_counts``
keeps this deal and changes the block sizes: every block of group ``g`` holds
``count_g / nblk`` bands, so a heavy group has a heavier block in every round
of ``pb`` global blocks.  Two communicators: the **band communicator** (the
``pb`` ranks of one wavenumber slice) and the **wavenumber communicator** (the
``pf`` ranks of one band group).

One self-consistent (SCF) iteration runs three kernels:

1. **Local potential with 3-D FFTs**: the local bands, ``fft_batch`` at a
   time, go to real space and back.  A 3-D FFT of an ``n^3`` mesh
   (``n^3 = fft_grid * nf * nfscale``) is three sets of 1-D FFTs (``n^2/pf``
   lines of ``5 n log2 n`` flops each) separated by two global transposes
   (``Alltoall`` on the wavenumber communicator, ``16 n^3 / pf`` bytes per
   band per rank, rounded up to ``pf`` equal blocks); forward and inverse,
   with ``6 n^3 / pf`` flops of potential product between them.
2. **Non-local pseudo-potential product**: ``zgemm`` of the local bands
   against ``nproj`` projectors (inner dimension ``nfp``), ``Allreduce`` of
   the ``bands x nproj`` projections on the wavenumber communicator,
   ``zgemm`` back.
3. **Gram-Schmidt orthogonalization** (BSIM paper, Fig. 2/3): for each global
   block ``s = 0 .. pb nblk - 1`` in order, its owner group ``o = s % pb``
   normalizes it (a zgemm of one block and an ``Allreduce`` of ``nep_o^2``)
   and ``Bcast``-s it (``PSI2``, ``nfp nep_o`` elements, root ``o``) on the
   band communicator; every group ``g`` with local blocks after ``s`` (Fig. 2:
   ``nbss >= nbs + 1``, i.e. local blocks ``nbsn .. nblk`` with 0-based
   ``nbsn - 1 = (s - g) // pb + 1``, clipped at 0) computes ``CC = PSI2^H PSI``
   for them (``nep_o x nep_g`` per block, inner ``nfp``), ``Allreduce``-s
   ``CC`` (``nep_o nep_g (nblk - nbsn + 1)`` elements) on the wavenumber
   communicator and updates them (``PSI -= PSI2 CC``, the same zgemm time).
   A group with no later block skips its (empty) allreduce (ASSUMED: Fig. 2
   does not show the code around it).  Over an iteration group ``g`` computes
   ``CC`` for ``sum_nb (nb pb + g) = pb nblk (nblk - 1) / 2 + g nblk`` blocks
   (each local block once per earlier global block): with ``pb = nblk = 4``,
   24/28/32/36 for the four groups (a contiguous deal would give 6/22/38/54).

Sizes are multiplied by the BSIM paper's scale factors: ``nescale`` on band
counts, ``nfscale`` on wavenumber counts, in both message sizes and kernel
times (Sec. III.C), so a small skeleton input stands for a large problem.
Times.  ``zgemm="flops"`` (default): a zgemm of an ``m x n`` result with
inner dimension ``k`` is ``8 m n k`` flops, timed by the ``kernel`` model's
dgemm (default ``primequest``: the BSIM paper's Fig. 4 fit, 0.173 ns/flop up
to 10 MFlop and 0.165 ns/flop above, on the same 1.6 GHz Itanium 2).
``zgemm="fig3"``: the Fig. 3 tile formula as transcribed
(``skeletons.models.phase``), for the Gram-Schmidt zgemms and, ASSUMED, the
pseudo-potential ones.  Read as seconds per 32 x 32 x 32 complex tile (8 *
32^3 = 262,144 flops), its 0.666 us term is 393 GFlop/s on a 6.4 GFlop/s
core: impossible.  It equals the Fig. 4 dgemm rate only for 4,096 flops per
tile (4,096 x 0.165 ns = 0.676 us), 64 times fewer, so a unit was lost in the
transcription; the flop-counted model replaces it and a run with ``fig3`` on a
machine with a peak stops with ``AbovePeakError``, whatever the FFT takes (each rank
returns ``kernel_flops``, ``zgemm`` and ``fft`` as ``[flops, modelled seconds]``, and
the peak check bounds each: ``flops <= seconds * share of peak``).  ``fft_flop_time`` per
FFT flop (ASSUMED 1 ns; ``--machine`` does not scale it: no source times an FFT).  The
zgemm times are divided by ``speedup`` and the FFT step's
times (1-D FFTs and the ``V_loc psi`` product) by ``fft_speedup`` (0: the same
``speedup``): a target core against the PRIMEQUEST core, e.g. the BSIM paper's
Table V SIMD factors, 6.9 for dgemm and 2.6 for a 1024-point FFT.  Every rank
returns its counters: calls and bytes per collective kind, its flops, and
(rank 0) the iteration time.
"""

from __future__ import annotations

import math
from typing import Any

import bsim
from bsim.machines.kernels import MachineKernel
from bsim.machines.peak import KERNEL_FLOPS

from .hpl_kernels import FIT_UNITS, KERNELS, KernelModel, generic_kernel
from .models.phase import (
    BYTES_PER_COMPLEX,
    ZGEMM_C0,
    ZGEMM_CJ,
    ZGEMM_CJN,
    ZGEMM_CN,
    zgemm_block_time,
)
from .registry import Param, Skeleton, grid, register

ZGEMM_MODELS = ("flops", "fig3")

__all__ = ["main", "SKELETON", "band_split", "block_owner", "later_blocks", "zgemm_time",
           "fft_mesh", "expected_counts"]


def band_split(ne: int, pb: int, nblk: int, band_counts: str = "") -> list[int]:
    """Bands per block of each band group: ``nep_g``.

    Default: ``nep_g = ne // (pb nblk)``, plus one for the first
    ``(ne mod pb nblk) // nblk`` groups (bands that do not fill a block in
    a whole group are dropped).  ``band_counts`` (``"28/12/12/12"``: bands
    per group, each a multiple of *nblk*) sets the split explicitly.  Raises
    :class:`ValueError` for empty groups or bad counts.
    """
    if band_counts:
        counts = [int(x) for x in str(band_counts).split("/")]
        if len(counts) != pb or any(c < nblk or c % nblk for c in counts):
            raise ValueError(f"phase: band_counts {band_counts!r} must give {pb} groups, each a "
                             f"positive multiple of nblk={nblk}")
        if sum(counts) != ne:
            raise ValueError(f"phase: band_counts {band_counts!r} hold {sum(counts)} bands, "
                             f"not ne={ne}")
        return [c // nblk for c in counts]
    base, extra = divmod(ne, pb * nblk)
    if base < 1:
        raise ValueError(f"phase: ne={ne} bands cannot fill {pb} x {nblk} blocks")
    return [base + (1 if g < extra // nblk else 0) for g in range(pb)]


def block_owner(s: int, pb: int) -> tuple[int, int]:
    """Global band block *s* (0-based) -> ``(band group, local block)``, both 0-based.

    The BSIM paper's Fig. 2, ``nbss = (nb-1)*Ni + myir + 1`` (``Ni = pb`` band
    groups, ``myir`` the band rank, ``nb`` the 1-based local block) read
    backwards: ``(s mod pb, s // pb)``.
    """
    ls, owner = divmod(s, pb)
    return owner, ls


def later_blocks(s: int, g: int, pb: int, nblk: int) -> int:
    """Local blocks of group *g* after global block *s*: ``Nblk - nbsn + 1`` of Fig. 2.

    Fig. 2 orthogonalizes local block ``nb`` against ``PSI2`` (block ``nbs = s + 1``)
    when ``nbss = (nb-1) pb + g + 1 >= nbs + 1``, i.e. 0-based ``nb >= (s - g) // pb + 1``;
    these are the last local blocks, so the count is
    ``max(0, nblk - max(0, (s - g) // pb + 1))``.
    """
    first = max(0, (s - g) // pb + 1)
    return max(0, nblk - first)


def zgemm_time(m: int, n: int, k: int) -> float:
    """One zgemm of an ``m x n`` result with inner dimension ``k`` by the Fig. 3 tile formula.

    ``(7.9e-8 + mx (0.512e-6 jx + 1.141e-6 nx + 0.666e-6 jx nx)) / 2`` with
    ``mx = (m-1)//32 + 1``, ``nx = ((n-1)//256 + 1) * 8``, ``jx = (k-1)//32 + 1``:
    the BSIM paper's zgemm block time for one block (Fig. 3 has ``m = n = Nep``,
    ``k = Nfp``); other shapes are an ASSUMED extension.
    """
    if m <= 0 or n <= 0 or k <= 0:
        return 0.0
    mx = (m - 1) // 32 + 1
    nx = ((n - 1) // 256 + 1) * 8
    jx = (k - 1) // 32 + 1
    return (ZGEMM_C0 + mx * (ZGEMM_CJ * jx + ZGEMM_CN * nx + ZGEMM_CJN * jx * nx)) / 2.0


def fft_mesh(nf: int, nfscale: int, fft_grid: float) -> int:
    """Points per side ``n`` of the FFT mesh: ``ceil((fft_grid * nf * nfscale)^(1/3))``."""
    return max(1, math.ceil((fft_grid * nf * nfscale) ** (1.0 / 3.0) - 1e-9))


def main(ne: int = 64, nf: int = 4096, pb: int = 4, pf: int = 8, nblk: int = 4,
         nescale: int = 1, nfscale: int = 1, nproj: int = 32, iterations: int = 1,
         fft_batch: int = 0, fft_grid: float = 2.0, fft_flop_time: float = 1.0e-9,
         speedup: float = 1.0, fft_speedup: float = 0.0, band_counts: str = "",
         kernel: str = "primequest", zgemm: str = "flops",
         verbose: bool = True) -> dict[str, Any]:
    """Run *iterations* SCF iterations; return this rank's counters (rank 0: ``time``)."""
    from mpi4py import MPI  # bsim's namespace inside a simulation, real mpi4py otherwise
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    if size != pb * pf:
        raise ValueError(f"phase: needs pb*pf = {pb * pf} ranks, running on {size}")
    for key, val in (("ne", ne), ("nf", nf), ("pb", pb), ("pf", pf), ("nblk", nblk),
                     ("nescale", nescale), ("nfscale", nfscale), ("iterations", iterations)):
        if not isinstance(val, int) or val < 1:
            raise ValueError(f"phase: {key} must be an int >= 1, got {val!r}")
    if nf % pf:
        raise ValueError(f"phase: nf={nf} wavenumbers must divide over pf={pf}")
    if not speedup > 0 or not fft_speedup >= 0 or not fft_flop_time >= 0:
        raise ValueError(f"phase: speedup must be > 0, fft_speedup >= 0 (0: speedup) and "
                         f"fft_flop_time >= 0, got {speedup!r}, {fft_speedup!r}, "
                         f"{fft_flop_time!r}")
    if isinstance(fft_grid, bool) or not isinstance(fft_grid, (int, float)) \
            or not 0 < fft_grid < math.inf:
        raise ValueError(f"phase: fft_grid (FFT points per plane wave) must be > 0, "
                         f"got {fft_grid!r}")
    if zgemm not in ZGEMM_MODELS:
        raise ValueError(f"phase: zgemm must be one of {', '.join(ZGEMM_MODELS)}, "
                         f"got {zgemm!r}")
    g, f = divmod(rank, pf)
    bandc = comm.Split(f, g)            # the pb ranks of one wavenumber slice
    wavec = comm.Split(pb + g, f)       # the pf ranks of one band group
    scf = _SCF(MPI, bandc, wavec, g, ne, nf, pb, pf, nblk, nescale, nfscale, nproj,
               fft_batch, fft_grid, fft_flop_time, speedup, fft_speedup or speedup,
               band_counts)
    scf.dgemm = KernelModel.build(kernel).dgemm if zgemm == "flops" else None
    cnt, n = scf.cnt, scf.n
    comm.Barrier()
    t0 = MPI.Wtime()
    for _ in range(iterations):
        scf.local_potential()
        scf.nonlocal_pseudopotential()
        scf.gram_schmidt()
    elapsed = MPI.Wtime() - t0
    tmax = comm.allreduce(elapsed, op=MPI.MAX)
    if rank == 0:
        cnt["time"] = tmax
        cnt["mesh"] = n
        if verbose:
            print(f"PHASE ne={ne}x{nescale} nf={nf}x{nfscale} grid {pb}x{pf} nblk={nblk} "
                  f"mesh {n}^3: {iterations} SCF iteration(s) in {tmax:.6g} s")
    return cnt


def expected_counts(ne: int, nf: int, pb: int, pf: int, nblk: int, g: int, nescale: int = 1,
                    nfscale: int = 1, nproj: int = 32, fft_batch: int = 0,
                    fft_grid: float = 2.0, band_counts: str = "") -> dict[str, int]:
    """Calls and bytes per SCF iteration of a rank of band group *g* (the documented formulas).

    ``bcast``: ``pb nblk`` calls of ``16 nfp nep_o nfscale nescale`` bytes
    (owner ``o = s mod pb`` of each block ``s``).  ``allreduce``: 1 (pseudo-potential,
    ``16 nloc nproj nescale``) + ``nblk`` normalizations (``16 nep^2 nescale^2``)
    + one per block step ``s`` with ``k = later_blocks(s, g, pb, nblk) > 0``
    (``16 nep_o nep k nescale^2``).  ``alltoall``: ``4 ceil(nloc / batch)`` of
    ``16 pf ceil(b nescale n^3 / pf^2)`` bytes (``pf`` equal blocks).
    """
    neps = band_split(ne, pb, nblk, band_counts)
    nep, nfp, nloc = neps[g], nf // pf, neps[g] * nblk
    n = fft_mesh(nf, nfscale, fft_grid)
    batch = nloc if fft_batch <= 0 else min(fft_batch, nloc)
    out = {"bcast": pb * nblk,
           "bcast_bytes": sum(16 * nfp * neps[s % pb] * nfscale * nescale
                              for s in range(pb * nblk)),
           "allreduce": 1 + nblk, "allreduce_bytes": 16 * nloc * nproj * nescale
           + nblk * 16 * nep * nep * nescale ** 2, "alltoall": 0, "alltoall_bytes": 0}
    for s in range(pb * nblk):
        k = later_blocks(s, g, pb, nblk)
        if k > 0:
            out["allreduce"] += 1
            out["allreduce_bytes"] += 16 * neps[s % pb] * nep * k * nescale ** 2
    done = 0
    while done < nloc:
        b = min(batch, nloc - done)
        out["alltoall"] += 4
        out["alltoall_bytes"] += 4 * 16 * pf * math.ceil(b * nescale * n ** 3 / (pf * pf))
        done += b
    return out


class _SCF:
    """One rank's part of a PHASE self-consistent-field iteration, one method per step."""

    def __init__(self, MPI: Any, bandc: Any, wavec: Any, g: int, ne: int, nf: int, pb: int,
                 pf: int, nblk: int, nescale: int, nfscale: int, nproj: int, fft_batch: int,
                 fft_grid: float, fft_flop_time: float, speedup: float,
                 fft_speedup: float, band_counts: str) -> None:
        self.bandc, self.wavec, self.g = bandc, wavec, g
        self.pb, self.pf, self.nblk, self.nproj = pb, pf, nblk, nproj
        self.nescale, self.nfscale = nescale, nfscale
        self.fft_flop_time, self.speedup, self.fft_speedup = fft_flop_time, speedup, fft_speedup
        self.neps = band_split(ne, pb, nblk, band_counts)
        self.nep, self.nfp = self.neps[g], nf // pf
        self.nloc = self.nep * nblk             # skeleton bands held by this rank
        self.cz = MPI.C_DOUBLE_COMPLEX
        self.IN_PLACE = MPI.IN_PLACE
        self.cnt: dict[str, Any] = {"bcast": 0, "bcast_bytes": 0, "allreduce": 0,
                                    "allreduce_bytes": 0, "alltoall": 0, "alltoall_bytes": 0,
                                    "flops": 0.0, KERNEL_FLOPS: {"zgemm": [0.0, 0.0],
                                                                 "fft": [0.0, 0.0]}}
        self.dgemm: Any = None   # flop-counted zgemm: the kernel model's dgemm; None: Fig. 3
        self.n = n = fft_mesh(nf, nfscale, fft_grid)
        self.pts = n ** 3 / pf                  # mesh points per rank
        self.phase_flops = (n * n / pf) * 5.0 * n * math.log2(n) if n > 1 else 0.0
        self.batch = self.nloc if fft_batch <= 0 else min(fft_batch, self.nloc)

    def add(self, seconds: float, flops: float = 0.0, speedup: float | None = None,
            kernel: str = "zgemm") -> None:
        """PRIMEQUEST kernel *seconds* divided by *speedup* (default ``self.speedup``, the
        zgemm factor) for the target core; count *flops*, in total and per *kernel*
        (``[flops, seconds]``, which the peak check bounds kernel by kernel:
        ``flops <= seconds * the rank's share of peak``, ``bsim/machines/peak.py``)."""
        t = seconds / (self.speedup if speedup is None else speedup)
        self.cnt["flops"] += flops
        mine = self.cnt[KERNEL_FLOPS][kernel]
        mine[0] += flops
        mine[1] += t
        bsim.add_time(t)

    def zgemm(self, m: int, n: int, k: int, calls: int = 1, fig3: float | None = None) -> None:
        """*calls* zgemms of an ``m x n`` result, inner dimension ``k`` (``8 m n k`` flops
        each): timed by the kernel model's dgemm, or *fig3* seconds (``zgemm="fig3"``)."""
        flops = 8.0 * m * n * k
        if self.dgemm is not None:
            self.add(calls * self.dgemm(flops) if flops > 0 else 0.0, calls * flops)
        else:
            self.add(fig3 if fig3 is not None else calls * zgemm_time(m, n, k), calls * flops)

    def allreduce(self, count: int) -> None:
        """Sum *count* complex values over the band group (the wavenumber slices)."""
        self.cnt["allreduce"] += 1
        self.cnt["allreduce_bytes"] += BYTES_PER_COMPLEX * count
        if self.pf > 1:
            self.wavec.Allreduce(self.IN_PLACE, bsim.buffer(count, self.cz))

    def local_potential(self) -> None:
        """Step 1: forward and inverse 3-D FFTs with their transposes, ``batch`` bands at a
        time, and ``V_loc(r) psi(r)`` in real space."""
        n, pf, cnt, done = self.n, self.pf, self.cnt, 0
        while done < self.nloc:
            b = min(self.batch, self.nloc - done)
            bands = b * self.nescale
            per_rank = pf * math.ceil(bands * n ** 3 / (pf * pf))   # elements per rank, pf blocks
            for direction in range(2):      # to real space, back to wavenumbers
                for step in range(3):
                    fl = bands * self.phase_flops
                    self.add(fl * self.fft_flop_time, fl, self.fft_speedup, "fft")
                    if step < 2:
                        cnt["alltoall"] += 1
                        cnt["alltoall_bytes"] += BYTES_PER_COMPLEX * per_rank
                        if pf > 1:
                            self.wavec.Alltoall(bsim.buffer(per_rank, self.cz),
                                                bsim.buffer(per_rank, self.cz))
                if direction == 0:
                    fl = bands * self.pts * 6.0           # V_loc(r) psi(r)
                    self.add(fl * self.fft_flop_time, fl, self.fft_speedup, "fft")
            done += b

    def nonlocal_pseudopotential(self) -> None:
        """Step 2: projections, their sum over wavenumbers, and the product back."""
        shape = (self.nloc * self.nescale, self.nproj, self.nfp * self.nfscale)
        self.zgemm(*shape)
        self.allreduce(self.nloc * self.nproj * self.nescale)
        self.zgemm(*shape)

    def gram_schmidt(self) -> None:
        """Step 3: Gram-Schmidt over the global band blocks, dealt cyclically (Fig. 2).

        Block ``s`` belongs to group ``s % pb`` (:func:`block_owner`); this group
        orthogonalizes its :func:`later_blocks` against it: ``CC`` is ``nep_o x nep``
        per block (inner ``nfp``), timed by Fig. 3 (``zgemm="fig3"``, one ``Nep``
        when ``nep_o = nep``, else the tile formula per block, ASSUMED) or as flops.
        """
        g, nep, nfp, nblk, pb = self.g, self.nep, self.nfp, self.nblk, self.pb
        nes, nfs, cnt = self.nescale, self.nfscale, self.cnt
        for s in range(pb * nblk):
            owner, _ = block_owner(s, pb)
            nep_o = self.neps[owner]
            if g == owner:                  # normalize block s within itself
                self.zgemm(nep * nes, nep * nes, nfp * nfs, 1,
                           zgemm_block_time(nep, nfp, 1, nes, nfs))
                self.allreduce(nep * nep * nes * nes)
            cnt["bcast"] += 1
            cnt["bcast_bytes"] += BYTES_PER_COMPLEX * nfp * nep_o * nfs * nes
            if pb > 1:
                self.bandc.Bcast(bsim.buffer(nfp * nep_o * nfs * nes, self.cz), root=owner)
            blocks = later_blocks(s, g, pb, nblk)           # Nblk - nbsn + 1
            if blocks > 0:
                tcc = zgemm_block_time(nep, nfp, blocks, nes, nfs) if nep_o == nep else None
                shape = (nep_o * nes, nep * nes, nfp * nfs)
                self.zgemm(*shape, blocks, tcc)   # CC = PSI2^H PSI(:, :, nbsn:nblk)
                self.allreduce(nep_o * nep * blocks * nes * nes)
                self.zgemm(*shape, blocks, tcc)   # PSI(:, :, nbsn:nblk) -= PSI2 CC


SKELETON = register(Skeleton(
    name="phase",
    main=main,
    assumed={"fft_flop_time": "FFTs"},
    description="PHASE (DFT): 3-D FFTs with transposes, pseudo-potential zgemm + allreduce, "
                "Gram-Schmidt (BSIM paper Fig. 2/3) over bands x wavenumbers",
    params={
        "ne": Param("bands in the skeleton input (times nescale: the real count)", minimum=1),
        "nf": Param("wavenumbers (plane-wave coefficients) in the skeleton input", minimum=1),
        "pb": Param("band groups (process rows)", minimum=1),
        "pf": Param("wavenumber slices (ranks = pb*pf)", minimum=1),
        "nblk": Param("band blocks per group (Gram-Schmidt granularity)", minimum=1),
        "nescale": Param("Nescale: band scale factor on sizes and times", minimum=1),
        "nfscale": Param("Nfscale: wavenumber scale factor on sizes and times", minimum=1),
        "nproj": Param("pseudo-potential projectors", minimum=0),
        "iterations": Param("self-consistent (SCF) iterations", minimum=1),
        "fft_batch": Param("bands per 3-D FFT transpose (0: all local bands)", minimum=0),
        "fft_grid": Param("FFT mesh points per wavenumber (n^3 = fft_grid*nf*nfscale)"),
        "fft_flop_time": Param("seconds per FFT flop (ASSUMED 1 ns; --machine does not "
                               "scale it: no source times an FFT)", minimum=0),
        "speedup": Param("divide the zgemm times (target core vs PRIMEQUEST core)"),
        "fft_speedup": Param("divide the FFT step's times (0: speedup)", minimum=0),
        "band_counts": Param("bands per group, e.g. 28/12/12/12 (default: even split)"),
        "kernel": Param("dgemm time model for the zgemms: machine preset, flat:rate=R, "
                        "table:path=F (as hpl)"),
        "zgemm": Param("flops (8mnk at the kernel's dgemm; default) or fig3 (the BSIM "
                       "paper's Fig. 3 formula as transcribed: above peak)"),
        "verbose": Param("rank 0 prints a summary line"),
    },
    ranks=lambda prm: prm["pb"] * prm["pf"],
    machine_kernel=MachineKernel(param="kernel", table="hpl_blas", keys=KERNELS,
                                 fit_units=FIT_UNITS, generic=generic_kernel,
                                 spec_kinds=("flat", "table")),
    flops=lambda prm, returns: sum(float(r["flops"]) for r in returns if isinstance(r, dict)),
    scale=lambda n: grid(n, 2, "pf", "pb"),
))

if __name__ == "__main__":
    main()
