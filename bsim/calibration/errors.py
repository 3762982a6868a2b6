"""Exceptions of the calibration package."""

from __future__ import annotations

__all__ = ["CalibrationError", "FitError"]


class CalibrationError(ValueError):
    """A calibration run or a profile file is invalid (bad option, bad file, no partner)."""


class FitError(CalibrationError):
    """Data cannot be fitted: too few points, non-positive times, sizes out of order..."""
