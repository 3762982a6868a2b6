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

Flags do not stop the calibration: the numbers are written with the flags
beside them, and ``bsim calibrate`` prints them as warnings.
"""

from __future__ import annotations

from collections.abc import Sequence

from .netfit import HockneyFit, LogGPRange, PiecewiseFit

__all__ = ["MAX_REL_RESIDUAL", "MAX_REL_ERROR", "MIN_LATENCY", "hockney_flags", "loggp_flags",
           "dof_flags", "residual_text"]

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
    if fit.rel_residual > MAX_REL_RESIDUAL:
        out.append(f"hockney fit: relative residual {fit.rel_residual:.0%} > "
                   f"{MAX_REL_RESIDUAL:.0%}: a line does not describe these times (use the "
                   f"piecewise or LogGP variants)")
    for name, err in (("latency", fit.latency_var), ("bandwidth", fit.bandwidth_var)):
        if err > MAX_REL_ERROR:
            out.append(f"hockney fit: {name} relative standard error {err:.0%} > "
                       f"{MAX_REL_ERROR:.0%}: the measurements do not pin it down (more "
                       f"sizes or repetitions)")
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
