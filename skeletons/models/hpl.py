"""HPL's scalability model (netlib "HPL Scalability Analysis") and the BSIM paper's dgemm fit.

Machine model of the HPL documentation: sending ``L`` double-precision words
between two processes takes ``alpha + beta * L`` (so ``beta`` is seconds per
8-byte word), and ``gamma3`` is the time of one flop inside matrix-matrix
kernels (``gamma2`` inside matrix-vector ones).  On a ``P x Q`` process grid
with block size ``NB`` the phases cost::

    Tpfact(M, N)  = (M/P - N/3) N^2 gamma3 + N log2(P) (alpha + 2 N beta)
                    + alpha + beta M N / P
    Tupdate(N, NB) = gamma3 (N NB^2 / Q + 2 N^2 NB / (P Q))
                    + alpha (log2(P) + P - 1) + 3 beta N NB / Q
    Tbacks(N, NB) = gamma2 N^2 / (P Q) + N (alpha / NB + 2 beta)

and, keeping the dominant term in each of alpha, beta and gamma3::

    Thpl = 2 gamma3 N^3 / (3 P Q) + beta N^2 (3 P + Q) / (2 P Q)
           + alpha N ((NB + 1) log2(P) + P) / NB

with parallel efficiency ``E = Tser / (P Q Thpl)``, ``Tser = 2 gamma3 N^3 / 3``.
The documentation writes ``log(P)``; the panel's binary exchange and the
spread phase are trees over ``P`` processes, so we use ``log2``.

HPL reports ``2/3 N^3 + 3/2 N^2`` flops for a problem of order ``N``.

The BSIM paper (Sec. III.C, Fig. 4) fits the time of one dgemm on a 1.6 GHz
Itanium 2 node of PRIMEQUEST against its flop count: slope 0.173 ns/flop up
to 10 MFlop and 0.165 ns/flop above.  The BSIM paper gives slopes only; we make the
fit continuous at the break (``continuous=True``) so that a larger call never
takes less time; ``continuous=False`` gives the plain proportional reading.
"""

from __future__ import annotations

import math

__all__ = [
    "DGEMM_SLOPE_SMALL", "DGEMM_SLOPE_LARGE", "DGEMM_BREAK_FLOPS",
    "hpl_flops", "dgemm_flops", "dgemm_time",
    "t_pfact", "t_update", "t_backs", "hpl_time_phases",
    "hpl_time", "hpl_efficiency", "hpl_time_machine",
]

DGEMM_SLOPE_SMALL = 0.173e-9
"""Seconds per flop of dgemm up to 10 MFlop (BSIM paper, Fig. 4)."""
DGEMM_SLOPE_LARGE = 0.165e-9
"""Seconds per flop of dgemm above 10 MFlop (BSIM paper, Fig. 4)."""
DGEMM_BREAK_FLOPS = 10e6
"""Flop count where the BSIM paper's fit changes slope."""


def hpl_flops(n: int) -> float:
    """Flops HPL credits to a problem of order *n*: ``2/3 n^3 + 3/2 n^2``."""
    return 2.0 / 3.0 * n ** 3 + 1.5 * n ** 2


def dgemm_flops(m: int, n: int, k: int) -> float:
    """Flops of ``C += A B`` with ``A`` m x k and ``B`` k x n: ``2 m n k``."""
    return 2.0 * m * n * k


def dgemm_time(flops: float, *, slope_small: float = DGEMM_SLOPE_SMALL,
               slope_large: float = DGEMM_SLOPE_LARGE,
               break_flops: float = DGEMM_BREAK_FLOPS, continuous: bool = True) -> float:
    """Seconds of one dgemm of *flops* flops (BSIM paper's piecewise fit).

    ``slope_small * flops`` up to *break_flops*; above it
    ``slope_small * break + slope_large * (flops - break)`` when *continuous*,
    else ``slope_large * flops``.  Raises :class:`ValueError` for negative flops.
    """
    if flops < 0:
        raise ValueError(f"negative flop count {flops}")
    if flops <= break_flops:
        return slope_small * flops
    if continuous:
        return slope_small * break_flops + slope_large * (flops - break_flops)
    return slope_large * flops


def _log2(p: int) -> float:
    if p < 1:
        raise ValueError(f"process count must be >= 1, got {p}")
    return math.log2(p)


def t_pfact(m: float, n: float, p: int, alpha: float, beta: float, gamma3: float) -> float:
    """Panel factorization and broadcast of an M x N panel over P process rows."""
    return ((m / p - n / 3) * n ** 2 * gamma3 + n * _log2(p) * (alpha + beta * 2 * n)
            + alpha + beta * m * n / p)


def t_update(n: float, nb: int, p: int, q: int, alpha: float, beta: float,
             gamma3: float) -> float:
    """Update of an N x N trailing matrix with a rank-NB panel (long swap variant)."""
    return (gamma3 * (n * nb ** 2 / q + 2 * n ** 2 * nb / (p * q))
            + alpha * (_log2(p) + p - 1) + 3 * beta * n * nb / q)


def t_backs(n: float, nb: int, p: int, q: int, alpha: float, beta: float,
            gamma2: float) -> float:
    """Backward substitution."""
    return gamma2 * n ** 2 / (p * q) + n * (alpha / nb + 2 * beta)


def hpl_time_phases(n: int, nb: int, p: int, q: int, alpha: float, beta: float,
                    gamma3: float, gamma2: float | None = None) -> float:
    """Sum of the phase models over the panels, plus the back substitution.

    ``sum_{k = 0, NB, 2NB, ... < N} [Tpfact(N - k, NB) + Tupdate(N - k - NB, NB)]
    + Tbacks(N, NB)``; the last panel has no trailing update (a negative
    trailing size counts as 0).  ``gamma2`` defaults to ``gamma3``.
    """
    g2 = gamma3 if gamma2 is None else gamma2
    total = 0.0
    for k in range(0, n, nb):
        width = min(nb, n - k)
        total += t_pfact(n - k, width, p, alpha, beta, gamma3)
        trailing = n - k - nb
        if trailing > 0:
            total += t_update(trailing, nb, p, q, alpha, beta, gamma3)
    return total + t_backs(n, nb, p, q, alpha, beta, g2)


def hpl_time(n: int, nb: int, p: int, q: int, alpha: float, beta: float,
             gamma3: float) -> float:
    """``Thpl``: dominant terms of the HPL scalability model.

    ``2 gamma3 N^3 / (3PQ) + beta N^2 (3P + Q) / (2PQ)
    + alpha N ((NB + 1) log2 P + P) / NB``.  ``alpha``: seconds per message,
    ``beta``: seconds per 8-byte word, ``gamma3``: seconds per flop.
    """
    pq = p * q
    return (2 * gamma3 * n ** 3 / (3 * pq) + beta * n ** 2 * (3 * p + q) / (2 * pq)
            + alpha * n * ((nb + 1) * _log2(p) + p) / nb)


def hpl_efficiency(n: int, nb: int, p: int, q: int, alpha: float, beta: float,
                   gamma3: float) -> float:
    """Parallel efficiency ``E = (2 gamma3 N^3 / 3) / (P Q Thpl)``."""
    return (2 * gamma3 * n ** 3 / 3) / (p * q * hpl_time(n, nb, p, q, alpha, beta, gamma3))


def hpl_time_machine(n: int, nb: int, p: int, q: int, *, latency: float, bandwidth: float,
                     seconds_per_flop: float) -> float:
    """:func:`hpl_time` from a Hockney network (``latency``, ``bandwidth`` in bytes/s).

    ``alpha = latency``, ``beta = 8 / bandwidth``, ``gamma3 = seconds_per_flop``.
    """
    return hpl_time(n, nb, p, q, latency, 8.0 / bandwidth, seconds_per_flop)
