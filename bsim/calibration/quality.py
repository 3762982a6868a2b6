"""Checks of a calibration's own fits: is this fit good enough to predict with?

A fit is flagged (in the report, on the terminal and in the profile's
``[hardware] calibration_<pair>_flags``) when

* its relative residual (the MILC paper's "average of all relative residuals",
  ``mean(|pred - t| / t)``, :func:`bsim.calibration.lsq.rel_residual`) exceeds
  :data:`MAX_REL_RESIDUAL`: the model's shape does not describe the
  measurements (try the piecewise or size-ranged variants);
* a parameter's relative standard error exceeds :data:`MAX_REL_ERROR`: the
  measurements do not pin it down (measure more sizes, or more repetitions);
* it is degenerate: a Hockney latency or bandwidth that is not positive, a
  LogGP range whose latency terms vanished (``L + 2o`` and ``g`` below
  :data:`MIN_LATENCY`, 1 ns: no network is that fast) or ``G <= 0`` (noise
  fitted as a model);
* it has no degrees of freedom (as many parameters as points: the piecewise
  fit with 2 sizes a piece, a LogGP range of 2 sizes): it passes through every
  point whatever the noise, so nothing measures its quality (its residual is
  nan, not 0).

Kernel fits (:func:`kernel_flags`, ``bsim fit kernel``) get the same residual
and standard-error checks (``t0`` excepted: an intercept near 0 has a large
relative error and no effect on a prediction), a residual being flagged only
when the measurements' own variation does not explain it, and a flag for a
slope that is not positive.

Flags do not stop the calibration: the numbers are written with the flags
beside them, and ``bsim calibrate`` / ``bsim fit kernel`` print them as warnings.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from .netfit import HockneyFit, LogGPRange, PiecewiseFit

if TYPE_CHECKING:
    from .kernels import KernelFit

__all__ = ["MAX_REL_RESIDUAL", "MAX_REL_ERROR", "MIN_LATENCY", "hockney_flags", "loggp_flags",
           "dof_flags", "kernel_flags", "kernel_flags_key", "residual_text", "fit_flags",
           "loggp_range_texts"]

MAX_REL_RESIDUAL = 0.10
"""Largest acceptable relative residual of a fit (10%)."""
MAX_REL_ERROR = 0.25
"""Largest acceptable relative standard error of a fitted parameter (25%)."""
MIN_LATENCY = 1e-9
"""A LogGP range whose ``L + 2o`` and ``g`` are both below this (seconds) is degenerate."""


def hockney_flags(fit: HockneyFit) -> list[str]:
    """What is wrong with a Hockney fit (empty: nothing)."""
    out = []
    if not fit.latency > 0 or not fit.bandwidth > 0:
        out.append(f"hockney fit degenerate: latency {fit.latency:.3g} s, bandwidth "
                   f"{fit.bandwidth:.3g} B/s (both must be > 0)")
    out += _residual_flag("hockney fit", fit.rel_residual, "a line does not describe these "
                          "times (use the piecewise or LogGP variants)")
    out += _error_flags("hockney fit", {"latency": fit.latency_var,
                                        "bandwidth": fit.bandwidth_var})
    return out


def _residual_flag(what: str, rel_residual: float, meaning: str) -> list[str]:
    """The residual check shared by every fit: above :data:`MAX_REL_RESIDUAL`."""
    if rel_residual > MAX_REL_RESIDUAL:
        return [f"{what}: relative residual {rel_residual:.0%} > {MAX_REL_RESIDUAL:.0%}: "
                f"{meaning}"]
    return []


def _error_flags(what: str, errors: Mapping[str, float]) -> list[str]:
    """The standard-error check shared by every fit: above :data:`MAX_REL_ERROR`."""
    return [f"{what}: {name} relative standard error {err:.0%} > {MAX_REL_ERROR:.0%}: the "
            f"measurements do not pin it down (more sizes or repetitions)"
            for name, err in errors.items() if err > MAX_REL_ERROR]


def kernel_flags_key(app: str, kernel: str) -> str:
    """``[hardware]`` key of a kernel fit's flags: ``calibration_kernel_<app>_<kernel>_flags``
    (a list, empty when nothing was flagged), beside the network's
    ``calibration_<pair>_flags``."""
    return f"calibration_kernel_{app}_{kernel}_flags"


def kernel_flags(fit: KernelFit, x: np.ndarray, seconds: np.ndarray,
                 predicted: np.ndarray) -> list[str]:
    """What is wrong with a kernel fit (empty: nothing); *x*, *seconds* are every
    measurement and *predicted* the fit's time for each.

    The relative residual is flagged above :data:`MAX_REL_RESIDUAL` unless the
    measurements vary as much themselves (``fit.variation``, IQR/median at one size:
    then it is noise, which the standard errors carry, not a wrong model); the worst
    sample is named, since one far sample can be the whole residual.
    """
    what = f"{fit.model} fit"
    out = []
    slopes = [k for k in fit.params if k not in ("t0", "s", "break_flops")]
    if fit.model == "linear" and not fit.params["slope"] > 0 or \
            fit.model != "linear" and not any(fit.params[k] > 0 for k in slopes):
        out.append(f"{what} degenerate: {', '.join(f'{k} = {fit.params[k]:.3g}' for k in slopes)}"
                   f" (the times do not grow with the {fit.unit})")
    noise = fit.variation if math.isfinite(fit.variation) else 0.0
    if fit.rel_residual > noise:
        worst = int(np.argmax(np.abs(predicted - seconds) / seconds))
        ratio = seconds[worst] / predicted[worst]
        where = f"{ratio:.3g}x the fit" if ratio >= 1 else f"{1 / ratio:.3g}x below the fit"
        varied = f"{noise:.1%}" if math.isfinite(fit.variation) else "unknown (no repetitions)"
        out += _residual_flag(what, fit.rel_residual, f"the model does not describe these "
                              f"times (the samples at one size vary by {varied}), or some are "
                              f"far off it: the worst, at {fit.unit} {x[worst]:.12g}, is {where}")
    out += _error_flags(what, {k: v for k, v in fit.rel_errors.items() if k != "t0"})
    return out


def loggp_flags(ranges: Sequence[LogGPRange]) -> list[str]:
    """What is wrong with LogGP fits (one entry per problem and range)."""
    out = []
    for r in ranges:
        where = f"loggp {r.describe()}"
        if r.L + 2 * r.o < MIN_LATENCY and r.g < MIN_LATENCY:
            out.append(f"{where} degenerate: L = {r.L:.2g}, o = {r.o:.2g}, g = {r.g:.2g} s, "
                       f"L = o = g = 0 in effect (the small-message terms vanished in the "
                       f"noise)")
        if not r.G > 0:
            out.append(f"{where} degenerate: G = {r.G:.3g} s/B (must be > 0)")
        if r.rel_residual > MAX_REL_RESIDUAL:
            out.append(f"{where}: relative residual {r.rel_residual:.0%} > "
                       f"{MAX_REL_RESIDUAL:.0%}")
    return out


def dof_flags(piecewise: PiecewiseFit | None, ranges: Sequence[LogGPRange]) -> list[str]:
    """Fits without degrees of freedom: one entry for the piecewise fit, one for the
    LogGP ranges."""
    out = []
    if piecewise is not None and piecewise.dof == 0:
        n = 2 * (len(piecewise.breaks) + 1)
        out.append(f"piecewise fit: {n} sizes for its {n} parameters (0 degrees of freedom): "
                   f"it passes through every point, so no residual measures its quality "
                   f"(measure more sizes)")
    exact = [r.describe() for r in ranges if r.dof == 0]
    if exact:
        out.append(f"loggp {'; '.join(exact)}: 2 sizes for the 2 parameters of the ping-pong "
                   f"line (0 degrees of freedom): no residual measures their quality "
                   f"(measure more sizes)")
    return out


def residual_text(rel_residual: float, dof: int, digits: str = ".2g") -> str:
    """``rel. residual 1.2 % (5 dof)``, or what stands in for it without degrees of freedom."""
    if dof <= 0:
        return "no rel. residual (0 degrees of freedom: exact by construction)"
    return f"rel. residual {100 * rel_residual:{digits}} % ({dof} dof)"


# -- reading flags back (bsim/machines/flags.py: the flags of the fits a run uses) --------

def loggp_range_texts(breaks: Sequence[int]) -> list[str]:
    """The LogGP ranges' descriptions (:meth:`LogGPRange.describe`) of a pair whose
    piecewise fit broke at *breaks*; no breaks: the fit over all sizes, ``0 <= S bytes``."""
    edges: list[int | None] = [None, *breaks, None]
    return [LogGPRange(lo, hi, 0.0, 0.0, 0.0, 0.0, math.nan, 0).describe()
            for lo, hi in itertools.pairwise(edges)]


def fit_flags(flags: Sequence[str], fit: str, ranges: Sequence[str] = ()) -> list[str]:
    """The entries of a pair's ``calibration_<pair>_flags`` that are about one of its fits,
    as the functions above word them: *fit* ``"hockney"`` or ``"piecewise"``, or
    ``"loggp"`` with the *ranges* it covers (:func:`loggp_range_texts`; a flag naming
    several ranges, the degrees-of-freedom one, is about each)."""
    if fit != "loggp":
        return [f for f in flags if f.startswith(f"{fit} fit")]
    out = []
    for flag in flags:
        if flag.startswith("loggp "):
            head = flag[len("loggp "):].split(":", 1)[0].removesuffix(" degenerate")
            if set(head.split("; ")) & set(ranges):
                out.append(flag)
    return out
