"""Robust summary statistics of repeated timings.

Timings are skewed to the right (interrupts, other jobs, page faults), so
every measured point is summarised by order statistics rather than by the
mean:

* ``median`` and the quartiles ``q1``, ``q3`` (numpy's default linear
  interpolation); ``iqr = q3 - q1``; ``rel_iqr = iqr / median``;
* ``mad``: the median absolute deviation from the median (unscaled; multiply
  by 1.4826 for a normal-consistent sigma);
* ``outliers``: samples beyond Tukey's fences ``q1 - 1.5 iqr`` and
  ``q3 + 1.5 iqr`` (counted and reported, never dropped: the median is
  already insensitive to them);
* a distribution-free 95 % confidence interval of the median from order
  statistics (Le Boudec, *Performance Evaluation of Computer and
  Communication Systems*, 2010, Thm. 2.1: ranks ``floor(n/2 - 0.98 sqrt n)``
  and ``ceil(n/2 + 1 + 0.98 sqrt n)``, 1-based; ``n >= 6``).

The stopping rule of :class:`Repetitions` uses that interval: repeat until
its half-width is at most ``rel_ci`` of the median.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .errors import CalibrationError

__all__ = ["Summary", "summarize", "median_ci", "isotonic", "Repetitions"]


@dataclass(frozen=True)
class Summary:
    """Order statistics of one measured point (seconds)."""

    n: int
    median: float
    q1: float
    q3: float
    mad: float
    minimum: float
    maximum: float
    mean: float
    outliers: int
    ci_low: float
    ci_high: float

    @property
    def iqr(self) -> float:
        """Interquartile range ``q3 - q1``."""
        return self.q3 - self.q1

    @property
    def rel_iqr(self) -> float:
        """``iqr / median`` (0 when the median is 0)."""
        return self.iqr / self.median if self.median > 0 else 0.0

    @property
    def rel_ci(self) -> float:
        """Half-width of the 95 % median interval relative to the median (inf if n < 6)."""
        if self.median <= 0:
            return math.inf
        return (self.ci_high - self.ci_low) / 2 / self.median

    def row(self) -> dict[str, float]:
        """The summary as CSV columns."""
        return {"n": self.n, "median": self.median, "q1": self.q1, "q3": self.q3,
                "mad": self.mad, "min": self.minimum, "max": self.maximum, "mean": self.mean,
                "outliers": self.outliers, "ci_low": self.ci_low, "ci_high": self.ci_high}

    def __repr__(self) -> str:
        return (f"<Summary n={self.n} median={self.median:.3e} iqr={self.iqr:.2e} "
                f"outliers={self.outliers}>")


def median_ci(sorted_samples: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """Distribution-free 95 % confidence interval of the median (Le Boudec, Thm. 2.1).

    *sorted_samples* must be sorted.  Below 6 samples no interval exists at
    95 %; the full range ``(min, max)`` is returned, and :attr:`Summary.rel_ci`
    is then infinite.
    """
    n = len(sorted_samples)
    if n == 0:
        raise CalibrationError("median_ci: no samples")
    if n < 6:
        return float(sorted_samples[0]), math.inf
    lo = max(int(math.floor(n / 2 - 0.98 * math.sqrt(n))), 1)
    hi = min(int(math.ceil(n / 2 + 1 + 0.98 * math.sqrt(n))), n)
    return float(sorted_samples[lo - 1]), float(sorted_samples[hi - 1])


def summarize(samples: Sequence[float] | np.ndarray) -> Summary:
    """:class:`Summary` of *samples* (seconds); raises for no or non-finite samples."""
    a = np.sort(np.asarray(samples, dtype=float))
    if a.size == 0:
        raise CalibrationError("summarize: no samples")
    if not np.all(np.isfinite(a)):
        raise CalibrationError(f"summarize: non-finite sample among {a.tolist()[:5]}...")
    q1, med, q3 = (float(v) for v in np.percentile(a, [25, 50, 75]))
    iqr = q3 - q1
    outliers = int(np.count_nonzero((a < q1 - 1.5 * iqr) | (a > q3 + 1.5 * iqr)))
    lo, hi = median_ci(a)
    return Summary(n=int(a.size), median=med, q1=q1, q3=q3,
                   mad=float(np.median(np.abs(a - med))), minimum=float(a[0]),
                   maximum=float(a[-1]), mean=float(a.mean()), outliers=outliers,
                   ci_low=lo, ci_high=hi)


def isotonic(values: Sequence[float]) -> list[float]:
    """Non-decreasing least-squares fit of *values* (pool adjacent violators, equal weights).

    Used to make measured collective times non-decreasing in size, as the
    ``table`` collective model requires, by the smallest squared change.
    """
    blocks: list[list[float]] = []     # [mean, count]
    for v in values:
        blocks.append([float(v), 1.0])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            m2, c2 = blocks.pop()
            m1, c1 = blocks.pop()
            blocks.append([(m1 * c1 + m2 * c2) / (c1 + c2), c1 + c2])
    out: list[float] = []
    for mean, count in blocks:
        out.extend([mean] * int(count))
    return out


@dataclass(frozen=True)
class Repetitions:
    """How often to repeat one measurement.

    Samples are taken in batches of ``batch`` after ``warmup`` discarded ones.
    Stop when ``max_reps`` samples are in, or when at least ``min_reps`` are
    in and either the 95 % median interval is within ``rel_ci`` of the
    median or ``max_seconds`` of wall time were spent on this point.
    """

    min_reps: int = 10
    max_reps: int = 200
    rel_ci: float = 0.02
    max_seconds: float = 1.0
    batch: int = 5
    warmup: int = 2

    def __post_init__(self) -> None:
        if not (isinstance(self.min_reps, int) and self.min_reps >= 1):
            raise CalibrationError(f"min_reps must be an int >= 1, got {self.min_reps!r}")
        if not (isinstance(self.max_reps, int) and self.max_reps >= self.min_reps):
            raise CalibrationError(f"max_reps must be an int >= min_reps ({self.min_reps}), "
                                   f"got {self.max_reps!r}")
        for key in ("rel_ci", "max_seconds"):
            value = getattr(self, key)
            if not (value > 0 and math.isfinite(value)):
                raise CalibrationError(f"{key} must be finite and > 0, got {value!r}")
        if not (isinstance(self.batch, int) and self.batch >= 1):
            raise CalibrationError(f"batch must be an int >= 1, got {self.batch!r}")
        if not (isinstance(self.warmup, int) and self.warmup >= 0):
            raise CalibrationError(f"warmup must be an int >= 0, got {self.warmup!r}")

    def done(self, samples: Sequence[float], elapsed: float) -> bool:
        """True when *samples* (taken in *elapsed* seconds) are enough."""
        n = len(samples)
        if n >= self.max_reps:
            return True
        if n < self.min_reps:
            return False
        if elapsed >= self.max_seconds:
            return True
        return summarize(samples).rel_ci <= self.rel_ci
