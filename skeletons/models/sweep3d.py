"""The tutorial's pipelined-wavefront model of Sweep3D (modeling tutorial).

Sweep3D decomposes an ``nx x ny x nz`` grid over a ``px x py`` process grid
(``it = nx/px``, ``jt = ny/py`` columns per process, all ``nz`` planes).  For
each octant, each angle block (``mmi`` of the ``mm`` angles per octant) and
each k block (``mk`` planes), a process receives its upstream i and j faces,
computes ``it * jt * mk * mmi`` cell-angle updates and sends its downstream
faces.  The blocks are wavefronts that scan the process grid.

Model (modeling tutorial, "Basic Pipeline Model", "Computation Pipeline",
"Communication Pipeline", "Combining Pipelines")::

    Nsweep = (nz / mk) * (mm / mmi)                  wavefronts per octant
    Tcpu   = it * jt * mk * mmi * Tcell              one block on one process
    Tcomp  = ((px + py - 1) + (Nsweep - 1)) * Tcpu   Ns = px+py-1, d = 1
    Tcomm  = (2 (px + py - 2) + 4 (Nsweep - 1)) * Tmsg   Ns = 2(px+py-2), d = 4
    Tmsg   = Ts + L * TB
    T      = Tcomp + Tcomm

Validation constants (modeling tutorial, "Validation: Multiple Octant Processing",
Compaq ES40 with QsNet): ``Tcell = 120 ns``, ``Ts = 11 us``, ``TB = 3.4 ns``
per byte (fitted at 12000-byte messages).

Choices the tutorial leaves open, made here and documented in
``docs/models.md``:

1. *Blocks must divide.*  ``mk`` must divide ``nz`` and ``mmi`` must divide
   ``mm``; otherwise :class:`ValueError` (a ragged last block would not cost a
   full ``Tcpu`` and the formula does not cover it).
2. *Message sizes.*  A block sends its i face (``jt * mk * mmi`` doubles)
   east/west and its j face (``it * mk * mmi`` doubles) north/south, 8 bytes
   per double.  The tutorial writes one ``Tmsg``; with unequal faces we split
   the 4 messages per pipeline step into 2 of each direction, and the
   ``2 (px + py - 2)`` fill messages into ``2 (px - 1)`` i-messages and
   ``2 (py - 1)`` j-messages.  For ``it == jt`` this is the tutorial formula.
3. *Multiple octants.*  The tutorial's octant table gives the delay (in
   compute steps) from the last wavefront of one octant to the first of the
   next.  The iteration's compute steps are ``8 (Nsweep - 1) + sum(delays)``,
   which reduces to the single-octant ``Tcomp`` for one octant whose delay is
   the full fill ``px + py - 1``.  A delay spanning ``h_i`` hops in i and
   ``h_j`` hops in j (``delay = h_i + h_j + 1``) costs ``2 h_i`` i-messages
   and ``2 h_j`` j-messages in the communication pipeline, by the same
   two-messages-per-hop rule as the single-octant fill; wavefront spacing
   costs 4 messages per block everywhere, including across a back-to-back
   (delay 1) octant boundary.
4. *Iterations* multiply the iteration time (the tutorial's "iteration
   dependence added as multiplicative term"); no overlap between iterations.
5. *Undecomposed directions.*  With ``px == 1`` no i-messages exist (and
   with ``py == 1`` no j-messages), so their ``Tmsg`` counts as 0; the
   tutorial's formula would still charge ``4 (Nsweep - 1)`` messages on a
   single process.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "TCELL_ES40", "TS_ES40", "TB_ES40", "BYTES_PER_DOUBLE",
    "OCTANT_ORDER", "OctantDelay",
    "nsweep", "tcpu", "tmsg", "message_bytes",
    "sweep_steps", "octant_time_nocomm", "octant_comp_time", "octant_comm_time",
    "octant_time", "octant_delays", "iteration_steps", "pipeline_fills",
    "back_to_back_pairs", "iteration_comp_time", "iteration_comm_time",
    "iteration_time", "sweep3d_time",
]

TCELL_ES40 = 120e-9
"""Seconds per cell-angle update on the ES40 (modeling tutorial, validation slide)."""
TS_ES40 = 11e-6
"""Message start-up time on ES40/QsNet, seconds (modeling tutorial, validation slide)."""
TB_ES40 = 3.4e-9
"""Seconds per byte on ES40/QsNet at 12000-byte messages (modeling tutorial)."""
BYTES_PER_DOUBLE = 8

# The tutorial's "Multiple Octant Processing" table, in sweep order.  Each
# entry: originating octant, and the delay to the next sweep as
# (i-hops, j-hops): delay = i_hops + j_hops + 1, with hops counted in units of
# (px - 1) and (py - 1).  1 -> (0, 0); py -> (0, 1); px + py - 1 -> (1, 1).
OCTANT_ORDER: tuple[tuple[str, int, int], ...] = (
    ("-i-j-k", 0, 0),
    ("-i-j+k", 0, 1),
    ("-i+j-k", 0, 0),
    ("-i+j+k", 1, 1),
    ("+i-j-k", 0, 0),
    ("+i-j+k", 0, 1),
    ("+i+j-k", 0, 0),
    ("+i+j+k", 1, 1),
)


@dataclass(frozen=True)
class OctantDelay:
    """One row of the octant table: the octant and its delay to the next sweep."""

    octant: str
    delay: int
    """Compute steps from this octant's last wavefront to the next octant's first."""
    i_hops: int
    """Process hops in i the next sweep's origin lies away (0 or px - 1)."""
    j_hops: int
    """Process hops in j the next sweep's origin lies away (0 or py - 1)."""

    @property
    def back_to_back(self) -> bool:
        """True when the next octant starts right behind this one (delay 1)."""
        return self.delay == 1


def _check_grid(px: int, py: int) -> None:
    for key, value in (("px", px), ("py", py)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{key} must be an int >= 1, got {value!r}")


def nsweep(nz: int, mk: int, mm: int, mmi: int) -> int:
    """Wavefronts per octant, ``(nz / mk) * (mm / mmi)`` (modeling tutorial).

    Raises :class:`ValueError` unless ``mk`` divides ``nz`` and ``mmi``
    divides ``mm`` (all positive ints).
    """
    for key, value in (("nz", nz), ("mk", mk), ("mm", mm), ("mmi", mmi)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{key} must be an int >= 1, got {value!r}")
    if nz % mk:
        raise ValueError(f"k block mk={mk} does not divide nz={nz}")
    if mm % mmi:
        raise ValueError(f"angle block mmi={mmi} does not divide mm={mm}")
    return (nz // mk) * (mm // mmi)


def tcpu(it: int, jt: int, mk: int, mmi: int, tcell: float = TCELL_ES40) -> float:
    """Seconds for one block on one process, ``it * jt * mk * mmi * Tcell``."""
    return it * jt * mk * mmi * tcell


def tmsg(nbytes: float, ts: float = TS_ES40, tb: float = TB_ES40) -> float:
    """Seconds for one message, ``Ts + L * TB`` (modeling tutorial)."""
    return ts + nbytes * tb


def _face_times(px: int, py: int, it: int, jt: int, mk: int, mmi: int, ts: float,
                tb: float) -> tuple[float, float]:
    """``(Tmsg_i, Tmsg_j)``; 0 for a direction with one process (choice 5)."""
    bi, bj = message_bytes(it, jt, mk, mmi)
    return (tmsg(bi, ts, tb) if px > 1 else 0.0, tmsg(bj, ts, tb) if py > 1 else 0.0)


def message_bytes(it: int, jt: int, mk: int, mmi: int) -> tuple[int, int]:
    """Bytes of the (i-direction, j-direction) face messages of one block.

    i-direction: ``jt * mk * mmi * 8``; j-direction: ``it * mk * mmi * 8``.
    """
    return (jt * mk * mmi * BYTES_PER_DOUBLE, it * mk * mmi * BYTES_PER_DOUBLE)


def sweep_steps(px: int, py: int, nz: int, mk: int, mm: int, mmi: int) -> int:
    """Compute-pipeline steps of one octant, ``(px + py - 1) + (Nsweep - 1)``."""
    _check_grid(px, py)
    return (px + py - 1) + (nsweep(nz, mk, mm, mmi) - 1)


def octant_time_nocomm(px: int, py: int, nz: int, mk: int, mm: int, mmi: int,
                       it: int, jt: int, tcell: float = TCELL_ES40) -> float:
    """One octant with free communication: ``sweep_steps * Tcpu`` (modeling tutorial Tcomp)."""
    return sweep_steps(px, py, nz, mk, mm, mmi) * tcpu(it, jt, mk, mmi, tcell)


octant_comp_time = octant_time_nocomm


def octant_comm_time(px: int, py: int, nz: int, mk: int, mm: int, mmi: int,
                     it: int, jt: int, ts: float = TS_ES40, tb: float = TB_ES40) -> float:
    """Communication pipeline of one octant (modeling tutorial Tcomm, split by direction).

    ``2 (px - 1) Tmsg_i + 2 (py - 1) Tmsg_j + 2 (Nsweep - 1) (Tmsg_i + Tmsg_j)``;
    equal to ``(2 (px + py - 2) + 4 (Nsweep - 1)) Tmsg`` when ``it == jt`` and
    ``px, py >= 2``.  A direction with one process sends nothing (choice 5).
    """
    _check_grid(px, py)
    n = nsweep(nz, mk, mm, mmi)
    ti, tj = _face_times(px, py, it, jt, mk, mmi, ts, tb)
    return 2 * (px - 1) * ti + 2 * (py - 1) * tj + 2 * (n - 1) * (ti + tj)


def octant_time(px: int, py: int, nz: int, mk: int, mm: int, mmi: int, it: int, jt: int,
                tcell: float = TCELL_ES40, ts: float = TS_ES40, tb: float = TB_ES40) -> float:
    """One octant, ``Tcomp + Tcomm`` (modeling tutorial, "Combining Pipelines")."""
    return (octant_time_nocomm(px, py, nz, mk, mm, mmi, it, jt, tcell)
            + octant_comm_time(px, py, nz, mk, mm, mmi, it, jt, ts, tb))


def octant_delays(px: int, py: int) -> list[OctantDelay]:
    """The tutorial's octant table for a ``px x py`` grid, in sweep order.

    Delays: 1, py, 1, px+py-1, 1, py, 1, px+py-1 (total ``2 px + 4 py + 2``).
    """
    _check_grid(px, py)
    rows = []
    for octant, ai, aj in OCTANT_ORDER:
        hi, hj = ai * (px - 1), aj * (py - 1)
        rows.append(OctantDelay(octant, hi + hj + 1, hi, hj))
    return rows


def back_to_back_pairs(px: int = 2, py: int = 2) -> list[tuple[str, str]]:
    """Pairs of consecutive octants that pipeline back to back (delay 1).

    ``(-i-j-k, -i-j+k)``, ``(-i+j-k, -i+j+k)``, ``(+i-j-k, +i-j+k)``,
    ``(+i+j-k, +i+j+k)``: the two k directions from one corner of the grid.
    """
    rows = octant_delays(px, py)
    return [(rows[n].octant, rows[(n + 1) % 8].octant)
            for n in range(8) if rows[n].back_to_back]


def iteration_steps(px: int, py: int, nz: int, mk: int, mm: int, mmi: int) -> int:
    """Compute-pipeline steps of one iteration (8 octants).

    ``8 (Nsweep - 1) + (2 px + 4 py + 2)``: the octant table's delays added to
    the wavefront spacing of every octant.
    """
    n = nsweep(nz, mk, mm, mmi)
    return 8 * (n - 1) + sum(row.delay for row in octant_delays(px, py))


def pipeline_fills(px: int, py: int) -> float:
    """Pipeline fills per iteration, in units of one octant's fill ``px + py - 1``.

    ``(2 px + 4 py + 2) / (px + py - 1)``: tends to 3 for ``px = py`` large
    (the tutorial: three times one octant, much less than eight), and is
    asymmetric in px and py.
    """
    total = sum(row.delay for row in octant_delays(px, py))
    return total / (px + py - 1)


def iteration_comp_time(px: int, py: int, nz: int, mk: int, mm: int, mmi: int,
                        it: int, jt: int, tcell: float = TCELL_ES40) -> float:
    """Compute part of one iteration: ``iteration_steps * Tcpu``."""
    return iteration_steps(px, py, nz, mk, mm, mmi) * tcpu(it, jt, mk, mmi, tcell)


def iteration_comm_time(px: int, py: int, nz: int, mk: int, mm: int, mmi: int,
                        it: int, jt: int, ts: float = TS_ES40, tb: float = TB_ES40) -> float:
    """Communication part of one iteration (choice 3 of the module docstring).

    ``2 (8 Nsweep - 1) (Tmsg_i + Tmsg_j) + sum over octants of
    (2 h_i Tmsg_i + 2 h_j Tmsg_j)`` = ``... + 4 (px-1) Tmsg_i + 8 (py-1) Tmsg_j``.
    For one octant this is :func:`octant_comm_time`.  A direction with one
    process sends nothing (choice 5).
    """
    _check_grid(px, py)
    n = nsweep(nz, mk, mm, mmi)
    ti, tj = _face_times(px, py, it, jt, mk, mmi, ts, tb)
    fills = sum(2 * row.i_hops * ti + 2 * row.j_hops * tj for row in octant_delays(px, py))
    return 2 * (8 * n - 1) * (ti + tj) + fills


def iteration_time(px: int, py: int, nz: int, mk: int, mm: int, mmi: int, it: int, jt: int,
                   tcell: float = TCELL_ES40, ts: float = TS_ES40,
                   tb: float = TB_ES40) -> float:
    """One iteration over all 8 octants, ``Tcomp + Tcomm``."""
    return (iteration_comp_time(px, py, nz, mk, mm, mmi, it, jt, tcell)
            + iteration_comm_time(px, py, nz, mk, mm, mmi, it, jt, ts, tb))


def sweep3d_time(nx: int, ny: int, nz: int, px: int, py: int, mk: int, mm: int, mmi: int,
                 iterations: int = 1, tcell: float = TCELL_ES40, ts: float = TS_ES40,
                 tb: float = TB_ES40) -> float:
    """Whole run from global sizes: ``iterations * iteration_time``.

    ``px`` must divide ``nx`` and ``py`` must divide ``ny`` (else
    :class:`ValueError`); ``it = nx / px``, ``jt = ny / py``.
    """
    _check_grid(px, py)
    if nx % px or ny % py:
        raise ValueError(f"grid {nx}x{ny} does not divide over {px}x{py} processes")
    if not isinstance(iterations, int) or iterations < 0:
        raise ValueError(f"iterations must be an int >= 0, got {iterations!r}")
    return iterations * iteration_time(px, py, nz, mk, mm, mmi, nx // px, ny // py,
                                       tcell, ts, tb)
