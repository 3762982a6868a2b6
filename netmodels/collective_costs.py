"""Collective-cost models: the time ``T(op, P, nbytes)`` of one MPI collective.

The engine asks a collective model how long one collective takes once every
rank has arrived (``docs/collectives.md``).  Three
sources are registered by name and built from spec strings:

* ``analytic``: named algorithms (binomial tree, recursive doubling,
  Rabenseifner, ring, Bruck, ...) costed from the point-to-point time of one
  uncontended message, with MPICH's default choice per size;
* ``clog``: the MILC paper's ``T(P) = c + d*log2(P)`` (Sec. III-C, "Collective
  Communication");
* ``table``: measured times interpolated linearly in process count and size
  (BSIM paper, Sec. 3.C, the PRIMEQUEST method).

Algorithm choice, critical paths and the size convention are in
:mod:`netmodels.collective_algorithms` (re-exported here).

``nbytes`` follows the size convention and ``p2p`` the message-time convention
written in :mod:`netmodels.collective_algorithms`.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from .collective_algorithms import (
    ALGORITHMS,
    DEFAULT_THRESHOLDS,
    OPS,
    P2P,
    CollectiveSpecError,
    SimTime,
    Steps,
    as_p2p,
    bruck_blocks,
    canonical_op,
    ceil_log2,
    chain,
    check_call,
    critical_path,
    default_algorithm,
    floor_pow2,
    is_pow2,
    resolve_algorithm,
    share,
)
from .collective_schedules import evaluate, schedule
from .collective_table_io import ExtrapolationWarning, warn_far
from .collective_table_io import far_outside as _far_outside
from .collective_table_io import interp as _interp
from .collective_table_io import read_csv as _read_csv
from .registry import Registry
from .spec import split_spec

__all__ = [
    "OPS", "ALGORITHMS", "DEFAULT_THRESHOLDS", "CLOG_MACHINES", "CollectiveSpecError",
    "CollectiveModel", "COLLECTIVE_MODELS", "register_collective", "Analytic", "CLog", "Table",
    "canonical_op", "as_p2p", "ceil_log2", "floor_pow2", "is_pow2", "share", "bruck_blocks",
    "resolve_algorithm", "default_algorithm", "critical_path", "chain",
    "build_collective_model", "describe_collective_models", "P2P", "Steps",
    "ExtrapolationWarning",
]


# -- models -----------------------------------------------------------------------------

COLLECTIVE_MODELS: Registry[type[CollectiveModel]] = Registry("collective model",
                                                              CollectiveSpecError)


def register_collective(cls: type[CollectiveModel]) -> type[CollectiveModel]:
    """Class decorator: make *cls* buildable by its ``name`` from a spec string."""
    return COLLECTIVE_MODELS.register(cls)


class CollectiveModel(ABC):
    """Base class of collective-cost sources.

    Subclasses set ``name``, ``parameters`` (spec key -> description) and
    implement :meth:`time`, :meth:`from_items` and :meth:`spec`.
    """

    name: ClassVar[str] = ""
    parameters: ClassVar[dict[str, str]] = {}

    @abstractmethod
    def time(self, op: str, nprocs: int, nbytes: float, p2p: Any = None) -> SimTime:
        """Seconds one *op* takes on *nprocs* ranks for *nbytes* (see module docstring)."""

    @classmethod
    @abstractmethod
    def from_items(cls, items: dict[str, str]) -> CollectiveModel:
        """Build from the raw ``KEY=VALUE`` items of a spec string."""

    @abstractmethod
    def spec(self) -> str:
        """The spec string that rebuilds this model."""

    def lower_bound(self) -> tuple[float, str] | None:
        """``(seconds, op)``: the least :meth:`time` of a call on ``P >= 2`` ranks, and the
        op it prices; None when the model's times come from the network's messages (no
        bound below the network's own)."""
        return None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec()}>"


@register_collective
class Analytic(CollectiveModel):
    """Named algorithms costed from the p2p time of one message (Hockney ``a + s*b``).

    With ``K = ceil(log2 P)``, ``P2 = floor_pow2(P)``, ``b = n/P`` and
    ``t(s) = p2p(s)``; Hockney closed forms for ``P`` a power of two:

    =====================  =================================  ==========================
    algorithm              time                               Hockney, P = 2^K
    =====================  =================================  ==========================
    binomial bcast/reduce  ``K t(n)``                         ``K(a + n b)``
    binomial gather/scat.  ``sum_i t(n min(2^i,P-2^i)/P)``    ``Ka + (P-1)/P n b``
    linear                 ``(P-1) t(n)`` (``t(b)`` g/s)      root serialises (*)
    dissemination barrier  ``K t(0)``                         ``K a``
    rec. doubling allred.  ``K t(n)`` (+2 t(n) folding)       ``K(a + n b)``
    rabenseifner allred.   halving + doubling (+2 t(n))       ``2Ka + 2(P-1)/P n b``
    ring allreduce         ``2(P-1) t(b)``                    ``2(P-1)a + 2(P-1)/P n b``
    reduce_bcast           ``2K t(n)``                        ``2K(a + n b)``
    rec. doubling allg.    ``sum_i t(2^i b)``                 ``Ka + (P-1)/P n b``
    bruck allgather        as binomial gather                 ``Ka + (P-1)/P n b``
    ring allgather         ``(P-1) t(b)``                     ``(P-1)a + (P-1)/P n b``
    pairwise alltoall      ``(P-1) t(b)``                     ``(P-1)a + (P-1)/P n b``
    bruck alltoall         ``sum_k t(b #{i<P: bit k of i})``  ``Ka + K n/2 b``
    rec. halving red_sc.   ``sum_k t(n/2^k)`` (+fold) (**)    ``Ka + (P-1)/P n b``
    scan rec. doubling     ``K t(n)``                         ``K(a + n b)``
    =====================  =================================  ==========================

    (*) The root's time; a non-root of a linear gather/reduce pays its one message and
    relative rank ``k`` of a linear scatter/bcast the root's first ``k``
    (``member_messages``: the engine prices members so).

    (**) P not a power of two: ``t(n) + sum_w t((w/2 + min(r, w/2)) b) + t(b)`` over
    windows ``w = P2, P2/2, ..., 2``: the first ``r`` survivors of the fold carry two
    blocks (MPICH's ``newcnts``, reduce_scatter_intra_recursive_halving.c), so the
    halves are uneven (``critical_path``).

    bcast ``scatter_ring_allgather`` / ``scatter_doubling_allgather`` add the
    binomial scatter and the ring / recursive-doubling allgather of the blocks
    (van de Geijn's long-message bcast).  Full table: ``docs/collectives.md``.

    Sources: Thakur, Rabenseifner, Gropp, "Optimization of collective
    communication operations in MPICH" (IJHPCA 2005); Chan et al.,
    "Collective communication: theory, practice, and experience" (CCPE 2007);
    Bruck et al. (IEEE TPDS 1997).  Non-powers of two: recursive doubling,
    Rabenseifner and recursive halving first fold the ``r = P - P2`` extra
    ranks into partners with one full-size message and, for allreduce and
    reduce_scatter, send the result back at the end (MPICH's scheme); the
    tree, ring, pairwise, Bruck and dissemination algorithms work for any P.
    Reduction arithmetic is not charged.  *algorithms* maps op -> algorithm
    to override :func:`default_algorithm`.
    """

    name = "analytic"
    parameters = {op: f"algorithm: {'|'.join(algs)}" for op, algs in ALGORITHMS.items()}

    def __init__(self, algorithms: Mapping[str, str] | None = None) -> None:
        self.algorithms: dict[str, str] = {}
        for op, alg in (algorithms or {}).items():
            name = canonical_op(op)
            resolve_algorithm(name, alg, 1)                  # validates the name
            self.algorithms[name] = alg

    @classmethod
    def from_items(cls, items: dict[str, str]) -> Analytic:
        return cls(items)

    def algorithm(self, op: str, nprocs: int, nbytes: float) -> str:
        """The algorithm this model runs for *op* (override or MPICH default, resolved)."""
        name = canonical_op(op)
        chosen = self.algorithms.get(name) or default_algorithm(op, nprocs, nbytes)
        return resolve_algorithm(name, chosen, nprocs)

    def time(self, op: str, nprocs: int, nbytes: float, p2p: Any = None) -> SimTime:
        if p2p is None:
            raise CollectiveSpecError("the analytic collective model needs p2p (message time)")
        alg = self.algorithm(op, nprocs, nbytes)
        return chain(critical_path(op, alg, nprocs, nbytes), p2p)

    def time_on_pairs(self, op: str, nprocs: int, nbytes: float,
                      pair_cost: Callable[[int, int, Any], float],
                      root: int = 0) -> SimTime | None:
        """The time with each message priced by its own pair, or None past the budget.

        On a topology an algorithm's partners differ in distance from step to
        step (recursive doubling on a 32x32 torus: 1, 2, 4, 8, 16 hops in x,
        then y), so this evaluates the schedule (``collective_schedules``, from
        *root* for a rooted op) with ``pair_cost(src, dst, nbytes)`` (communicator
        ranks): the expanded algorithm's time without contention; a uniform
        ``pair_cost`` gives :meth:`time` exactly.  None past :data:`PAIR_BUDGET`
        messages.
        """
        alg = self.algorithm(op, nprocs, nbytes)
        steps = critical_path(op, alg, nprocs, nbytes)
        if nprocs * sum(count for _, count in steps) > PAIR_BUDGET:
            return None
        rounds = schedule(op, alg, nprocs, nbytes, root)
        return max(evaluate(rounds, None, nprocs, pair_cost=pair_cost), default=0.0)

    def spec(self) -> str:
        items = ",".join(f"{op}={alg}" for op, alg in self.algorithms.items())
        return f"analytic:{items}" if items else "analytic"


#: Most messages :meth:`Analytic.time_on_pairs` evaluates (about a second of host time).
PAIR_BUDGET = 1 << 19


#: The MILC paper's fitted allreduce parameters ``(c, d)`` in seconds.
CLOG_MACHINES: dict[str, tuple[float, float]] = {
    "power5": (0.0, 3.65e-6),      # the MILC paper, Sec. III (POWER5+): c = 0, d = 3.65 us
    "xt5": (238e-6, 51e-6),        # the MILC paper, Sec. V-B (Cray XT5): a = 238 us, b = 51 us
    "xe6": (21.5e-6, 8.5e-6),      # the MILC paper, Sec. V-C (Cray XE6): a = 21.5 us, b = 8.5 us
}


@register_collective
class CLog(CollectiveModel):
    """The MILC paper's small-message collective: ``T(P) = c + d*log2(P)`` (seconds).

    ``c`` is the startup overhead and ``d`` the time per tree level (MILC paper,
    Sec. III-C "Collective Communication"; fitted to allreduce).  The size is
    ignored.  ``c``/``d`` apply to every op; ``per_op`` (``{"allreduce":
    {"c": .., "d": ..}}``) overrides them per op; ``machine`` (power5, xt5,
    xe6) sets allreduce's pair from the MILC paper.  An op with no ``c`` or no
    ``d`` raises an error naming the op.  ``P = 1`` gives ``c``.
    """

    name = "clog"
    parameters = {"c": "seconds, startup (all ops)", "d": "seconds per log2 level (all ops)",
                  "OP.c": "c for one op", "OP.d": "d for one op",
                  "machine": f"allreduce c,d of the MILC paper: {', '.join(CLOG_MACHINES)}"}

    def __init__(self, c: float | None = None, d: float | None = None,
                 per_op: Mapping[str, Mapping[str, float]] | None = None,
                 machine: str | None = None) -> None:
        self.c, self.d, self.machine = c, d, machine
        self.per_op: dict[str, dict[str, float]] = {}
        if machine is not None:
            if machine not in CLOG_MACHINES:
                raise CollectiveSpecError(
                    f"clog: unknown machine {machine!r}; valid: {', '.join(CLOG_MACHINES)}")
            mc, md = CLOG_MACHINES[machine]
            self.per_op["allreduce"] = {"c": mc, "d": md}
        for op, params in (per_op or {}).items():
            name = canonical_op(op)
            for key, value in params.items():
                if key not in ("c", "d"):
                    raise CollectiveSpecError(f"clog: unknown parameter {op}.{key}; valid: c, d")
                self.per_op.setdefault(name, {})[key] = value
        checks: list[tuple[str, float | None]] = [("c", c), ("d", d)]
        checks += [(f"{op}.{k}", v) for op, p in self.per_op.items() for k, v in p.items()]
        for where, val in checks:
            if val is not None and (not isinstance(val, (int, float))
                                    or not math.isfinite(val) or val < 0):
                raise CollectiveSpecError(f"clog: {where} must be a finite number >= 0, "
                                          f"got {val!r}")

    @classmethod
    def from_items(cls, items: dict[str, str]) -> CLog:
        kwargs: dict[str, Any] = {}
        per_op: dict[str, dict[str, float]] = {}
        for key, value in items.items():
            if key == "machine":
                kwargs["machine"] = value
            elif key in ("c", "d"):
                kwargs[key] = _float("clog", key, value)
            elif "." in key:
                op, _, param = key.partition(".")
                per_op.setdefault(op, {})[param] = _float("clog", key, value)
            else:
                raise CollectiveSpecError(f"clog: unknown parameter {key!r}; valid: "
                                          + ", ".join(cls.parameters))
        return cls(per_op=per_op, **kwargs)

    def coefficients(self, op: str) -> tuple[float, float]:
        """``(c, d)`` for *op*; raises naming the op if either is missing."""
        name = canonical_op(op)
        own = self.per_op.get(name, {})
        c, d = own.get("c", self.c), own.get("d", self.d)
        if c is None or d is None:
            missing = " and ".join(k for k, v in (("c", c), ("d", d)) if v is None)
            raise CollectiveSpecError(f"clog: no {missing} for op {name!r}; give {name}.c/"
                                      f"{name}.d or global c/d")
        return float(c), float(d)

    def time(self, op: str, nprocs: int, nbytes: float, p2p: Any = None) -> SimTime:
        check_call(nprocs, nbytes)
        c, d = self.coefficients(op)
        return c + d * math.log2(nprocs)

    def lower_bound(self) -> tuple[float, str] | None:
        """``c + d`` (``P = 2``) of the cheapest op it can price."""
        ops = {"every op": (self.c, self.d)} | {
            op: (own.get("c", self.c), own.get("d", self.d)) for op, own in self.per_op.items()}
        pairs = [(c + d, op) for op, (c, d) in ops.items() if c is not None and d is not None]
        return min(pairs) if pairs else None

    def spec(self) -> str:
        items = [f"{k}={v}" for k, v in (("c", self.c), ("d", self.d)) if v is not None]
        if self.machine:
            items.append(f"machine={self.machine}")
        machine_pair = CLOG_MACHINES.get(self.machine or "")
        for op, params in self.per_op.items():
            for k, v in params.items():
                if not (op == "allreduce" and machine_pair
                        and v == machine_pair[0 if k == "c" else 1]):
                    items.append(f"{op}.{k}={v}")
        return "clog:" + ",".join(items) if items else "clog"


def _float(model: str, key: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise CollectiveSpecError(f"{model}: {key} must be a number, got {text!r}") from None


_OUTSIDE = ("extrapolate", "clamp", "error")


@register_collective
class Table(CollectiveModel):
    """Measured collective times, interpolated linearly in size and in P (BSIM paper, Sec. 3.C).

    The PRIMEQUEST method: each collective was timed "varying the data size
    and the number of processes" and the measurements "linearly
    interpolated".  For each op, each measured process count is a row of
    ``(nbytes, seconds)`` points; a query interpolates linearly in size within
    the two rows whose P bracket the query, then linearly in P between them
    (bilinear on a full grid; rows may have different sizes).  Beyond the
    measured range ``outside`` decides: ``extrapolate`` (default; the end
    segment's line, floored at 0 s), ``clamp`` (the end value) or ``error``.

    CSV columns (header required, any order, extra columns ignored): ``op,
    nprocs, nbytes, seconds``; ``#`` lines are comments.  Errors (naming file
    and line): missing columns, bad numbers, duplicate ``(op, nprocs,
    nbytes)``, times that fall with growing size while ``monotone`` is true,
    fewer than 2 process counts per op or 2 sizes per row (barrier rows may
    have one point: its size is ignored), and queries for ops not in the table.
    """

    name = "table"
    parameters = {"path": "CSV file with columns op,nprocs,nbytes,seconds",
                  "outside": "extrapolate|clamp|error beyond the measured range",
                  "monotone": "true|false: require time non-decreasing in size"}

    def __init__(self, path: str | Path | None = None, *,
                 points: Iterable[tuple[str, int, float, float]] | None = None,
                 outside: str = "extrapolate", monotone: bool = True) -> None:
        if outside not in _OUTSIDE:
            raise CollectiveSpecError(f"table: outside must be one of {', '.join(_OUTSIDE)}, "
                                      f"got {outside!r}")
        if (path is None) == (points is None):
            raise CollectiveSpecError("table: give exactly one of path and points")
        self.path = None if path is None else str(path)
        self.outside, self.monotone = outside, bool(monotone)
        self._warned: set[tuple[str, tuple[str, ...]]] = set()
        where = self.path or "points"
        rows = _read_csv(Path(path)) if path is not None else [
            (f"{where}[{i}]", *p) for i, p in enumerate(points or [])]
        self._ops = self._build(rows, where)

    @classmethod
    def from_items(cls, items: dict[str, str]) -> Table:
        unknown = sorted(set(items) - set(cls.parameters))
        if unknown:
            raise CollectiveSpecError(f"table: unknown parameter(s) {', '.join(unknown)}; "
                                      f"valid: {', '.join(cls.parameters)}")
        if "path" not in items:
            raise CollectiveSpecError("table: missing path=FILE.csv")
        mono = items.get("monotone", "true").strip().lower()
        if mono not in ("true", "false"):
            raise CollectiveSpecError(f"table: monotone must be true or false, got {mono!r}")
        return cls(items["path"], outside=items.get("outside", "extrapolate"),
                   monotone=mono == "true")

    def _build(self, rows: list[tuple[str, str, int, float, float]], where: str
               ) -> dict[str, tuple[list[int], list[tuple[list[float], list[float]]]]]:
        seen: dict[tuple[str, int, float], str] = {}
        grid: dict[str, dict[int, list[tuple[float, float]]]] = {}
        for loc, op, nprocs, nbytes, seconds in rows:
            try:
                name = canonical_op(op)
            except CollectiveSpecError as exc:
                raise CollectiveSpecError(f"{loc}: {exc}") from None
            if isinstance(nprocs, bool) or not isinstance(nprocs, int) or nprocs < 1:
                raise CollectiveSpecError(f"{loc}: nprocs must be an int >= 1, got {nprocs!r}")
            for key, value in (("nbytes", nbytes), ("seconds", seconds)):
                if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                    raise CollectiveSpecError(f"{loc}: {key} must be a finite number >= 0, "
                                              f"got {value!r}")
            key3 = (name, nprocs, float(nbytes))
            if key3 in seen:
                raise CollectiveSpecError(f"{loc}: duplicate point {name} nprocs={nprocs} "
                                          f"nbytes={nbytes} (first at {seen[key3]})")
            seen[key3] = loc
            grid.setdefault(name, {}).setdefault(nprocs, []).append((float(nbytes),
                                                                     float(seconds)))
        if not grid:
            raise CollectiveSpecError(f"table {where}: no points")
        ops = {}
        for name, by_p in grid.items():
            if len(by_p) < 2:
                raise CollectiveSpecError(
                    f"table {where}: too few points for {name}: need >= 2 process counts, "
                    f"got {sorted(by_p)}")
            rows_out = []
            for nprocs in sorted(by_p):
                pts = sorted(by_p[nprocs])
                if len(pts) < 2 and name != "barrier":
                    raise CollectiveSpecError(
                        f"table {where}: too few points for {name} nprocs={nprocs}: need >= 2 "
                        f"sizes, got {len(pts)}")
                if self.monotone:
                    for (s0, t0), (s1, t1) in zip(pts, pts[1:], strict=False):
                        if t1 < t0:
                            raise CollectiveSpecError(
                                f"table {where}: non-monotone {name} nprocs={nprocs}: "
                                f"{t0} s at {s0:g} B but {t1} s at {s1:g} B (monotone=false "
                                f"to allow)")
                rows_out.append(([s for s, _ in pts], [t for _, t in pts]))
            ops[name] = (sorted(by_p), rows_out)
        return ops

    @property
    def ops(self) -> list[str]:
        """The ops this table has measurements for."""
        return sorted(self._ops)

    def time(self, op: str, nprocs: int, nbytes: float, p2p: Any = None) -> SimTime:
        name = canonical_op(op)
        check_call(nprocs, nbytes)
        if name not in self._ops:
            raise CollectiveSpecError(f"table {self.path or 'points'}: no measurements for "
                                      f"{name}; it has {', '.join(self.ops)}")
        ps, rows = self._ops[name]
        if self.outside == "extrapolate":
            self._warn_if_far(name, ps, rows, nprocs, float(nbytes))
        # The one or two rows that bracket nprocs (end rows when outside).
        j = min(max(bisect_right(ps, nprocs) - 1, 0), len(ps) - 2)
        pair = [j, j + 1]
        if self.outside == "clamp" and (nprocs <= ps[0] or nprocs >= ps[-1]):
            pair = [0] if nprocs <= ps[0] else [len(ps) - 1]
        per_row = [_interp(*rows[k], float(nbytes), self.outside, f"{name} nbytes")
                   for k in pair]
        value = _interp([float(ps[k]) for k in pair], per_row, float(nprocs), self.outside,
                        f"{name} nprocs")
        return max(value, 0.0)

    def lower_bound(self) -> tuple[float, str] | None:
        """The cheapest measured point on 2 or more ranks, or interpolated to 2 from a row
        of 1 (an extrapolation below it shows when it happens)."""
        found = []
        for op, (ps, rows) in self._ops.items():
            found += [(t, op) for p, (_, times) in zip(ps, rows, strict=True) if p >= 2
                      for t in times]
            if ps[0] < 2:
                found += [(self.time(op, 2, s), op) for s in rows[0][0]]
        return min(found)

    def _warn_if_far(self, name: str, ps: list[int], rows: list[Any], nprocs: int,
                     nbytes: float) -> None:
        """Warn once per operation and direction when a call is more than ``FAR`` times
        outside the measured ranks or sizes (a straight-line extrapolation, not a fit)."""
        far = _far_outside(ps, rows, nprocs, nbytes)
        key = (name, tuple(f.split(" ")[1] for f in far))
        if far and key not in self._warned:
            self._warned.add(key)
            warn_far(self.path or "points", name, far)

    def spec(self) -> str:
        if self.path is None:
            raise CollectiveSpecError("table built from points has no spec string")
        return f"table:path={self.path},outside={self.outside}," \
               f"monotone={str(self.monotone).lower()}"


# -- spec strings -----------------------------------------------------------------------

def build_collective_model(spec: str | CollectiveModel) -> CollectiveModel:
    """Build a collective model from ``NAME[:KEY=VALUE[,KEY=VALUE]...]`` (or return *spec*).

    ``analytic`` (``analytic:allreduce=ring,bcast=binomial``), ``clog``
    (``clog:c=1e-6,d=2e-6,allreduce.d=3.65e-6`` or ``clog:machine=xt5``),
    ``table`` (``table:path=coll.csv,outside=clamp,monotone=false``).
    Values are not parsed until the model reads them; a path may not contain
    a comma.  Errors list the valid names and keys.
    """
    if isinstance(spec, CollectiveModel):
        return spec
    if not isinstance(spec, str):
        raise CollectiveSpecError(f"collective model must be a spec string or a "
                                  f"CollectiveModel, got {spec!r}")
    name, items = split_spec(spec, "collective spec", CollectiveSpecError)
    return COLLECTIVE_MODELS.lookup(name).from_items(items)


def describe_collective_models() -> str:
    """One block per registered collective model: its name, formula line and keys."""
    lines = []
    for name in sorted(COLLECTIVE_MODELS):
        cls = COLLECTIVE_MODELS[name]
        lines.append(f"{name}: {(cls.__doc__ or '').strip().splitlines()[0]}")
        lines.extend(f"    {key:<16} {text}" for key, text in cls.parameters.items())
    return "\n".join(lines)
