"""The BSIM paper's PHASE kernel model: the zgemm block time of Fig. 3, with scale factors.

PHASE distributes ``Ne`` bands and the wave numbers over a 2-D process grid;
each process holds ``Nep`` bands and ``Nfp`` wave-number coefficients.  The
skeleton runs a small input and multiplies sizes by two scale factors,
``Nescale`` (bands) and ``Nfscale`` (wave numbers), to stand for the large
problem (BSIM paper, Sec. III.C).  In the Gram-Schmidt step the loop of
``Nblk`` zgemm calls ``CC(:,:,nb) = PSI2^H * PSI(:,:,nb)`` (``Nep x Nep``
result, inner dimension ``Nfp``) becomes one ``BSIM_Add_time`` of (Fig. 3)::

    mx = (Nep*Nescale - 1) / 32 + 1                 # row tiles of 32
    nx = ((Nep*Nescale - 1) / 256 + 1) * 8          # column tiles, 256-grained
    jx = (Nfp*Nfscale - 1) / 32 + 1                 # inner tiles of 32
    t  = 7.9e-8 + mx * (0.512e-6*jx + 1.141e-6*nx + 0.666e-6*jx*nx)
    t  = t / 2 * Nblk

with Fortran integer division (``//`` here, all operands positive).  The
coefficients were fitted on PRIMEQUEST (1.6 GHz Itanium 2).

Communication sizes in the same fragment, in MPI_DOUBLE_COMPLEX elements
(16 bytes each): the broadcast of ``PSI2`` sends ``Nfp*Nep*Nfscale*Nescale``
and the allreduce of ``CC`` reduces ``Nep*Nep*(Nblk - nbsn + 1)*Nescale^2``.
"""

from __future__ import annotations

__all__ = [
    "ZGEMM_C0", "ZGEMM_CJ", "ZGEMM_CN", "ZGEMM_CJN", "BYTES_PER_COMPLEX",
    "zgemm_tiles", "zgemm_block_time", "bcast_count", "allreduce_count",
    "bcast_bytes", "allreduce_bytes",
]

ZGEMM_C0 = 7.9e-8
"""Constant term, seconds (BSIM paper, Fig. 3)."""
ZGEMM_CJ = 0.512e-6
"""Seconds per (mx, jx) tile pair (Fig. 3)."""
ZGEMM_CN = 1.141e-6
"""Seconds per (mx, nx) tile pair (Fig. 3)."""
ZGEMM_CJN = 0.666e-6
"""Seconds per (mx, jx, nx) tile triple (Fig. 3)."""
BYTES_PER_COMPLEX = 16


def _check(**values: int) -> None:
    for key, value in values.items():
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{key} must be an int >= 1, got {value!r}")


def zgemm_tiles(nep: int, nfp: int, nescale: int = 1, nfscale: int = 1) -> tuple[int, int, int]:
    """``(mx, nx, jx)`` of Fig. 3 for the scaled sizes ``Nep*Nescale`` and ``Nfp*Nfscale``."""
    _check(nep=nep, nfp=nfp, nescale=nescale, nfscale=nfscale)
    ne = nep * nescale
    nf = nfp * nfscale
    mx = (ne - 1) // 32 + 1
    nx = ((ne - 1) // 256 + 1) * 8
    jx = (nf - 1) // 32 + 1
    return mx, nx, jx


def zgemm_block_time(nep: int, nfp: int, nblk: int, nescale: int = 1,
                     nfscale: int = 1) -> float:
    """Seconds passed to ``BSIM_Add_time`` for the ``Nblk`` zgemm loop (Fig. 3).

    ``(7.9e-8 + mx (0.512e-6 jx + 1.141e-6 nx + 0.666e-6 jx nx)) / 2 * Nblk``.
    Raises :class:`ValueError` unless every argument is an int >= 1
    (``nblk`` may be 0: no blocks, no time).
    """
    if not isinstance(nblk, int) or nblk < 0:
        raise ValueError(f"nblk must be an int >= 0, got {nblk!r}")
    mx, nx, jx = zgemm_tiles(nep, nfp, nescale, nfscale)
    t = ZGEMM_C0 + mx * (ZGEMM_CJ * jx + ZGEMM_CN * nx + ZGEMM_CJN * jx * nx)
    return t / 2.0 * nblk


def bcast_count(nep: int, nfp: int, nescale: int = 1, nfscale: int = 1) -> int:
    """Elements of the scaled ``PSI2`` broadcast: ``Nfp Nep Nfscale Nescale``."""
    _check(nep=nep, nfp=nfp, nescale=nescale, nfscale=nfscale)
    return nfp * nep * nfscale * nescale


def allreduce_count(nep: int, nblk: int, nbsn: int, nescale: int = 1) -> int:
    """Elements of the scaled ``CC`` allreduce: ``Nep^2 (Nblk - nbsn + 1) Nescale^2``."""
    _check(nep=nep, nescale=nescale)
    blocks = nblk - nbsn + 1
    if blocks < 0:
        raise ValueError(f"nbsn={nbsn} exceeds nblk + 1 = {nblk + 1}")
    return nep * nep * blocks * nescale * nescale


def bcast_bytes(nep: int, nfp: int, nescale: int = 1, nfscale: int = 1) -> int:
    """Bytes of the scaled broadcast (16 per double complex)."""
    return BYTES_PER_COMPLEX * bcast_count(nep, nfp, nescale, nfscale)


def allreduce_bytes(nep: int, nblk: int, nbsn: int, nescale: int = 1) -> int:
    """Bytes of the scaled allreduce (16 per double complex)."""
    return BYTES_PER_COMPLEX * allreduce_count(nep, nblk, nbsn, nescale)
