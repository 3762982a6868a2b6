"""The bsim skeleton of :mod:`jacobi2d`: the same messages, compute as ``add_time``.

Decomposition, neighbours, tags and the ``Irecv x 4, Isend x 4, Waitall``
exchange are those of the real solver; ``compute_step`` becomes
``bsim.add_time(slowdown * kernel_time(kernel, lx * ly))`` with the kernel
table fitted from one-process timings (``bsim fit kernel``); arrays become
``bsim.buffer`` placeholders.  ``slowdown`` lets a prediction charge time
sharing when ranks outnumber cores (1: one core per rank).  Runs under real
``mpiexec`` too (buffers are then real arrays, ``add_time`` skips).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import bsim
from bsim.calibration.kernels import kernel_time

try:
    from .jacobi2d import extent, grid_dims
except ImportError:           # run as a script
    from jacobi2d import extent, grid_dims  # type: ignore[no-redef]

__all__ = ["main"]


def main(n: int = 1024, iterations: int = 50, kernel: Mapping[str, Any] | None = None,
         slowdown: float = 1.0) -> float:
    """Run the skeleton; return the calling rank's (simulated) finish time."""
    from mpi4py import MPI
    if kernel is None:
        raise ValueError("jacobi2d skeleton: pass kernel=<[kernels.jacobi2d] step table>")
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    px, py = grid_dims(size)
    i, j = rank % px, rank // px
    lx, ly = extent(n, px, i), extent(n, py, j)
    west = rank - 1 if i > 0 else MPI.PROC_NULL
    east = rank + 1 if i < px - 1 else MPI.PROC_NULL
    south = rank - px if j > 0 else MPI.PROC_NULL
    north = rank + px if j < py - 1 else MPI.PROC_NULL
    col = [bsim.buffer(ly, MPI.DOUBLE) for _ in range(4)]    # recv W, E; send E, W
    row = [bsim.buffer(lx, MPI.DOUBLE) for _ in range(4)]    # recv S, N; send N, S
    step = slowdown * kernel_time(kernel, lx * ly)
    for _ in range(iterations):
        reqs = [comm.Irecv(col[0], source=west, tag=1), comm.Irecv(col[1], source=east, tag=2),
                comm.Irecv(row[0], source=south, tag=3), comm.Irecv(row[1], source=north, tag=4),
                comm.Isend(col[2], dest=east, tag=1), comm.Isend(col[3], dest=west, tag=2),
                comm.Isend(row[2], dest=north, tag=3), comm.Isend(row[3], dest=south, tag=4)]
        MPI.Request.Waitall(reqs)
        bsim.add_time(step)
    return MPI.Wtime()
