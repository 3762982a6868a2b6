"""Least-squares helpers shared by the network and kernel fits.

* :func:`check_points` validates measured ``(x, seconds)`` pairs and names the
  problem (too few points, non-finite or negative sizes, non-positive times,
  sizes out of order);
* :func:`weights` gives the residual weights: ``relative`` (``1/t``: every
  point counts by its relative error, the default because timings span
  decades) or ``absolute`` (equal weighting, the MILC paper's ``nls`` choice);
* :func:`linear_fit` solves a bounded linear least-squares problem with
  :func:`scipy.optimize.lsq_linear` and returns relative standard errors;
* :func:`rel_errors` turns a Jacobian into relative standard errors of the
  parameters, as R's ``nls`` reports them (``Std. Error / Estimate``):
  ``cov = s^2 (J^T J)^-1`` with ``s^2 = RSS / (n - p)``;
* :func:`rel_residual`: the MILC paper's figure of merit, "the average of all
  relative residuals for all measurement values": ``mean(|fit - t| / t)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .errors import FitError

__all__ = ["Floats", "WEIGHTINGS", "check_points", "weights", "linear_fit", "rel_errors",
           "rel_residual"]

WEIGHTINGS = ("relative", "absolute")
Floats = Sequence[float] | np.ndarray
"""Sizes or times: a sequence of numbers or a 1-D numpy array."""


def check_points(x: Floats, seconds: Floats, *, what: str,
                 min_points: int, min_distinct: int = 2, strict: bool = False,
                 xname: str = "size", labels: Sequence[str] | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Validate and return ``(x, seconds)`` as float arrays.

    Raises :class:`FitError` naming the problem: fewer than *min_points*
    points or *min_distinct* distinct sizes, a size that is not finite or is
    negative, a time that is not finite or not > 0, or a size smaller than
    the one before it (equal sizes are repetitions unless *strict*).
    *labels* name the points in messages (default ``point i``).
    """
    xa = np.asarray(x, dtype=float).ravel()
    ta = np.asarray(seconds, dtype=float).ravel()
    xnames = xname if xname.endswith("s") else f"{xname}s"   # "cells", not "cellss"
    if xa.size != ta.size:
        raise FitError(f"{what}: {xa.size} {xnames} but {ta.size} times")
    if xa.size < min_points:
        raise FitError(f"{what}: too few points: need >= {min_points}, got {xa.size}")
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
                       f"got {distinct}")
    return xa, ta


def weights(seconds: np.ndarray, weighting: str) -> np.ndarray:
    """Residual weights: ``1/t`` (relative) or ones (absolute)."""
    if weighting == "relative":
        return 1.0 / seconds
    if weighting == "absolute":
        return np.ones_like(seconds)
    raise FitError(f"unknown weighting {weighting!r}; valid: {', '.join(WEIGHTINGS)}")


def rel_errors(jac: np.ndarray, resid: np.ndarray, params: np.ndarray) -> np.ndarray:
    """Relative standard errors ``sqrt(diag(s^2 (J^T J)^-1)) / |p|`` (nan where undefined)."""
    n, p = jac.shape
    out = np.full(p, np.nan)
    if n <= p:
        return out
    s2 = float(resid @ resid) / (n - p)
    try:
        cov = np.linalg.pinv(jac.T @ jac) * s2
    except np.linalg.LinAlgError:
        return out
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.sqrt(np.clip(np.diag(cov), 0, None)) / np.abs(params)
    return np.where(np.isfinite(out), out, np.nan)


def linear_fit(design: np.ndarray, seconds: np.ndarray, weighting: str = "relative",
               lower: Sequence[float] | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """Weighted linear least squares ``seconds ~ design @ p`` with ``p >= lower``.

    Returns ``(params, relative standard errors, weighted RSS)``.  Columns are
    scaled to unit norm before solving so that bytes and seconds mix safely.
    """
    from scipy.optimize import lsq_linear
    w = weights(seconds, weighting)
    a = design * w[:, None]
    b = seconds * w
    norms = np.linalg.norm(a, axis=0)
    norms[norms == 0] = 1.0
    lo = np.zeros(design.shape[1]) if lower is None else np.asarray(lower, dtype=float)
    res = lsq_linear(a / norms, b, bounds=(lo * norms, np.full(design.shape[1], np.inf)),
                     method="bvls")
    params = res.x / norms
    resid = a @ params - b
    return params, rel_errors(a, resid, params), float(resid @ resid)


def rel_residual(predicted: np.ndarray, seconds: np.ndarray) -> float:
    """The MILC paper's relative residual: ``mean(|predicted - t| / t)``."""
    return float(np.mean(np.abs(predicted - seconds) / seconds))
