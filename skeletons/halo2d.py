"""halo2d: a 2-D five-point stencil (Jacobi) skeleton with halo exchange.

The global ``nx x ny`` grid is split into ``px x py`` blocks, one per rank
(rank = ``j*px + i``; when ``px`` does not divide ``nx`` the first ``nx % px``
columns of ranks hold one point more, and likewise in y).  Each iteration
every rank posts receives from its four neighbours, sends its four edges (``ny/py * 8`` bytes in x,
``nx/px * 8`` bytes in y; non-periodic edges talk to ``PROC_NULL``), waits
for all eight requests, then updates its block:
``add_time((nx/px) * (ny/py) * t_point)``.  Every ``check_every`` iterations
it performs a convergence exchange with rank 0 (gather of one double and a
reply), written with point-to-point calls.

Runs unchanged under real ``mpiexec`` (``bsim.buffer`` gives real arrays there).
"""

from __future__ import annotations

from typing import Any

import bsim
from bsim.machines.kernels import MachineKernel

from .registry import Param, Skeleton, grid, register

__all__ = ["main", "SKELETON", "FLOPS_PER_POINT", "BYTES_PER_POINT"]

FLOPS_PER_POINT = 4
"""The update ``u'[i,j] = (u[i-1,j] + u[i+1,j] + u[i,j-1] + u[i,j+1]) / 4``: 3 adds, 1 multiply."""
BYTES_PER_POINT = 24
"""Memory traffic per point when rows stay in cache: read ``u`` (8 B), write ``u'`` (8 B)
and the write-allocate read of ``u'`` (8 B)."""


def main(px: int = 32, py: int = 32, nx: int = 8192, ny: int = 8192, iterations: int = 10,
         t_point: float = 5e-9, check_every: int = 0) -> float:
    """Run the stencil; return the calling rank's simulated (or real) finish time."""
    from mpi4py import MPI  # bsim's namespace inside a simulation, real mpi4py otherwise
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    if size != px * py:
        raise ValueError(f"halo2d: needs px*py = {px * py} ranks, running on {size}")
    if nx < px or ny < py:
        raise ValueError(f"halo2d: a {nx}x{ny} grid gives some of the {px}x{py} ranks no "
                         f"points (need nx >= px and ny >= py)")
    i, j = rank % px, rank // px
    # block distribution: the first nx % px columns of ranks get one point more (as MPI
    # codes split a dimension), so no point of the grid is dropped
    lx = nx // px + (1 if i < nx % px else 0)
    ly = ny // py + (1 if j < ny % py else 0)
    west = rank - 1 if i > 0 else MPI.PROC_NULL
    east = rank + 1 if i < px - 1 else MPI.PROC_NULL
    south = rank - px if j > 0 else MPI.PROC_NULL
    north = rank + px if j < py - 1 else MPI.PROC_NULL
    xedge = [bsim.buffer(ly, MPI.DOUBLE) for _ in range(4)]   # exchanged with west/east
    yedge = [bsim.buffer(lx, MPI.DOUBLE) for _ in range(4)]   # exchanged with south/north
    for it in range(iterations):
        reqs = [
            comm.Irecv(xedge[0], source=west, tag=1), comm.Irecv(xedge[1], source=east, tag=2),
            comm.Irecv(yedge[0], source=south, tag=3), comm.Irecv(yedge[1], source=north, tag=4),
            comm.Isend(xedge[2], dest=east, tag=1), comm.Isend(xedge[3], dest=west, tag=2),
            comm.Isend(yedge[2], dest=north, tag=3), comm.Isend(yedge[3], dest=south, tag=4),
        ]
        MPI.Request.Waitall(reqs)
        bsim.add_time(lx * ly * t_point)
        if check_every and (it + 1) % check_every == 0:
            _convergence_check(comm, rank, size)
    return MPI.Wtime()


def _convergence_check(comm: Any, rank: int, size: int) -> None:
    """Residual gathered at rank 0, verdict sent back (point-to-point, 8 bytes each)."""
    if rank == 0:
        for src in range(1, size):
            comm.recv(source=src, tag=9)
        for dst in range(1, size):
            comm.send(False, dest=dst, tag=10)
    else:
        comm.send(0.0, dest=0, tag=9)
        comm.recv(source=0, tag=10)


SKELETON = register(Skeleton(
    name="halo2d",
    main=main,
    description="2-D five-point stencil: halo exchange with 4 neighbours, then compute",
    params={
        "px": Param("process columns", minimum=1),
        "py": Param("process rows (ranks = px*py)", minimum=1),
        "nx": Param("global grid points in x", minimum=1),
        "ny": Param("global grid points in y", minimum=1),
        "iterations": Param("stencil sweeps", minimum=0),
        "t_point": Param("seconds per grid-point update", minimum=0),
        "check_every": Param("convergence check every k iterations (0: never)", minimum=0),
    },
    ranks=lambda p: p["px"] * p["py"],
    machine_kernel=MachineKernel(
        param="t_point", table="halo2d", key="t_point", unit="grid-point update",
        fit_units=("cells", "sites"),
        flops=FLOPS_PER_POINT, bytes=BYTES_PER_POINT, memory_bound=True,
        source="5-point Jacobi u' = (N+S+E+W)/4; u streamed in, u' out with its "
               "write-allocate"),
    flops=lambda p, _returns: FLOPS_PER_POINT * p["nx"] * p["ny"] * p["iterations"],
    scale=lambda n: grid(n, 2, "px", "py"),
))

if __name__ == "__main__":
    main()
