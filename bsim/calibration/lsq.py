"""Least-squares helpers shared by the network and kernel fits.

* :func:`check_points` validates measured ``(x, seconds)`` pairs and names the
  problem (too few points, non-finite or negative sizes, non-positive times,
  sizes out of order);
* :func:`reweighted` runs a weighted solve under ``relative`` weighting
  (the default, because timings span decades and their noise is
  multiplicative: each residual divided by the *fitted* time, iterated until
  the weights settle) or ``absolute`` weighting (equal weights, the MILC
  paper's ``nls`` choice).  Weights from the fitted values, not the measured
  ones: dividing by the measured time gives low samples more weight and
  pulls the fit down by about sigma^2 (-6 % at 20 % noise; docs/calibration.md);
* :func:`linear_fit` solves a bounded linear least-squares problem with
  :func:`scipy.optimize.lsq_linear` under that weighting and returns relative
  standard errors;
* :func:`rel_errors` turns a Jacobian into relative standard errors of the
  parameters, as R's ``nls`` reports them (``Std. Error / Estimate``):
  ``cov = s^2 (J^T J)^-1`` with ``s^2 = RSS / (n - p)``, or, given each
  residual's variance (absolute weighting), the sandwich
  ``(J^T J)^-1 J^T diag(var) J (J^T J)^-1``;
* :func:`multiplicative_variance`: those variances for timings, ``phi mu^2``
  from a relative fit (``mu`` its fitted times, ``phi`` its residual variance);
* :func:`rel_residual`: the MILC paper's figure of merit, "the average of all
  relative residuals for all measurement values": ``mean(|fit - t| / t)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from .errors import FitError

__all__ = ["Floats", "WEIGHTINGS", "check_points", "weights", "reweighted", "linear_fit",
           "rel_errors", "multiplicative_variance", "rel_residual"]

WEIGHTINGS = ("relative", "absolute")
Floats = Sequence[float] | np.ndarray
"""Sizes or times: a sequence of numbers or a 1-D numpy array."""
IRLS_ITERATIONS = 50
"""Most reweighting rounds of a relative fit (3-10 are typical; exact data needs 1)."""
IRLS_RTOL = 1e-10
"""The weights have settled when no weight changes by more than this (relative)."""
FITTED_FLOOR = 0.1
"""A fitted time below this fraction of the measured one counts as the fraction (a
bounded fit may put 0 where a time was measured: its weight stays finite)."""


def check_points(x: Floats, seconds: Floats, *, what: str,
                 min_points: int, min_distinct: int = 2, strict: bool = False,
                 xname: str = "size", labels: Sequence[str] | None = None,
                 needs: str = "") -> tuple[np.ndarray, np.ndarray]:
    """Validate and return ``(x, seconds)`` as float arrays.

    Raises :class:`FitError` naming the problem: fewer than *min_points*
    points or *min_distinct* distinct sizes, a size that is not finite or is
    negative, a time that is not finite or not > 0, or a size smaller than
    the one before it (equal sizes are repetitions unless *strict*).
    *labels* name the points in messages (default ``point i``); *needs*, if
    given, is appended to the two count errors (``"a linear fit needs ..."``).
    """
    xa = np.asarray(x, dtype=float).ravel()
    ta = np.asarray(seconds, dtype=float).ravel()
    xnames = xname if xname.endswith("s") else f"{xname}s"   # "cells", not "cellss"
    tail = f" ({needs})" if needs else ""
    if xa.size != ta.size:
        raise FitError(f"{what}: {xa.size} {xnames} but {ta.size} times")
    if xa.size < min_points:
        raise FitError(f"{what}: too few points: need >= {min_points}, got {xa.size}{tail}")
    for i, (xi, ti) in enumerate(zip(xa, ta, strict=True)):
        at = labels[i] if labels is not None else f"point {i}"
        if not math.isfinite(xi) or xi < 0:
            raise FitError(f"{what}: {at}: {xname} must be a finite number >= 0, got {xi}")
        if not math.isfinite(ti) or ti <= 0:
            kind = "negative" if ti < 0 else ("zero" if ti == 0 else "non-finite")
            raise FitError(f"{what}: {at} ({xname} {xi:g}): {kind} time {ti}; "
                           f"times must be finite and > 0 seconds")
        if i and (xi < xa[i - 1] or (strict and xi == xa[i - 1])):
            order = "increasing" if strict else "non-decreasing"
            raise FitError(f"{what}: {xnames} must be {order}: {xi:g} after {xa[i - 1]:g} "
                           f"at {at} (sort the data by {xname})")
    distinct = np.unique(xa).size
    if distinct < min_distinct:
        raise FitError(f"{what}: too few distinct {xnames}: need >= {min_distinct}, "
                       f"got {distinct}{tail}")
    return xa, ta


def weights(fitted: np.ndarray, weighting: str, repeats: np.ndarray | None = None,
            seconds: np.ndarray | None = None) -> np.ndarray:
    """Residual weights: ``sqrt(repeats) / fitted`` (relative) or ``sqrt(repeats)``
    (absolute).  *repeats* (default 1) is how many samples each point summarises (a
    median of n samples counts as sqrt(n) points); *seconds*, if given, floors *fitted* at
    :data:`FITTED_FLOOR` times the measured value."""
    if weighting not in WEIGHTINGS:
        raise FitError(f"unknown weighting {weighting!r}; valid: {', '.join(WEIGHTINGS)}")
    base = np.ones_like(fitted) if repeats is None else np.sqrt(repeats)
    if weighting == "absolute":
        return base
    if seconds is not None:
        fitted = np.maximum(fitted, FITTED_FLOOR * seconds)
    return base / fitted


def reweighted(solve: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
               seconds: np.ndarray, weighting: str, repeats: np.ndarray | None = None,
               start: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Iteratively reweighted least squares: ``(params, fitted, weights)``.

    *solve(w)* minimises ``sum((fitted - seconds)^2 w^2)`` and returns ``(params,
    fitted)``.  Relative weighting starts from the weights of *start* (fitted times;
    default the measured ones) and solves again with ``1 / fitted`` until no weight moves
    by more than :data:`IRLS_RTOL` (at most :data:`IRLS_ITERATIONS` rounds): quasi-
    likelihood for noise proportional to the time, which has no pull towards low samples.
    The weights returned are those of the returned fit.
    """
    w = weights(seconds if start is None else start, weighting, repeats, seconds)
    for _ in range(1 if weighting == "absolute" else IRLS_ITERATIONS):
        params, fitted = solve(w)
        new = weights(fitted, weighting, repeats, seconds)
        if np.all(np.abs(new - w) <= IRLS_RTOL * w):
            break
        w = new
    return params, fitted, new


def rel_errors(jac: np.ndarray, resid: np.ndarray, params: np.ndarray,
               variance: np.ndarray | None = None) -> np.ndarray:
    """Relative standard errors ``sqrt(diag(cov)) / |p|`` (nan where undefined).

    ``cov = s^2 (J^T J)^-1`` with ``s^2 = RSS / (n - p)`` (the weights match the noise);
    with *variance* (each residual's variance, in the units of *resid*) the sandwich
    ``(J^T J)^-1 J^T diag(variance) J (J^T J)^-1``.
    """
    n, p = jac.shape
    out = np.full(p, np.nan)
    if n <= p:
        return out
    try:
        inv = np.linalg.pinv(jac.T @ jac)
    except np.linalg.LinAlgError:
        return out
    if variance is None:
        cov = inv * (float(resid @ resid) / (n - p))
    else:
        cov = inv @ (jac.T * variance) @ jac @ inv
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.sqrt(np.clip(np.diag(cov), 0, None)) / np.abs(params)
    return np.where(np.isfinite(out), out, np.nan)


def multiplicative_variance(fitted: np.ndarray, seconds: np.ndarray, w: np.ndarray,
                            nparams: int) -> np.ndarray:
    """``phi mu^2``: the variance of each residual ``sqrt(repeats) (fit - t)`` of an
    absolute fit when the noise is proportional to the time, from a relative fit
    (*fitted* ``= mu``, its weights *w*, ``phi`` its weighted residual variance)."""
    r = (fitted - seconds) * w
    dof = seconds.size - nparams
    phi = float(r @ r) / dof if dof > 0 else math.nan
    return phi * fitted ** 2


def linear_fit(design: np.ndarray, seconds: np.ndarray, weighting: str = "relative",
               lower: Sequence[float] | None = None, repeats: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray, float]:
    """Weighted linear least squares ``seconds ~ design @ p`` with ``p >= lower``.

    Returns ``(params, relative standard errors, weighted RSS)``.  Columns are
    scaled to unit norm before solving so that bytes and seconds mix safely.
    Relative weighting is :func:`reweighted` (weights ``1/fitted``); absolute weighting
    solves once, and its standard errors are the sandwich with the variances of
    :func:`multiplicative_variance` (timings' noise grows with the time, so ``s^2`` of
    equal weights, which assumes constant noise, would come from the small points' tiny
    residuals and understate the error of what the large points decide).
    *repeats* counts the samples behind each point (see :func:`weights`).
    """
    from scipy.optimize import lsq_linear
    lo = np.zeros(design.shape[1]) if lower is None else np.asarray(lower, dtype=float)

    def solve(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        a = design * w[:, None]
        norms = np.linalg.norm(a, axis=0)
        norms[norms == 0] = 1.0
        res = lsq_linear(a / norms, seconds * w,
                         bounds=(lo * norms, np.full(design.shape[1], np.inf)), method="bvls")
        params = res.x / norms
        return params, design @ params

    params, fitted, w = reweighted(solve, seconds, weighting, repeats)
    a = design * w[:, None]
    resid = (fitted - seconds) * w
    variance = None
    if weighting == "absolute":
        _, mu, wr = reweighted(solve, seconds, "relative", repeats)
        variance = multiplicative_variance(mu, seconds, wr, design.shape[1])
    return params, rel_errors(a, resid, params, variance), float(resid @ resid)


def rel_residual(predicted: np.ndarray, seconds: np.ndarray) -> float:
    """The MILC paper's relative residual: ``mean(|predicted - t| / t)``."""
    return float(np.mean(np.abs(predicted - seconds) / seconds))
