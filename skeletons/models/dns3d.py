"""DNS3D's performance model: pencil FFTs, transposes as shifts, one collective.

DNS3D (modeling tutorial, "Case study III") simulates homogeneous turbulence on
an ``n_x x n_y x n_z`` grid with a 4-stage Runge-Kutta step; each stage does
3 forward and 6 inverse 3-D FFTs (36 per step).  The grid is split into
pencils over a ``p_x x p_z`` process grid (MPI tasks allocated in Z, then X),
``N_pencils = (n_x/p_x)(n_z/p_z)`` per processor, so 1-D FFTs are local and
transposes move the data between them: Y<->X among the ``p_x`` processors of
a row, Y<->Z among the ``p_z`` of a column, each a sequence of shifts
``P_i -> P_{i+d}`` for ``d = 1 .. p - 1``.  The tutorial's model::

    T_iteration = T_comp + T_transpose + T_collective
    T_comp      = 4 N_pencils (n_y T_RK + 9 (T_FFT(n_x) + T_FFT(n_y) + T_FFT(n_z)))
    T_transpose = T_local + T_remote
    T_remote    = 32 T_XY + 36 T_YZ

The tutorial prints the counts both as "32 Y<->Z & 36 Y<->X" and as
``32 T_shift(Y<->X) + 36 T_shift(Y<->Z)``; bsim takes the formula's reading
(``xy_transposes = 32``, ``yz_transposes = 36``, both parameters).  It gives no
1-D FFT time (measured on the target): ASSUMED ``T_FFT(n) = t_flop * 5 n log2 n``
(the radix-2 flop count) with ``T_RK`` per grid point.  A transpose among ``p``
processors is ``p - 1`` shifts of ``V / (P p)`` points of 8 bytes each (one
real variable), each received in ``m(bytes)`` (the BSIM paper's rule), so
``T_XY = (p_x - 1) m(8 V / (P p_x))``; ``T_local = t_local V / P`` per transpose.
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["fft_time", "compute_time", "transpose_time", "iteration_time",
           "XY_TRANSPOSES", "YZ_TRANSPOSES"]

XY_TRANSPOSES = 32
"""Y<->X transposes per iteration (modeling tutorial, "Modeling Transpose Time")."""
YZ_TRANSPOSES = 36
"""Y<->Z transposes per iteration (same slide)."""


def fft_time(n: int, t_flop: float) -> float:
    """One 1-D FFT of *n* points: ``t_flop * 5 n log2 n`` (ASSUMED radix-2 count)."""
    return t_flop * 5.0 * n * math.log2(n) if n > 1 else 0.0


def compute_time(grid: tuple[int, int, int], px: int, pz: int, t_flop: float,
                 t_rk: float) -> float:
    """``T_comp = 4 N_pencils (n_y T_RK + 9 sum_d T_FFT(n_d))`` per iteration."""
    nx, ny, nz = grid
    pencils = (nx // px) * (nz // pz)
    ffts = sum(fft_time(n, t_flop) for n in grid)
    return 4.0 * pencils * (ny * t_rk + 9.0 * ffts)


def transpose_time(points: float, p: int, m: Callable[[float], float]) -> float:
    """A transpose of *points* per processor among *p*: ``(p - 1) m(8 points / p)``."""
    return (p - 1) * m(8.0 * points / p) if p > 1 else 0.0


def iteration_time(grid: tuple[int, int, int], px: int, pz: int, m: Callable[[float], float],
                   *, t_flop: float, t_rk: float, t_local: float = 0.0,
                   xy: int = XY_TRANSPOSES, yz: int = YZ_TRANSPOSES,
                   collective: float = 0.0) -> float:
    """``T_iteration`` of one processor (no contention; see the module docstring)."""
    points = math.prod(grid) / (px * pz)
    remote = xy * transpose_time(points, px, m) + yz * transpose_time(points, pz, m)
    return (compute_time(grid, px, pz, t_flop, t_rk) + (xy + yz) * t_local * points
            + remote + collective)
