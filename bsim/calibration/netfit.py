"""Fits of point-to-point timings to the network models bsim runs.

Input: message sizes (bytes, strictly increasing) and the median one-way
time of each (seconds; half a ping-pong round trip).  All three fits
minimise weighted squared residuals (``relative`` by default, see
:mod:`bsim.calibration.lsq`) with non-negative parameters.

* :func:`fit_hockney`: ``T(s) = latency + s / bandwidth`` (BSIM paper's
  ``l + s/w``).
* :func:`fit_piecewise`: the tutorial's three-piece ``Tmsg(L)`` (modeling tutorial):
  piece ``i`` costs ``t0[i] + s * tb[i]`` up to ``breaks[i]`` bytes, the last
  piece is unbounded.  The breakpoints are chosen by least squares: every
  split of the sorted sizes into consecutive groups of >= 2 points is
  fitted and the smallest total weighted residual wins (exhaustive; fine for
  the < 100 sizes of a sweep).  Pieces need not join (the tutorial's do not).

Every fit reports its degrees of freedom ``dof`` (points - parameters); with
``dof == 0`` (piecewise: 2 sizes a piece; a LogGP range of 2 sizes) the fit
passes through every point whatever the noise, so its relative residual is
nan, not a misleading 0 (:mod:`bsim.calibration.quality` flags it).
* :func:`fit_loggp`: LogGP per size range from three measured curves, after
  Netgauge's PRTT method (Hoefler et al., "LogGP in Theory and Practice",
  2009), simplified to one direction.  ``T(n, d, s)`` is the time for ``n``
  back-to-back sends of ``s`` bytes with ``d`` seconds of busy work between
  two consecutive ones (``n - 1`` delays), closed by a zero-byte reply.  Then
  per size

  - ``gap(s) = (T(n, 0, s) - T(1, 0, s)) / (n - 1)``: time per message of a
    stream (``max(o, g, (s-1) G)`` in bsim's LogGP);
  - ``o(s) = (T(n, d, s) - T(1, 0, s)) / (n - 1) - d`` with ``d >= gap(s)``:
    the sender's CPU time per message;

  and per range: ``g`` and ``G_stream`` fit ``gap(s) = max(g, (s-1) G_stream)``,
  the NIC time per message bsim's LogGP charges (:func:`_fit_gap`: least
  squares, weighted like the one-way times, since a noisy ``gap(s)`` may
  come out <= 0; Netgauge's line ``g + (s-1) G`` would put the bandwidth
  regime's slope into ``g``); the ping-pong gives ``half_rtt(s) = a + (s-1) G``
  (least squares, ``a, G >= 0``); ``o`` is the median of ``o(s)``, capped at ``a / 2`` (a
  blocking send that copies the data itself, as over shared memory or in
  rendezvous, has ``o(s)`` close to the whole transfer; the cap is
  reported); ``L = a - 2 o``.  So the range's cost ``2o + L + (s-1)G``
  (bsim's ``netmodels.flat.LogGP``) is the least-squares line of the
  measured one-way times.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .errors import FitError
from .lsq import Floats, check_points, linear_fit, rel_residual

__all__ = ["HockneyFit", "PiecewiseFit", "LogGPRange", "fit_hockney", "fit_piecewise",
           "fit_loggp"]


@dataclass(frozen=True)
class HockneyFit:
    """``latency + s / bandwidth``, with relative standard errors and the MILC paper's residual."""

    latency: float
    bandwidth: float
    latency_var: float
    bandwidth_var: float
    rel_residual: float
    dof: int
    """Degrees of freedom: sizes - 2 (>= 1: the fit needs 3 sizes)."""

    def time(self, nbytes: float) -> float:
        """Seconds for one message of *nbytes*."""
        return self.latency + nbytes / self.bandwidth

    def table(self) -> dict[str, object]:
        """The ``[network]`` table (``netmodels`` Hockney parameters)."""
        return {"model": "hockney", "latency": self.latency, "bandwidth": self.bandwidth}


@dataclass(frozen=True)
class PiecewiseFit:
    """Tutorial ``Tmsg(L)``: ``t0[i] + s * tb[i]`` for ``s <= breaks[i]`` (last unbounded)."""

    breaks: tuple[int, ...]
    t0: tuple[float, ...]
    tb: tuple[float, ...]
    rel_residual: float
    """nan when ``dof == 0``: a line per piece through its two points fits exactly."""
    dof: int
    """Degrees of freedom: sizes - 2 x pieces (the breakpoints, chosen from the data, are
    not counted, so this is an upper bound)."""

    def piece(self, nbytes: float) -> int:
        """Index of the piece that covers *nbytes*."""
        for i, b in enumerate(self.breaks):
            if nbytes <= b:
                return i
        return len(self.breaks)

    def time(self, nbytes: float) -> float:
        """Seconds for one message of *nbytes*."""
        i = self.piece(nbytes)
        return self.t0[i] + nbytes * self.tb[i]

    def table(self) -> dict[str, object]:
        """The ``piecewise`` network table of docs/machines.md (``/``-joined strings)."""
        return {"model": "piecewise", "breaks": "/".join(str(b) for b in self.breaks),
                "t0": "/".join(repr(float(v)) for v in self.t0),
                "tb": "/".join(repr(float(v)) for v in self.tb)}


@dataclass(frozen=True)
class LogGPRange:
    """LogGP parameters for sizes ``lo < s <= hi`` (``hi`` None: unbounded).

    ``o_capped``: the median send overhead exceeded half the ping-pong line's
    intercept and was capped; ``stream_G``: the per-byte gap of the stream fit;
    ``dof``: the degrees of freedom of the ping-pong line (sizes in the range - 2),
    whose relative residual ``rel_residual`` is nan when ``dof == 0``.
    """

    lo: int | None
    hi: int | None
    L: float
    o: float
    g: float
    G: float
    rel_residual: float
    dof: int
    o_capped: bool = False
    stream_G: float = 0.0

    def time(self, nbytes: float) -> float:
        """bsim's LogGP cost ``2o + L + (s-1)G``."""
        return 2 * self.o + self.L + max(nbytes - 1, 0) * self.G

    def describe(self) -> str:
        """The range in words, e.g. ``4096 < S <= 65536 bytes``."""
        lo = "0 <= S" if self.lo is None else f"{self.lo} < S"
        return f"{lo} <= {self.hi} bytes" if self.hi is not None else f"{lo} bytes"

    def table(self) -> dict[str, object]:
        """A ``loggp`` network table."""
        return {"model": "loggp", "L": self.L, "o": self.o, "g": self.g, "G": self.G}


def fit_hockney(sizes: Floats, seconds: Floats,
                weighting: str = "relative") -> HockneyFit:
    """Least-squares ``latency + s / bandwidth`` through (size, seconds) points.

    Raises :class:`FitError` for fewer than 3 points, bad values, sizes not
    strictly increasing, or times that do not grow with size (no bandwidth).
    """
    s, t = check_points(sizes, seconds, what="hockney fit", min_points=3, strict=True)
    design = np.column_stack([np.ones_like(s), s])
    (lat, beta), err, _ = linear_fit(design, t, weighting)
    if beta <= 0:
        raise FitError(f"hockney fit: times do not grow with size ({t[0]:.3g} s at "
                       f"{s[0]:g} B, {t[-1]:.3g} s at {s[-1]:g} B): bandwidth not identifiable")
    return HockneyFit(latency=float(lat), bandwidth=float(1.0 / beta),
                      latency_var=float(err[0]), bandwidth_var=float(err[1]),
                      rel_residual=rel_residual(lat + s * beta, t), dof=int(s.size) - 2)


def _line(s: np.ndarray, t: np.ndarray, weighting: str) -> tuple[float, float, float]:
    design = np.column_stack([np.ones_like(s), s])
    (a, b), _, rss = linear_fit(design, t, weighting)
    return float(a), float(b), rss


def fit_piecewise(sizes: Floats, seconds: Floats, pieces: int = 3,
                  weighting: str = "relative") -> PiecewiseFit:
    """Least-squares piecewise-linear ``Tmsg(L)`` with *pieces* pieces of >= 2 sizes each.

    Breakpoints are measured sizes (the upper end of each piece); all splits
    are tried.  Raises :class:`FitError` for fewer than ``2 * pieces`` sizes
    or bad input.
    """
    if not isinstance(pieces, int) or pieces < 1:
        raise FitError(f"piecewise fit: pieces must be an int >= 1, got {pieces!r}")
    s, t = check_points(sizes, seconds, what="piecewise fit", min_points=2 * pieces,
                        strict=True)
    n = s.size
    cache: dict[tuple[int, int], tuple[float, float, float]] = {}

    def seg(i: int, j: int) -> tuple[float, float, float]:
        if (i, j) not in cache:
            cache[(i, j)] = _line(s[i:j], t[i:j], weighting)
        return cache[(i, j)]

    best: tuple[float, tuple[int, ...]] | None = None
    # cut positions c_1 < ... < c_{pieces-1}: piece k is s[c_k:c_{k+1}], >= 2 points each
    for cuts in itertools.combinations(range(2, n - 1), pieces - 1):
        bounds = (0, *cuts, n)
        if any(b - a < 2 for a, b in itertools.pairwise(bounds)):
            continue
        total = sum(seg(a, b)[2] for a, b in itertools.pairwise(bounds))
        if best is None or total < best[0]:
            best = (total, bounds)
    assert best is not None
    bounds = best[1]
    lines = [seg(a, b) for a, b in itertools.pairwise(bounds)]
    fit = PiecewiseFit(breaks=tuple(int(s[b - 1]) for b in bounds[1:-1]),
                       t0=tuple(a for a, _, _ in lines), tb=tuple(b for _, b, _ in lines),
                       rel_residual=0.0, dof=n - 2 * pieces)
    pred = np.array([fit.time(v) for v in s])
    return PiecewiseFit(fit.breaks, fit.t0, fit.tb, _quality(pred, t, fit.dof), fit.dof)


def _quality(predicted: np.ndarray, seconds: np.ndarray, dof: int) -> float:
    """The relative residual, or nan without degrees of freedom (an exact fit by
    construction, whatever the noise: not a measure of quality)."""
    return rel_residual(predicted, seconds) if dof > 0 else float("nan")


def _fit_gap(bytes_term: np.ndarray, gap: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """``(g, G_stream)`` of ``gap(s) = max(g, (s-1) G_stream)`` (the NIC time per message
    that ``netmodels.flat.LogGP`` charges) by weighted least squares over the split: the
    ``k >= 1`` smallest sizes give ``g`` (their weighted mean), the others ``G_stream``
    (a weighted line through 0); both >= 0, and the ``k`` with the smallest weighted
    residual sum of squares wins (the largest ``k``, fewest parameters, on a tie)."""
    best: tuple[float, float, float] | None = None
    tie = 1e-12 * float(np.sum(w ** 2 * gap ** 2))     # rounding, not a better fit
    for k in range(gap.size, 0, -1):
        wa, ga = w[:k] ** 2, gap[:k]
        g = max(float(np.sum(wa * ga) / np.sum(wa)), 0.0)
        rss = float(np.sum(wa * (g - ga) ** 2))
        slope = 0.0
        if k < gap.size:
            wb, xb, gb = w[k:] ** 2, bytes_term[k:], gap[k:]
            den = float(np.sum(wb * xb * xb))
            slope = max(float(np.sum(wb * xb * gb)) / den, 0.0) if den > 0 else 0.0
            rss += float(np.sum(wb * (slope * xb - gb) ** 2))
        if best is None or rss < best[0] - tie:
            best = (rss, g, slope)
    assert best is not None
    return best[1], best[2]


def fit_loggp(sizes: Floats, half_rtt: Floats, gap: Floats, overhead: Floats,
              breaks: Sequence[int] = (),
              weighting: str = "relative") -> list[LogGPRange]:
    """LogGP parameters per size range (see the module docstring for the method).

    *gap* and *overhead* are the per-size ``gap(s)`` and ``o(s)`` of the PRTT
    differences; *breaks* are the upper ends of all ranges but the last
    (e.g. the piecewise fit's breakpoints).  Each range needs >= 2 sizes.
    Negative ``o(s)`` (noise around a tiny overhead) count as 0.
    """
    s, p = check_points(sizes, half_rtt, what="loggp fit", min_points=2, strict=True)
    gp = np.asarray(gap, dtype=float)
    ov = np.clip(np.asarray(overhead, dtype=float), 0.0, None)
    if gp.size != s.size or ov.size != s.size:
        raise FitError(f"loggp fit: {s.size} sizes but {gp.size} gaps and {ov.size} overheads")
    if not (np.all(np.isfinite(gp)) and np.all(np.isfinite(ov))):
        raise FitError("loggp fit: gaps and overheads must be finite")
    edges = [None, *[int(b) for b in breaks], None]
    out = []
    for lo, hi in itertools.pairwise(edges):
        mask = np.ones(s.size, bool)
        if lo is not None:
            mask &= s > lo
        if hi is not None:
            mask &= s <= hi
        if np.count_nonzero(mask) < 2:
            raise FitError(f"loggp fit: range ({lo}, {hi}] bytes has "
                           f"{np.count_nonzero(mask)} sizes; need >= 2")
        sm, pm, gm = s[mask], p[mask], gp[mask]
        bytes_term = np.maximum(sm - 1, 0)
        design = np.column_stack([np.ones_like(sm), bytes_term])
        # weights relative to the one-way time: a noisy gap(s) may be <= 0
        w = 1.0 / pm if weighting == "relative" else np.ones_like(pm)
        g, stream_g = _fit_gap(bytes_term, gm, w)
        (a, big_g), _, _ = linear_fit(design, pm, weighting)    # one-way: a + (s-1) G
        o_med = float(np.median(ov[mask]))
        o = min(o_med, float(a) / 2)
        lat = float(a) - 2 * o
        pred = 2 * o + lat + bytes_term * big_g
        out.append(LogGPRange(lo=lo, hi=hi, L=float(lat), o=o, g=float(g), G=float(big_g),
                              rel_residual=_quality(pred, pm, int(sm.size) - 2),
                              dof=int(sm.size) - 2, o_capped=o < o_med,
                              stream_G=float(stream_g)))
    return out
