"""Fit kernel timings to the compute models of the papers.

The data: a CSV file with a header naming a work column and ``seconds``
(``#`` lines are comments, extra columns ignored, rows sorted by work with
repeated rows for repetitions)::

    cells,seconds          # or flops / sites / size / bytes / n / x
    1024,2.1e-06
    1024,2.2e-06
    4096,8.4e-06

Models (``MODELS``), all fitted by :func:`scipy.optimize.least_squares`
with non-negative parameters to the **median at each size** (a median of
``n`` samples counts as ``sqrt(n)`` points), with weights ``1/fitted``
iterated (:func:`bsim.calibration.lsq.reweighted`): timing noise is
multiplicative and skewed, the median is its unbiased centre and ignores
outliers, and weights from the fitted (not the measured) times have no pull
towards low samples (docs/calibration.md has the measurements behind this):

* ``linear``: ``T(x) = t0 + slope x`` (a flop or cell rate; ``rate = 1/slope``);
* ``piecewise``: the BSIM paper's dgemm fit, ``slope_small`` per unit up to
  ``break_flops``, ``slope_large`` above (0.173 / 0.165 ns/flop split at 10
  MFlop): continuous ``slope_small min(x, B) + slope_large max(0, x - B)``
  as ``skeletons.models.hpl.dgemm_time`` evaluates it, or with
  ``continuous=False`` the proportional reading (``slope_large x`` above B);
* ``cache2``: the MILC paper's Eq. 1, ``T(V) = b1 min(s, V) + b2 max(0, V - s)``.

Continuous breakpoints (``piecewise``, ``cache2``) start from a grid search
over the measured sizes (for a fixed break the model is linear) and are then
refined with the break free.  Reported as the MILC paper reports them: parameters,
the relative residual ``mean(|fit - t| / t)`` over every measurement, each
parameter's variation (relative standard error ``Std. Error / Estimate`` of the
fit, ``*_var``, from the scatter of the medians about it: ``sizes - parameters``
degrees of freedom) and the measurement variation (median over sizes of
``IQR / median``), with the flags of :func:`bsim.calibration.quality.kernel_flags`.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .errors import FitError
from .lsq import (
    Floats,
    check_points,
    linear_fit,
    multiplicative_variance,
    rel_errors,
    rel_residual,
    reweighted,
    weights,
)

__all__ = ["MODELS", "WORK_COLUMNS", "KernelData", "KernelFit", "read_kernel_csv",
           "size_medians", "fit_kernel", "kernel_time"]

MODELS = ("linear", "piecewise", "cache2")
WORK_COLUMNS = ("flops", "sites", "cells", "size", "bytes", "n", "x")
_FORMULAS = {
    "linear": "T(x) = t0 + slope*x",
    "piecewise": "T(x) = slope_small*min(x,B) + slope_large*max(0,x-B)  (BSIM paper, dgemm)",
    "piecewise_proportional": "T(x) = slope_small*x (x <= B), slope_large*x (x > B)  (BSIM paper)",
    "cache2": "T(V) = b1*min(s,V) + b2*max(0,V-s)  (MILC paper, Eq. 1)",
}


@dataclass(frozen=True)
class KernelData:
    """Measured kernel times: work per call (``unit``) and seconds, sorted by work."""

    unit: str
    x: np.ndarray
    seconds: np.ndarray
    source: str = "data"

    def variation(self) -> float:
        """Median over sizes with >= 2 repetitions of ``IQR / median`` (nan if none)."""
        rel = []
        for v in np.unique(self.x):
            t = self.seconds[self.x == v]
            if t.size >= 2:
                q1, med, q3 = np.percentile(t, [25, 50, 75])
                rel.append((q3 - q1) / med)
        return float(np.median(rel)) if rel else math.nan


def read_kernel_csv(path: str | Path) -> KernelData:
    """Read a kernel CSV (see the module docstring); errors name the file and line."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")   # -sig: Excel's byte-order mark
    except OSError as exc:
        raise FitError(f"kernel data: cannot read {p}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise FitError(f"{p}: not UTF-8 text (byte {exc.start}); save the CSV as UTF-8"
                       ) from None
    lines = [(i, ln) for i, ln in enumerate(text.splitlines(), 1)
             if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        raise FitError(f"{p}: empty file")
    rows = list(csv.reader([ln for _, ln in lines]))
    header = [h.strip().lower() for h in rows[0]]
    work = next((c for c in WORK_COLUMNS if c in header), None)
    if "seconds" not in header or work is None:
        raise FitError(f"{p}:{lines[0][0]}: need a 'seconds' column and a work column "
                       f"({', '.join(WORK_COLUMNS)}); got {', '.join(header)}")
    iw, it = header.index(work), header.index("seconds")
    xs, ts = [], []
    for (lineno, _), fields in zip(lines[1:], rows[1:], strict=True):
        try:
            xs.append(float(fields[iw]))
            ts.append(float(fields[it]))
        except (ValueError, IndexError):
            raise FitError(f"{p}:{lineno}: expected numbers in columns {work} and seconds, "
                           f"got {fields}") from None
    if not xs:
        raise FitError(f"{p}: no measurements after the header line {lines[0][0]} "
                       f"({_needs('linear', work)}; {_needs('cache2', work)})")
    xa, ta = check_points(xs, ts, what=str(p), min_points=1, min_distinct=1, xname=work,
                          labels=[f"line {ln}" for ln, _ in lines[1:]])
    return KernelData(unit=work, x=xa, seconds=ta, source=str(p))


@dataclass(frozen=True)
class KernelFit:
    """A fitted kernel model: parameters, their relative errors and the fit's residual."""

    model: str
    unit: str
    params: dict[str, float]
    rel_errors: dict[str, float]
    rel_residual: float
    variation: float
    n: int
    sizes: int
    weighting: str
    continuous: bool = True
    extra: dict[str, Any] = field(default_factory=dict)
    dof: int = 0
    """Degrees of freedom of the standard errors: sizes - parameters."""
    flags: list[str] = field(default_factory=list)
    """What :func:`bsim.calibration.quality.kernel_flags` found wrong with this fit."""

    def time(self, x: float) -> float:
        """Model seconds for work *x*."""
        return kernel_time(self.table(), x)

    def table(self) -> dict[str, Any]:
        """The inline TOML table stored as ``[kernels.APP] KERNEL = {...}``."""
        out: dict[str, Any] = {"model": self.model, "unit": self.unit, **self.params}
        if self.model == "piecewise":
            out["continuous"] = self.continuous
        if self.model == "linear" and self.params["slope"] > 0:
            out["rate"] = 1.0 / self.params["slope"]
        out.update({f"{k}_var": v for k, v in self.rel_errors.items() if math.isfinite(v)})
        out["rel_residual"] = self.rel_residual
        if math.isfinite(self.variation):
            out["variation"] = self.variation
        return out

    def report(self) -> str:
        """Parameters, relative residual and variation, as the MILC paper reports a fit."""
        key = "piecewise_proportional" if self.model == "piecewise" and not self.continuous \
            else self.model
        lines = [f"model {self.model}: {_FORMULAS[key]}",
                 f"  {self.n} measurements at {self.sizes} sizes (unit: {self.unit}); fitted "
                 f"to the median at each size, {self.weighting} weighting; {self.dof} dof"]
        for k, v in self.params.items():
            err = self.rel_errors.get(k, math.nan)
            tail = f"  (variation {100 * err:.2g} %)" if math.isfinite(err) else ""
            lines.append(f"  {k:<12} = {v:.6g}{tail}")
        if self.model == "linear" and self.params["slope"] > 0:
            lines.append(f"  {'rate':<12} = {1 / self.params['slope']:.6g} {self.unit}/s")
        lines.append(f"  relative residual     {100 * self.rel_residual:.3g} % "
                     f"(mean |fit - measured| / measured)")
        if math.isfinite(self.variation):
            lines.append(f"  measurement variation {100 * self.variation:.3g} % "
                         f"(median IQR/median over repeated sizes)")
        lines.extend(f"WARNING: {f}" for f in self.flags)
        return "\n".join(lines)


def _hinge_design(x: np.ndarray, brk: float) -> np.ndarray:
    return np.column_stack([np.minimum(x, brk), np.maximum(0.0, x - brk)])


def _fit_hinge(x: np.ndarray, t: np.ndarray, weighting: str, repeats: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``b1 min(x,B) + b2 max(0,x-B)`` through distinct sizes *x*: grid over B, then free
    refinement.  Returns ``(params, rel. errors, fitted, weights)``."""
    from scipy.optimize import least_squares
    best = None
    for brk in x[1:-1]:                        # >= 1 size on each side of B
        (b1, b2), _, rss = linear_fit(_hinge_design(x, brk), t, weighting, repeats=repeats)
        if best is None or rss < best[0]:
            best = (rss, b1, b2, brk)
    assert best is not None
    xs, ts = float(x[-1]), float(np.max(t))    # scale to O(1) for the optimiser
    xn, tn = x / xs, t / ts

    def model(q: np.ndarray) -> np.ndarray:
        return q[0] * np.minimum(xn, q[2]) + q[1] * np.maximum(0.0, xn - q[2])

    def jac(q: np.ndarray) -> np.ndarray:      # of model(q), unweighted
        return np.column_stack([np.minimum(xn, q[2]), np.maximum(0.0, xn - q[2]),
                                np.where(xn > q[2], q[0] - q[1], 0.0)])

    lo = np.array([0.0, 0.0, x[0] / xs])
    q0 = np.array([best[1] * xs / ts, best[2] * xs / ts, best[3] / xs])
    q0 = np.clip(q0, lo + 1e-12, [np.inf, np.inf, 1.0])

    def solve(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        wn = w * ts
        res = least_squares(lambda q: (model(q) - tn) * wn, q0,
                            jac=lambda q: jac(q) * wn[:, None],
                            bounds=(lo, [np.inf, np.inf, 1.0]), method="trf", x_scale="jac")
        return res.x, model(res.x) * ts

    grid_fit = model(q0) * ts
    q, fitted, w = reweighted(solve, t, weighting, repeats, start=grid_fit)
    if float(np.sum(((fitted - t) * w) ** 2)) > best[0]:   # never worse than the grid's best
        q, fitted, w = q0, grid_fit, weights(grid_fit, weighting, repeats, t)
    variance = None
    if weighting == "absolute":                # sandwich for noise proportional to the time
        _, _, mu, wr = _fit_hinge(x, t, "relative", repeats)
        variance = multiplicative_variance(mu, t, wr, 3)
    err = rel_errors(jac(q) * (w * ts)[:, None], (fitted - t) * w, q, variance)  # scale-free
    return np.array([q[0] * ts / xs, q[1] * ts / xs, q[2] * xs]), err, fitted, w


def _fit_proportional(x: np.ndarray, t: np.ndarray, weighting: str, repeats: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    """``slope_small x`` up to B, ``slope_large x`` above; B the largest x of the small group."""
    best = None
    for i in range(1, x.size):
        a_, ea, r1 = linear_fit(x[:i, None], t[:i], weighting, repeats=repeats[:i])
        b_, eb, r2 = linear_fit(x[i:, None], t[i:], weighting, repeats=repeats[i:])
        if best is None or r1 + r2 < best[0]:
            best = (r1 + r2, a_[0], b_[0], x[i - 1], ea[0], eb[0])
    assert best is not None
    return np.array(best[1:4]), np.array([best[4], best[5], math.nan])


def _needs(model: str, unit: str) -> str:
    """What *model* needs, in words: its parameters and one degree of freedom."""
    units = unit if unit.endswith("s") else f"{unit}s"
    if model == "linear":
        return f"a linear fit needs >= 3 distinct {units}: 2 parameters and 1 to measure the fit"
    return (f"a {model} fit needs >= 4 distinct {units}: 3 parameters and 1 to measure "
            f"the fit")


def size_medians(x: np.ndarray, seconds: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(sizes, medians, repetitions)``: the distinct sizes of sorted *x*, the median time
    and the number of samples at each."""
    sizes, first, counts = np.unique(x, return_index=True, return_counts=True)
    medians = np.array([np.median(seconds[i:i + c]) for i, c in zip(first, counts,
                                                                     strict=True)])
    return sizes, medians, counts.astype(float)


def fit_kernel(x: Floats, seconds: Floats, model: str, *,
               weighting: str = "relative", continuous: bool = True,
               unit: str = "x", source: str = "") -> KernelFit:
    """Fit measured kernel times to *model* (``linear``, ``piecewise`` or ``cache2``).

    *x* (work per call, non-decreasing; repeated values are repetitions) and
    *seconds* (> 0).  The model is fitted to the median at each size (see the
    module docstring).  Needs 3 distinct sizes (``linear``) or 4 (the two-slope
    models): the parameters and one degree of freedom.  Raises :class:`FitError`
    naming the problem (and *source*, the data's file, if given).
    """
    from .quality import kernel_flags
    if model not in MODELS:
        raise FitError(f"unknown kernel model {model!r}; valid: {', '.join(MODELS)}")
    what = f"{source}: {model} fit" if source else f"{model} fit"
    need = 3 if model == "linear" else 4
    xa, ta = check_points(x, seconds, what=what, min_points=need, min_distinct=need,
                          xname=unit, needs=_needs(model, unit))
    ux, med, reps = size_medians(xa, ta)
    if model == "linear":
        p, err, _ = linear_fit(np.column_stack([np.ones_like(ux), ux]), med, weighting,
                               repeats=reps)
        names: tuple[str, ...] = ("t0", "slope")
        pred = p[0] + p[1] * xa
    elif model == "piecewise" and not continuous:
        p, err = _fit_proportional(ux, med, weighting, reps)
        names = ("slope_small", "slope_large", "break_flops")
        pred = np.where(xa <= p[2], p[0] * xa, p[1] * xa)
    else:
        p, err, _, _ = _fit_hinge(ux, med, weighting, reps)
        names = ("slope_small", "slope_large", "break_flops") if model == "piecewise" \
            else ("b1", "b2", "s")
        pred = p[0] * np.minimum(xa, p[2]) + p[1] * np.maximum(0.0, xa - p[2])
    data = KernelData(unit, xa, ta)
    fit = KernelFit(model=model, unit=unit,
                    params={k: float(v) for k, v in zip(names, p, strict=True)},
                    rel_errors={k: float(v) for k, v in zip(names, err, strict=True)},
                    rel_residual=rel_residual(pred, ta), variation=data.variation(),
                    n=int(xa.size), sizes=int(ux.size), weighting=weighting,
                    continuous=continuous, dof=int(ux.size) - len(names))
    fit.flags.extend(kernel_flags(fit, xa, ta, pred))
    return fit


def kernel_time(entry: Mapping[str, Any], x: float) -> float:
    """Seconds of one call with work *x* for a ``[kernels.APP] KERNEL`` table.

    Understands the tables this module writes (``model`` key) and the presets'
    untagged ones: ``b1/b2/s`` (MILC paper, Eq. 1) and
    ``slope_small/slope_large/break_flops`` (BSIM paper).  Raises
    :class:`FitError` for a negative *x* or an unknown table.
    """
    if x < 0:
        raise FitError(f"kernel_time: negative work {x}")
    model = entry.get("model")
    if model == "linear" or (model is None and "slope" in entry):
        return float(entry.get("t0", 0.0)) + float(entry["slope"]) * x
    if model == "cache2" or (model is None and "b1" in entry):
        s = float(entry["s"])
        return float(entry["b1"]) * min(s, x) + float(entry["b2"]) * max(0.0, x - s)
    if model == "piecewise" or (model is None and "slope_small" in entry):
        brk, a, b = (float(entry[k]) for k in ("break_flops", "slope_small", "slope_large"))
        if x <= brk:
            return a * x
        return a * brk + b * (x - brk) if entry.get("continuous", True) else b * x
    raise FitError(f"kernel_time: unknown kernel table {dict(entry)!r}; expected model "
                   f"linear, piecewise or cache2")
