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
    T_remote    = 32 T_shift(Y<->X) + 36 T_shift(Y<->Z)

**FFT counts (generalised).**  The tutorial's ``T_comp`` does ``N_pencils`` 1-D FFTs
in every direction.  Its own count ("General principle of a 3D-FFT": ``n_y n_z``
FFTs of size ``n_x``, ``n_x n_z`` of size ``n_y``, ``n_x n_y`` of size ``n_z``) over
``P`` processors, as the decomposition performs them, is

* ``(n_y/p_x)(n_z/p_z) = (n_y/n_x) N_pencils`` x-FFTs (after the Y<->X transpose
  the local block is ``n_x x n_y/p_x x n_z/p_z``),
* ``(n_x/p_x)(n_z/p_z) = N_pencils`` y-FFTs (the ``n_x/p_x x n_y x n_z/p_z`` pencils),
* ``(n_x/p_x)(n_y/p_z) = (n_y/n_z) N_pencils`` z-FFTs (after the Y<->Z transpose),

so bsim uses ``T_comp = 4 N_pencils (n_y T_RK + 9 ((n_y/n_x) T_FFT(n_x) + T_FFT(n_y)
+ (n_y/n_z) T_FFT(n_z)))``, which is the tutorial's formula whenever
``n_x = n_y = n_z`` (the weights are 1; :func:`tutorial_compute_time` is the literal
formula, equal bit for bit there).  On the tutorial's own weak-scaling set-up
("Validation to 512 Cores": ``n_x, n_y, n_z`` doubled in turn) two grids in three are
not cubic, and the literal formula counts twice the x-FFTs there is work for (or
half the z-FFTs): +35% / -15% of ``T_comp``, a zig-zag no FFT work has.

**Transposes.**  A transpose among ``p`` processors must move the remote part of
each processor's data, ``(p - 1)/p * V/P`` points (the tutorial's "Volume" table),
as ``p - 1`` shifts of ``V/(P p)`` points each.  The tutorial's ``T_shift`` is "the
average of the shift communication times" over ``d = 1 .. p - 1``; read literally,
``32 T_shift`` charges one shift of ``V/(P p)`` points per transpose, ``1/(p - 1)`` of
the volume the table says it moves.  bsim charges all ``p - 1`` shifts:
``T_XY = (p_x - 1) m(8 V / (P p_x))`` (one real variable of 8 bytes per point, each
shift received in ``m(bytes)``, the BSIM paper's rule), i.e. ``T_remote = 32 (p_x - 1)
T_shift(Y<->X) + 36 (p_z - 1) T_shift(Y<->Z)`` with ``T_shift`` the tutorial's average
(without contention every shift costs the same, so this is the sum of the shifts).
``T_local = t_local V / P`` per transpose.

The tutorial prints the transpose counts both as "32 Y<->Z & 36 Y<->X" and as
``32 T_shift(Y<->X) + 36 T_shift(Y<->Z)``; bsim takes the formula's reading
(``xy_transposes = 32``, ``yz_transposes = 36``, both parameters).  It gives no
1-D FFT time (measured on the target): ASSUMED ``T_FFT(n) = t_flop * 5 n log2 n``
(the radix-2 flop count) with ``T_RK`` per grid point.
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["fft_time", "fft_counts", "compute_time", "tutorial_compute_time",
           "transpose_time", "iteration_time", "XY_TRANSPOSES", "YZ_TRANSPOSES"]

XY_TRANSPOSES = 32
"""Y<->X transposes per iteration (modeling tutorial, "Modeling Transpose Time")."""
YZ_TRANSPOSES = 36
"""Y<->Z transposes per iteration (same slide)."""

Grid = tuple[int, int, int]


def fft_time(n: int, t_flop: float) -> float:
    """One 1-D FFT of *n* points: ``t_flop * 5 n log2 n`` (ASSUMED radix-2 count)."""
    return t_flop * 5.0 * n * math.log2(n) if n > 1 else 0.0


def fft_counts(grid: Grid, px: int, pz: int) -> tuple[int, int, int]:
    """1-D FFTs per processor per 3-D FFT in x, y, z: ``((n_y/p_x)(n_z/p_z),
    (n_x/p_x)(n_z/p_z), (n_x/p_x)(n_y/p_z))``, the tutorial's ``n_y n_z``, ``n_x n_z``,
    ``n_x n_y`` ("General principle of a 3D-FFT") as the pencil decomposition splits them."""
    nx, ny, nz = grid
    return (ny // px) * (nz // pz), (nx // px) * (nz // pz), (nx // px) * (ny // pz)


def compute_time(grid: Grid, px: int, pz: int, t_flop: float, t_rk: float) -> float:
    """``T_comp = 4 N_pencils (n_y T_RK + 9 ((n_y/n_x) T_FFT(n_x) + T_FFT(n_y)
    + (n_y/n_z) T_FFT(n_z)))`` per iteration: each direction's FFTs counted as
    :func:`fft_counts` (module docstring); the tutorial's formula for a cubic grid."""
    nx, ny, nz = grid
    pencils = (nx // px) * (nz // pz)
    ffts = ((ny / nx) * fft_time(nx, t_flop) + fft_time(ny, t_flop)
            + (ny / nz) * fft_time(nz, t_flop))
    return 4.0 * pencils * (ny * t_rk + 9.0 * ffts)


def tutorial_compute_time(grid: Grid, px: int, pz: int, t_flop: float, t_rk: float) -> float:
    """The tutorial's literal ``T_comp = 4 N_pencils (n_y T_RK + 9 sum_d T_FFT(n_d))``
    ("Computation time"): ``N_pencils`` FFTs in every direction, right for cubic grids."""
    nx, ny, nz = grid
    pencils = (nx // px) * (nz // pz)
    ffts = sum(fft_time(n, t_flop) for n in grid)
    return 4.0 * pencils * (ny * t_rk + 9.0 * ffts)


def transpose_time(points: float, p: int, m: Callable[[float], float]) -> float:
    """A transpose of *points* per processor among *p*: ``(p - 1) m(8 points / p)``, all
    ``p - 1`` shifts (``p - 1`` times the tutorial's average ``T_shift``; module docstring)."""
    return (p - 1) * m(8.0 * points / p) if p > 1 else 0.0


def iteration_time(grid: Grid, px: int, pz: int, m: Callable[[float], float],
                   *, t_flop: float, t_rk: float, t_local: float = 0.0,
                   xy: int = XY_TRANSPOSES, yz: int = YZ_TRANSPOSES,
                   collective: float = 0.0) -> float:
    """``T_iteration`` of one processor (no contention; see the module docstring)."""
    points = math.prod(grid) / (px * pz)
    remote = xy * transpose_time(points, px, m) + yz * transpose_time(points, pz, m)
    return (compute_time(grid, px, pz, t_flop, t_rk) + (xy + yz) * t_local * points
            + remote + collective)
