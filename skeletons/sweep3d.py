"""sweep3d: the pipelined-wavefront S_N transport sweep of the modeling tutorial.

The global ``nx x ny x nz`` grid is split over a ``px x py`` process grid
(rank ``= j*px + i``; ``it = nx/px``, ``jt = ny/py`` columns, all ``nz``
planes).  One iteration sweeps the 8 octants in the order of the tutorial's
"Multiple Octant Processing" table (``-i-j-k, -i-j+k, -i+j-k, -i+j+k, +i-j-k,
+i-j+k, +i+j-k, +i+j+k``); an octant ``-i`` sweeps towards decreasing ``i``,
so its upstream neighbour in i is ``i+1``.  Per octant, angle block
(``mm/mmi``) and k block (``nz/mk``)::

    Recv i-face from the upstream neighbour in i      jt*mk*mmi doubles
    Recv j-face from the upstream neighbour in j      it*mk*mmi doubles
    add_time(it * jt * mk * mmi * t_cell)             Tcpu
    Send i-face downstream in i, then j-face downstream in j

and after the 8 octants one allreduce of one double (the convergence test).
Ranks on the edge of the grid talk to ``PROC_NULL``.

Choices the tutorial leaves open (``docs/skeletons.md``):

1. Blocking ``Recv``/``Send`` (the tutorial's "receive west, receive north,
   compute, send east, send south"), i before j on both sides.
2. ``mk`` must divide ``nz``, ``mmi`` must divide ``mm``, ``px`` must divide
   ``nx`` and ``py`` must divide ``ny`` (:class:`ValueError`, as in
   :mod:`skeletons.models.sweep3d`).
3. The k direction of an octant only reverses the order of the k blocks
   inside a rank; it changes no message, so it is not modelled.
4. The allreduce takes the maximum of one double (``MPI.MAX``); its cost is
   the run's collective model, which the tutorial's model leaves out.
5. ``octants`` (default 8) sweeps only the first octants of the order, so a
   single octant (``octants=1``) can be set beside the single-sweep formula.

Default ``t_cell`` is the ES40 preset's ``Tcell = 120 ns``
(``bsim/machines/es40.toml``, ``[kernels.sweep3d]``).  Runs unchanged
under real ``mpiexec``.
"""

from __future__ import annotations

import bsim
from bsim.machines import load_machine
from bsim.machines.kernels import MachineKernel

from .models.sweep3d import OCTANT_ORDER, nsweep
from .registry import Param, Skeleton, grid, register

__all__ = ["main", "SKELETON", "T_CELL_ES40", "octant_directions"]

T_CELL_ES40: float = float(load_machine("es40", record=False).kernels["sweep3d"]["tcell"])
"""Seconds per cell-angle update on the ES40 (modeling tutorial), read from the preset."""

TAG_I, TAG_J = 1, 2


def octant_directions(octants: int = 8) -> list[tuple[str, int, int]]:
    """``(name, di, dj)`` of the first *octants* octants in the tutorial's order.

    ``di = -1`` for ``-i`` (sweeping towards decreasing ``i``), ``+1`` for ``+i``.
    """
    if not isinstance(octants, int) or not 1 <= octants <= 8:
        raise ValueError(f"sweep3d: octants must be an int in 1..8, got {octants!r}")
    out = []
    for name, _, _ in OCTANT_ORDER[:octants]:
        out.append((name, -1 if name[0] == "-" else 1, -1 if name[2] == "-" else 1))
    return out


def _check(nx: int, ny: int, nz: int, px: int, py: int, mm: int, mk: int, mmi: int,
           t_cell: float, iterations: int) -> None:
    for key, value in (("nx", nx), ("ny", ny), ("nz", nz), ("px", px), ("py", py),
                       ("mm", mm), ("mk", mk), ("mmi", mmi)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"sweep3d: {key} must be an int >= 1, got {value!r}")
    if nx % px or ny % py:
        raise ValueError(f"sweep3d: grid {nx}x{ny} does not divide over {px}x{py} processes")
    nsweep(nz, mk, mm, mmi)   # raises unless mk | nz and mmi | mm
    if not t_cell >= 0:
        raise ValueError(f"sweep3d: t_cell must be >= 0, got {t_cell!r}")
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 0:
        raise ValueError(f"sweep3d: iterations must be an int >= 0, got {iterations!r}")


def main(nx: int = 256, ny: int = 256, nz: int = 400, px: int = 16, py: int = 16,
         mm: int = 6, mk: int = 10, mmi: int = 3, t_cell: float = T_CELL_ES40,
         iterations: int = 1, octants: int = 8) -> float:
    """Sweep *iterations* times; return the calling rank's simulated (or real) finish time."""
    from mpi4py import MPI  # bsim's namespace inside a simulation, real mpi4py otherwise
    _check(nx, ny, nz, px, py, mm, mk, mmi, t_cell, iterations)
    order = octant_directions(octants)
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    if size != px * py:
        raise ValueError(f"sweep3d: needs px*py = {px * py} ranks, running on {size}")
    i, j = rank % px, rank // px
    it, jt = nx // px, ny // py
    tcpu = it * jt * mk * mmi * t_cell
    blocks = (mm // mmi) * (nz // mk)
    iface_in, iface_out = (bsim.buffer(jt * mk * mmi, MPI.DOUBLE) for _ in range(2))
    jface_in, jface_out = (bsim.buffer(it * mk * mmi, MPI.DOUBLE) for _ in range(2))

    def neighbour(di: int, dj: int) -> int:
        x, y = i + di, j + dj
        return y * px + x if 0 <= x < px and 0 <= y < py else MPI.PROC_NULL

    plan = [(neighbour(-di, 0), neighbour(0, -dj), neighbour(di, 0), neighbour(0, dj))
            for _, di, dj in order]   # (upstream i, upstream j, downstream i, downstream j)
    for _ in range(iterations):
        for up_i, up_j, down_i, down_j in plan:
            for _ in range(blocks):   # angle blocks x k blocks, in that nesting
                comm.Recv(iface_in, source=up_i, tag=TAG_I)
                comm.Recv(jface_in, source=up_j, tag=TAG_J)
                bsim.add_time(tcpu)
                comm.Send(iface_out, dest=down_i, tag=TAG_I)
                comm.Send(jface_out, dest=down_j, tag=TAG_J)
        comm.allreduce(0.0, op=MPI.MAX)   # convergence test: max relative flux change
    return float(MPI.Wtime())


SKELETON = register(Skeleton(
    name="sweep3d",
    main=main,
    description="Sweep3D S_N transport: 2-D pipelined wavefronts over 8 octants (tutorial)",
    params={
        "nx": Param("global cells in i", minimum=1),
        "ny": Param("global cells in j", minimum=1),
        "nz": Param("global cells in k (not decomposed)", minimum=1),
        "px": Param("processes in i", minimum=1),
        "py": Param("processes in j (ranks = px*py)", minimum=1),
        "mm": Param("angles per octant", minimum=1),
        "mk": Param("k-block size (divides nz)", minimum=1),
        "mmi": Param("angle-block size (divides mm)", minimum=1),
        "t_cell": Param("seconds per cell-angle update (ES40: 120 ns)", minimum=0),
        "iterations": Param("source iterations (8 octants + allreduce each)", minimum=0),
        "octants": Param("octants swept per iteration, in the tutorial's order (1..8)", minimum=1),
    },
    ranks=lambda p: p["px"] * p["py"],
    machine_kernel=MachineKernel(
        param="t_cell", table="sweep3d", key="tcell", unit="cell-angle update",
        fit_units=("cells",),
        reference="es40",
        source="the modeling tutorial measured Tcell on the ES40; no flop count is given"),
    scale=lambda n: grid(n, 2, "px", "py"),
    partition="cyclic",   # a pipeline: K = 2 gains 1.79x cyclic, 1.51-1.57x block
))

if __name__ == "__main__":   # mpiexec -n N python -m skeletons.sweep3d: a px x py grid of N
    from mpi4py import MPI
    _px, _py = MPI.Compute_dims(MPI.COMM_WORLD.Get_size(), 2)
    main(nx=10 * _px, ny=10 * _py, nz=100, px=_px, py=_py)
