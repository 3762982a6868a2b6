"""The MILC paper's semi-analytic model of MILC ``su3_rmd`` (Bauer, Gottlieb, Hoefler).

Five kernels dominate: ``LL`` (load_longlinks), ``FL`` (load_fatlinks),
``GF`` (imp_gauge_force), ``FF`` (eo_fermion_force_twoterms) and ``CG``
(ks_congrad).  With ``V`` lattice sites per process:

* Eq. 1, kernel time with a two-level memory model::

      T(B, V) = b1(B) * min(s(B), V) + b2(B) * max(0, V - s(B))

* Eq. 2, serial time::

      Tser = (trajecs + warms) * steps * [T(FF) + T(GF) + 3 (T(LL) + T(FL))]
             + floor(trajecs / meas) * [T(LL) + T(FL)] + niters * T(CG)

* Eq. 3, point-to-point time with message sizes ``A``, ``A/2`` and ``A/6``::

      Tp2p = m(A) * [3332 (trajecs + warms) steps + 296 floor(trajecs / meas)]
             + 16 m(A/2) niters
             + 16 m(A/6) [2 steps (trajecs + warms) + 2 floor(trajecs / meas)]

  where ``A = 18 f V^(3/4)`` (su3 matrices, 18 floats of ``f`` bytes, on a
  one-site halo face) and ``m(x)`` is the time of one ``x``-byte message.

* Eq. 4, allreduce count, each costing ``Tred(P) = c + d log2(P)``::

      nred = niters + 2 [steps (trajecs + warms) + 2 floor(trajecs / meas)]

* Eq. 5: ``Tpar = Tser + Tp2p + nred * Tred(P)``.

Per-call gather counts (the table of Sec. II-D): FF 1616 and GF 828 per step;
LL 8 and FL 288 per call; CG 16 per iteration (size ``A/2``, the three-deep
halo of even or odd su3 vectors) plus 16 per invocation (size ``A/6``, the
one-deep halo).  LL and FL run ``3 steps (trajecs + warms) + floor(trajecs /
meas)`` times; CG is invoked ``2 steps (trajecs + warms) + 2 floor(trajecs /
meas)`` times.  ``3332 = 1616 + 828 + 3 (8 + 288)`` and ``296 = 8 + 288``.

Choices made here (``docs/models.md``):

1. ``trajecs / meas`` is an integer division everywhere (Eqs. 2-4 write the
   floor; the gather table writes a plain quotient).
2. The gather table's CG entry ends in ``2 trajecs / meas``; Eq. 3 and the
   prose (16 one-deep messages per invocation, two invocations per
   measurement) give ``16 * 2 floor(trajecs / meas)``.  We follow Eq. 3.
3. The paper's ``log(P)`` in ``Tred`` is a tree depth: we use ``log2``.
4. Unequal local extents: the paper assumes ``Lx = Ly = Lz = Lt``.  For a
   block ``Lx x Ly x Lz x Lt`` the face normal to dimension ``d`` holds
   ``V / L_d`` sites, so the su3 message along ``d`` is ``A_d = 18 f V / L_d``.
   Gathers are spread evenly over the four dimensions (one per direction for
   LL; every count above is a multiple of 4), so ``n`` messages cost
   ``(n / 4) * sum_d m(A_d)``.  A dimension that is not cut (one process
   along it) exchanges nothing over the network and costs 0.  The single
   representative size :func:`message_size` is the mean face,
   ``18 f * (sum_d V / L_d) / 4`` = ``18 f * surface / 8`` (the 4-D block has
   8 faces); it equals ``18 f V^(3/4)`` for a hypercube, and for an affine
   ``m`` (``lat + x / bw``) with all dimensions cut the two forms agree.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "KERNELS", "GATHERS_PER_CALL", "CG_GATHERS_PER_ITER", "CG_GATHERS_PER_CALL",
    "KernelParams", "MilcRun",
    "kernel_time", "local_extents", "local_volume", "face_sites", "halo_sizes",
    "message_size", "message_size_cubic",
    "call_counts", "gather_counts", "n_messages",
    "serial_time", "p2p_time", "n_allreduce", "allreduce_time", "collective_time",
    "total_time", "cg_time",
    "loggp_message_time", "power5_message_time", "hockney",
]

KERNELS = ("LL", "FL", "GF", "FF", "CG")
GATHERS_PER_CALL = {"FF": 1616, "GF": 828, "LL": 8, "FL": 288}
"""Gathers of size A per call of FF, GF (once per step), LL and FL (MILC paper, Sec. II-D)."""
CG_GATHERS_PER_ITER = 16
"""CG gathers of size A/2 per iteration: 8 directions x (even, odd), three-deep halo."""
CG_GATHERS_PER_CALL = 16
"""Extra CG gathers of size A/6 per invocation: the one-deep halo."""

MessageTime = Callable[[float], float]


@dataclass(frozen=True)
class KernelParams:
    """Eq. 1 parameters of one kernel: seconds per site in and out of cache, cache sites."""

    b1: float
    b2: float
    s: float

    def time(self, volume: float) -> float:
        """``b1 * min(s, V) + b2 * max(0, V - s)`` (Eq. 1)."""
        return kernel_time(self.b1, self.b2, self.s, volume)


@dataclass(frozen=True)
class MilcRun:
    """The simple input parameters of Table I plus the meta parameter ``niters``."""

    trajecs: int = 1
    warms: int = 0
    steps: int = 1
    meas: int = 1
    niters: int = 0

    def __post_init__(self) -> None:
        for key in ("trajecs", "warms", "steps", "niters"):
            value = getattr(self, key)
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"MilcRun.{key} must be an int >= 0, got {value!r}")
        if not isinstance(self.meas, int) or self.meas < 1:
            raise ValueError(f"MilcRun.meas must be an int >= 1, got {self.meas!r}")

    @property
    def md_steps(self) -> int:
        """Molecular-dynamics steps: ``steps * (trajecs + warms)``."""
        return self.steps * (self.trajecs + self.warms)

    @property
    def measurements(self) -> int:
        """Measurements: ``floor(trajecs / meas)``."""
        return self.trajecs // self.meas


# -- Eq. 1 ----------------------------------------------------------------------

def kernel_time(b1: float, b2: float, s: float, volume: float) -> float:
    """Seconds of one kernel call on ``volume`` sites (Eq. 1).

    ``b1 * min(s, V) + b2 * max(0, V - s)``; ``b1``, ``b2`` in seconds per
    site, ``s`` in sites.  Raises :class:`ValueError` for a negative volume.
    """
    if volume < 0:
        raise ValueError(f"negative lattice volume {volume}")
    return b1 * min(s, volume) + b2 * max(0.0, volume - s)


def _kernel(params: Mapping[str, object], name: str) -> KernelParams:
    entry = params[name]
    if isinstance(entry, KernelParams):
        return entry
    if isinstance(entry, Mapping):
        return KernelParams(float(entry["b1"]), float(entry["b2"]), float(entry["s"]))
    raise TypeError(f"kernel {name!r}: expected KernelParams or a b1/b2/s mapping, got {entry!r}")


# -- geometry ---------------------------------------------------------------------

def local_extents(lattice: Sequence[int], grid: Sequence[int]) -> tuple[int, ...]:
    """Per-process extents ``(nx/px, ny/py, nz/pz, nt/pt)``.

    Raises :class:`ValueError` unless both have 4 entries and every ``p_d``
    divides ``n_d`` (MILC's requirement).
    """
    if len(lattice) != 4 or len(grid) != 4:
        raise ValueError(f"lattice and grid must have 4 entries, got {lattice!r}, {grid!r}")
    out = []
    for n, p in zip(lattice, grid, strict=True):
        if p < 1 or n % p:
            raise ValueError(f"process grid {tuple(grid)} does not divide "
                             f"lattice {tuple(lattice)}")
        out.append(n // p)
    return tuple(out)


def local_volume(extents: Sequence[int]) -> int:
    """Sites per process ``V = Lx Ly Lz Lt``."""
    return math.prod(extents)


def face_sites(extents: Sequence[int]) -> tuple[float, ...]:
    """Sites on the face normal to each dimension, ``V / L_d``."""
    volume = local_volume(extents)
    return tuple(volume / ext for ext in extents)


def halo_sizes(extents: Sequence[int], f: int = 4) -> tuple[float, ...]:
    """Bytes of an su3-matrix gather along each dimension, ``A_d = 18 f V / L_d`` (Sec. II-D)."""
    return tuple(18 * f * sites for sites in face_sites(extents))


def message_size(extents: Sequence[int], f: int = 4) -> float:
    """Representative ``A``: the mean of :func:`halo_sizes` (``18 f * surface / 8``)."""
    sizes = halo_sizes(extents, f)
    return sum(sizes) / len(sizes)


def message_size_cubic(volume: float, f: int = 4) -> float:
    """``A(V) = 18 f V^(3/4)`` for equal extents (Sec. II-D)."""
    return 18 * f * volume ** 0.75


# -- counts -----------------------------------------------------------------------

def call_counts(run: MilcRun) -> dict[str, int]:
    """Calls of each kernel (Eq. 2); ``CG`` counts iterations, ``CG_calls`` invocations."""
    ll = 3 * run.md_steps + run.measurements
    return {
        "FF": run.md_steps,
        "GF": run.md_steps,
        "LL": ll,
        "FL": ll,
        "CG": run.niters,
        "CG_calls": 2 * run.md_steps + 2 * run.measurements,
    }


def gather_counts(run: MilcRun) -> dict[str, int]:
    """Gathers (messages per process) of each kernel (Sec. II-D table, Eq. 3).

    ``CG`` counts the ``A/2`` messages (16 per iteration), ``CG_init`` the
    ``A/6`` messages (16 per invocation).
    """
    calls = call_counts(run)
    out = {name: calls[name] * GATHERS_PER_CALL[name] for name in ("FF", "GF", "LL", "FL")}
    out["CG"] = CG_GATHERS_PER_ITER * run.niters
    out["CG_init"] = CG_GATHERS_PER_CALL * calls["CG_calls"]
    return out


def n_messages(run: MilcRun) -> dict[str, int]:
    """Messages by size class: ``A`` (FF+GF+LL+FL), ``A/2`` and ``A/6`` (Eq. 3)."""
    g = gather_counts(run)
    return {"A": g["FF"] + g["GF"] + g["LL"] + g["FL"], "A/2": g["CG"], "A/6": g["CG_init"]}


def n_allreduce(run: MilcRun) -> int:
    """Allreduce calls (Eq. 4).

    ``niters + 2 [steps (trajecs + warms) + 2 floor(trajecs / meas)]``.
    """
    return run.niters + 2 * (run.md_steps + 2 * run.measurements)


# -- times ------------------------------------------------------------------------

def serial_time(kernels: Mapping[str, object], volume: float, run: MilcRun) -> float:
    """Serial computation time ``Tser`` of Eq. 2.

    *kernels* maps ``FF, GF, LL, FL, CG`` to :class:`KernelParams` or to
    mappings with ``b1``, ``b2`` (seconds per site) and ``s`` (sites).
    """
    t = {name: _kernel(kernels, name).time(volume) for name in KERNELS}
    return (run.md_steps * (t["FF"] + t["GF"] + 3 * (t["LL"] + t["FL"]))
            + run.measurements * (t["LL"] + t["FL"])
            + run.niters * t["CG"])


def _cost_of(m: MessageTime, extents: Sequence[int] | None, volume: float | None,
             f: int, scale: float, cut: Sequence[bool] | None) -> float:
    """Mean cost of one message of class ``A * scale`` over the four dimensions."""
    if extents is None:
        if volume is None:
            raise ValueError("give extents or volume")
        return m(scale * message_size_cubic(volume, f))
    if len(extents) != 4:
        raise ValueError(f"extents must have 4 entries, got {tuple(extents)!r}")
    sizes = halo_sizes(extents, f)
    flags = tuple(cut) if cut is not None else (True,) * 4
    return sum(m(scale * size) for size, c in zip(sizes, flags, strict=True) if c) / 4


def p2p_time(m: MessageTime, run: MilcRun, *, volume: float | None = None,
             extents: Sequence[int] | None = None, grid: Sequence[int] | None = None,
             f: int = 4) -> float:
    """Point-to-point time ``Tp2p`` of Eq. 3.

    ``m(nbytes)`` gives the seconds of one message.  With *volume* the paper's
    hypercube size ``A = 18 f V^(3/4)`` is used; with *extents* each class of
    ``n`` messages costs ``(n / 4) sum_d m(scale * A_d)`` over the cut
    dimensions (``grid[d] > 1``; all cut when *grid* is None).
    """
    cut = None if grid is None else [p > 1 for p in grid]
    counts = n_messages(run)
    return (counts["A"] * _cost_of(m, extents, volume, f, 1.0, cut)
            + counts["A/2"] * _cost_of(m, extents, volume, f, 0.5, cut)
            + counts["A/6"] * _cost_of(m, extents, volume, f, 1.0 / 6.0, cut))


def allreduce_time(nprocs: int, c: float, d: float) -> float:
    """One small allreduce, ``Tred(P) = c + d log2(P)`` (Sec. II-D 2)."""
    if nprocs < 1:
        raise ValueError(f"process count must be >= 1, got {nprocs}")
    return c + d * math.log2(nprocs)


def collective_time(run: MilcRun, nprocs: int, c: float, d: float) -> float:
    """``Tcoll(P) = nred * Tred(P)`` (Eq. 4 and Sec. II-D 2)."""
    return n_allreduce(run) * allreduce_time(nprocs, c, d)


def total_time(kernels: Mapping[str, object], m: MessageTime, run: MilcRun, nprocs: int,
               c: float, d: float, *, volume: float | None = None,
               extents: Sequence[int] | None = None, grid: Sequence[int] | None = None,
               f: int = 4) -> float:
    """``Tpar(V, P) = Tser(V) + Tp2p(V) + Tcoll(P)`` (Eq. 5).

    Give either *volume* (hypercube local lattice) or *extents* (and
    optionally *grid* to mark uncut dimensions).  Example: the whole run on
    ``lattice`` over ``grid``::

        ext = local_extents(lattice, grid)
        total_time(k, m, run, math.prod(grid), c, d, extents=ext, grid=grid)
    """
    if extents is not None:
        volume_ = float(local_volume(extents))
    elif volume is not None:
        volume_ = float(volume)
    else:
        raise ValueError("give extents or volume")
    return (serial_time(kernels, volume_, run)
            + p2p_time(m, run, volume=volume, extents=extents, grid=grid, f=f)
            + collective_time(run, nprocs, c, d))


def cg_time(cg: object, m: MessageTime, niters: int, nprocs: int, c: float, d: float, *,
            calls: int = 1, volume: float | None = None,
            extents: Sequence[int] | None = None, grid: Sequence[int] | None = None,
            f: int = 4) -> float:
    """The CG part alone: *calls* invocations with *niters* iterations in total.

    ``niters T(CG, V) + 16 niters m(A/2) + 16 calls m(A/6)
    + (niters + calls) Tred(P)``: one allreduce per iteration plus one
    initialising allreduce per invocation (Eq. 4 with one quark mass).
    *cg* is a :class:`KernelParams` or a ``b1/b2/s`` mapping.
    """
    params = _kernel({"CG": cg}, "CG")
    cut = None if grid is None else [p > 1 for p in grid]
    volume_ = float(local_volume(extents)) if extents is not None else volume
    if volume_ is None:
        raise ValueError("give extents or volume")
    return (niters * params.time(volume_)
            + CG_GATHERS_PER_ITER * niters * _cost_of(m, extents, volume, f, 0.5, cut)
            + CG_GATHERS_PER_CALL * calls * _cost_of(m, extents, volume, f, 1.0 / 6.0, cut)
            + (niters + calls) * allreduce_time(nprocs, c, d))


# -- message-time models of Sec. III-C ---------------------------------------------

def hockney(latency: float, bandwidth: float) -> MessageTime:
    """``m(x) = lat + x / bw`` (the semi-analytic network model of Sec. III-D)."""
    return lambda nbytes: latency + nbytes / bandwidth


def loggp_message_time(nbytes: float, L: float, o: float, G: float,
                       congestion: float = 1.0) -> float:
    """``L + 2 o + (x - 1) * congestion * G`` (Sec. III-C 1; ``o > g`` assumed)."""
    return L + 2 * o + max(nbytes - 1, 0) * congestion * G


def power5_message_time(nbytes: float, table: Sequence[Mapping[str, float]] | None = None,
                        congestion: float = 8.0) -> float:
    """POWER5+ mixed model for ``P > 256``: ``m(x) = m_inter(x / 2)`` (Sec. III-C 2).

    Half of each message goes inter-node with a congestion of 8 (16 processes
    on 2 NICs), overlapping the intra-node half.  *table* lists the
    inter-node LogGP rows ``{max_bytes, L, o, G}`` (seconds, seconds per
    byte) in increasing ``max_bytes`` (``inf`` for the last); the row is
    picked by the size actually sent, ``x / 2``.  Default: the paper's table.
    """
    rows = table if table is not None else _POWER5_INTER
    half = nbytes / 2
    for row in rows:
        if half <= row["max_bytes"]:
            return loggp_message_time(half, row["L"], row["o"], row["G"], congestion)
    raise ValueError(f"no LogGP row covers {half} bytes")


_POWER5_INTER = (
    # the MILC paper, Sec. III-C table, inter-node rows
    {"max_bytes": 32768.0, "L": 5.8e-6, "o": 14e-6, "G": 0.0013e-6},
    {"max_bytes": math.inf, "L": 5.8e-6, "o": 40e-6, "G": 0.0011e-6},
)
