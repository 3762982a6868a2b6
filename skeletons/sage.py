"""sage: SAGE's cycle as a skeleton: compute, 177 boundary gather/scatters, allreduces.

The hydrocode's 1-D slab decomposition and scaling analysis are in
:mod:`skeletons.models.sage` (modeling tutorial, "Case study II"; installation paper,
Sec. 3-4).  Each cycle every processor computes ``E * (t_cell + t_mem)``
seconds, then performs ``float_gs`` gather/scatters of 8-byte words and
``int_gs`` of 4-byte words (160 and 17 per cycle, installation paper, Sec. 4),
each a boundary exchange with both neighbours in X (4 cells), Y (``2L``
cells) and Z (``L^2`` cells, or ``E/2`` cells with the processors ``PED``
away once a foil is split), then ``allreduces`` allreduces of one double.  The
processors at the ends of the slab have fewer neighbours.

The run's time per cycle equals ``skeletons.models.sage.cycle_time`` for an
interior processor when the network adds no contention; ``--contention
fluid`` on a topology with several processors per node gives the papers'
out-of-node contention in Z from the links (``tests/test_sage.py``).  Runs
unchanged under real ``mpiexec`` (``bsim.buffer`` gives real arrays there).
"""

from __future__ import annotations

import bsim
from bsim.machines.kernels import MachineKernel

from .models.sage import FLOAT_GS, INT_GS, slab_geometry
from .registry import Param, Skeleton, register

__all__ = ["main", "SKELETON"]

T_CELL_ASSUMED = 50e-6
"""Seconds per cell per cycle when no machine is named (the ES45 preset's ASSUMED value)."""


def main(cells: int = 13500, cycles: int = 1, t_cell: float = T_CELL_ASSUMED,
         t_mem: float = 0.0, float_gs: int = FLOAT_GS, int_gs: int = INT_GS,
         allreduces: int = 3) -> float:
    """Run *cycles* SAGE cycles; return the calling rank's simulated (or real) finish time."""
    from mpi4py import MPI  # bsim's namespace inside a simulation, real mpi4py otherwise
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    for key, value in (("cycles", cycles), ("float_gs", float_gs), ("int_gs", int_gs),
                       ("allreduces", allreduces)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"sage: {key} must be an int >= 0, got {value!r}")
    if not t_cell >= 0 or not t_mem >= 0:
        raise ValueError("sage: t_cell and t_mem must be >= 0")
    geo = slab_geometry(cells, size)

    def partner(step: int) -> int:
        other = rank + step
        return other if 0 <= other < size else MPI.PROC_NULL

    # (neighbour below, neighbour above, cells) per dimension: X, Y, Z
    dims = [(partner(-1), partner(1), geo.cells_x), (partner(-1), partner(1), geo.cells_y),
            (partner(-geo.ped), partner(geo.ped), geo.cells_z)]
    buffers = {w: [(bsim.buffer(n * w, MPI.BYTE), bsim.buffer(n * w, MPI.BYTE),
                    bsim.buffer(n * w, MPI.BYTE), bsim.buffer(n * w, MPI.BYTE))
                   for _, _, n in dims] for w in (8, 4)}
    one, out = bsim.buffer(1, MPI.DOUBLE), bsim.buffer(1, MPI.DOUBLE)
    for _ in range(cycles):
        bsim.add_time(cells * (t_cell + t_mem))
        for k in range(float_gs + int_gs):
            word = 8 if k < float_gs else 4
            reqs = []
            for d, ((lo, hi, _), bufs) in enumerate(zip(dims, buffers[word], strict=True)):
                tag = 3 * (k % 1000) + d
                reqs += [comm.Irecv(bufs[0], source=lo, tag=tag),
                         comm.Irecv(bufs[1], source=hi, tag=tag),
                         comm.Isend(bufs[2], dest=hi, tag=tag),
                         comm.Isend(bufs[3], dest=lo, tag=tag)]
            MPI.Request.Waitall(reqs)
        for _ in range(allreduces):
            comm.Allreduce(one, out, op=MPI.SUM)
    return float(MPI.Wtime())


SKELETON = register(Skeleton(
    name="sage",
    main=main,
    description="SAGE hydrocode: 1-D slab cycle of compute, 160 + 17 boundary gather/scatters "
                "in X, Y, Z and allreduces (tutorial, installation paper)",
    params={
        "cells": Param("cells per processor E (weak scaling)", minimum=8),
        "cycles": Param("cycles", minimum=0),
        "t_cell": Param("seconds of computation per cell per cycle (Tcomp(E) / E)",
                        minimum=0),
        "t_mem": Param("seconds of memory contention per cell per cycle (Tmem)", minimum=0),
        "float_gs": Param("gather/scatters of 8-byte words per cycle", minimum=0),
        "int_gs": Param("gather/scatters of 4-byte words per cycle", minimum=0),
        "allreduces": Param("allreduces of one double per cycle (ASSUMED count)", minimum=0),
    },
    machine_kernel=MachineKernel(
        param="t_cell", table="sage", key="t_cell", unit="cell per cycle", fit_units=("cells",),
        reference="es45", source="ASSUMED on the ES45 (no measured Tcomp(E) in the papers)"),
))

if __name__ == "__main__":
    main()
