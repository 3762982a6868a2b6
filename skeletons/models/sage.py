"""SAGE's performance model: 1-D slab decomposition, boundary gather/scatters, cycle time.

SAGE (SAIC's Adaptive Grid Eulerian hydrocode; modeling tutorial, "Case study II";
installation paper, Sec. 3-4) assigns the first ``E`` cells of the grid (in
X, Y, Z order, in blocks of 2 x 2 x 2) to the first processor, and so on: a
1-D slab decomposition of a cube of ``V = E P = L^3`` cells (weak scaling).
The tutorial's scaling analysis:

* a processor holds ``L / (2P) = (E / 8P^2)^(1/3)`` foils of width 2;
* while that is >= 1 its Z boundary is a whole face, ``L^2 = (E P)^(2/3)``
  cells, exchanged with the processors next to it;
* past ``P > sqrt(E/8)`` a foil is split over several processors: the Z
  boundary is the processor's share of a face, ``E/2`` cells, exchanged with
  processors ``PED = ceil((8 P^2 / E)^(1/3))`` apart (the "PE distance");
* in Y the boundary follows the side of the cube (a row of 2 x 2 blocks,
  ``2L`` cells, ASSUMED shape); in X it is constant, 4 cells (a block's face).

One cycle (installation paper, Sec. 4, without the AMR terms)::

    T_cycle(P, E) = T_comp(E) + T_GScomm(P, E) + T_allreduce(P) + T_mem(P, E)

with ``T_comp = E t_cell``, ``T_mem = E t_mem`` (memory contention per cell,
Table 3), ``T_allreduce = n_allreduce (c + d log2 P)`` and, per gather/scatter
of a ``w``-byte word (160 of 8 bytes and 17 of 4 bytes per cycle, Sec. 4),
the six boundary messages of an interior processor (two per dimension) received
one after the other (the BSIM paper's receive rule)::

    T_GS = sum over X, Y, Z of 2 m(w S_d),    m(s) = the network's message time

This is the uncontended model; the papers multiply the Z term by the number
of processors of a node that communicate out of the node at once
(:func:`out_of_node`), which bsim's ``--contention fluid`` produces from the
links instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["SlabGeometry", "slab_geometry", "out_of_node", "gather_scatter_time",
           "cycle_time", "FLOAT_GS", "INT_GS"]

FLOAT_GS = 160
"""Floating-point gather/scatters per cycle (installation paper, Sec. 4)."""
INT_GS = 17
"""Integer gather/scatters per cycle (installation paper, Sec. 4)."""


@dataclass(frozen=True)
class SlabGeometry:
    """Where a processor's boundaries are: cube side, foils per processor, PE distance,
    and boundary sizes in cells (X, Y, Z)."""

    side: float
    foils: float
    ped: int
    cells_x: int
    cells_y: int
    cells_z: int


def slab_geometry(cells: int, nprocs: int) -> SlabGeometry:
    """The tutorial's scaling analysis for ``E = cells`` per processor on ``P = nprocs``.

    Raises :class:`ValueError` unless both are ints >= 1 and ``cells >= 8``
    (one 2 x 2 x 2 block), and when the Z partners ``PED`` ranks away fall outside the
    ``P`` ranks (``PED >= P`` on more than one rank: the cube is thinner than the foils
    it is cut into, and a model of an interior processor charges a Z exchange no rank
    has).
    """
    for key, value in (("cells", cells), ("nprocs", nprocs)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"sage: {key} must be an int >= 1, got {value!r}")
    if cells < 8:
        raise ValueError(f"sage: cells must be >= 8 (one 2x2x2 block), got {cells}")
    side = (cells * nprocs) ** (1.0 / 3.0)
    foils = (cells / (8.0 * nprocs * nprocs)) ** (1.0 / 3.0)
    if foils >= 1.0:
        ped, z = 1, round(side * side)
    else:
        ped, z = math.ceil((8.0 * nprocs * nprocs / cells) ** (1.0 / 3.0) - 1e-12), cells // 2
    if nprocs > 1 and ped >= nprocs:
        raise ValueError(f"sage: cells={cells} per processor on {nprocs} ranks puts the Z "
                         f"neighbours PED = {ped} ranks away, outside the {nprocs} ranks: no "
                         f"rank would exchange Z boundaries; use more cells per processor "
                         f"(the cube's side is {side:.3g} cells)")
    return SlabGeometry(side, foils, ped, 4, round(2 * side), z)


def out_of_node(ped: int, ppn: int) -> int:
    """Processors of a node whose Z partner (``PED`` away, block mapping) is off the node,
    per direction: ``min(PED, ppn)`` (tutorial: "the max. no. communications equals the
    no. PEs in a node")."""
    return min(ped, ppn)


def gather_scatter_time(geo: SlabGeometry, word: int, m: Callable[[float], float],
                        z_contention: float = 1.0) -> float:
    """One gather/scatter of an interior processor: ``sum_d 2 m(word * S_d)``, the Z
    term multiplied by *z_contention* (the papers' out-of-node factor; 1: none)."""
    x, y, z = (2.0 * m(word * s) for s in (geo.cells_x, geo.cells_y, geo.cells_z))
    return x + y + z * z_contention


def cycle_time(cells: int, nprocs: int, m: Callable[[float], float], *, t_cell: float,
               t_mem: float = 0.0, float_gs: int = FLOAT_GS, int_gs: int = INT_GS,
               allreduces: int = 0, c: float = 0.0, d: float = 0.0,
               z_contention: float = 1.0) -> float:
    """``T_cycle`` of an interior processor (see the module docstring)."""
    geo = slab_geometry(cells, nprocs)
    gs = (float_gs * gather_scatter_time(geo, 8, m, z_contention)
          + int_gs * gather_scatter_time(geo, 4, m, z_contention))
    red = allreduces * (c + d * math.log2(nprocs)) if nprocs > 1 else 0.0
    return cells * (t_cell + t_mem) + gs + red
