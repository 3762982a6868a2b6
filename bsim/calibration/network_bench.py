"""``bsim calibrate network``: point-to-point microbenchmarks under real MPI.

Run under ``mpiexec -n 2`` (or more)::

    mpiexec -n 2 python -m bsim.calibration calibrate network --profile host.toml

Ranks are grouped by node with ``Split_type(COMM_TYPE_SHARED)``.  One
intra-node pair (the two lowest ranks of the first node holding two) and one
inter-node pair (the lowest ranks of the first two nodes) are measured, one
after the other, while the other ranks wait in a barrier.  For every size:

* **ping-pong**: the leader times ``inner`` round trips (``Send`` then
  ``Recv``; ``inner`` chosen so one sample lasts >= ``min_sample``); one
  sample is half the mean round trip;
* **streams** (for LogGP, see :mod:`bsim.calibration.netfit`): ``T(1, 0, s)``,
  ``T(n, 0, s)`` and ``T(n, d, s)`` with ``d = max(gap(s), T(1, 0, s))``,
  from which ``gap(s)`` and ``o(s)`` follow.

Samples repeat until the 95 % interval of the median is within ``rel_ci``
(:class:`~bsim.calibration.stats.Repetitions`).  Rank 0 fits Hockney,
three-piece ``Tmsg(L)`` and LogGP per range and writes the profile and a CSV
of every measured point (median, quartiles, MAD, outliers).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..outputs.files import atomic_write_text
from .errors import CalibrationError, FitError
from .netfit import HockneyFit, LogGPRange, PiecewiseFit, fit_hockney, fit_loggp, fit_piecewise
from .netprofile import csv_rows, profile_parts
from .profile import update_profile
from .quality import dof_flags, hockney_flags, loggp_flags, residual_text
from .sampling import choose_inner, repeat
from .stats import Repetitions, Summary, summarize

__all__ = ["DEFAULT_SIZES", "QUICK_SIZES", "PairResult", "NetworkCalibration", "find_pairs",
           "measure_pair", "fit_pair", "calibrate_network"]

DEFAULT_SIZES = (0, 1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304)
QUICK_SIZES = (0, 64, 1024, 8192, 65536, 262144)


def find_pairs(comm: Any) -> tuple[dict[str, tuple[int, int]], list[int]]:
    """``({"intra": (a, b), "inter": (c, d)}, ranks per node)``; absent kinds are left out."""
    from mpi4py import MPI
    shared = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.Get_rank())
    leader = shared.bcast(comm.Get_rank(), root=0)
    shared.Free()
    node_of = comm.allgather(leader)
    nodes: dict[int, list[int]] = {}
    for rank, node in enumerate(node_of):
        nodes.setdefault(node, []).append(rank)
    members = [sorted(r) for _, r in sorted(nodes.items())]
    pairs: dict[str, tuple[int, int]] = {}
    multi = [m for m in members if len(m) >= 2]
    if multi:
        pairs["intra"] = (multi[0][0], multi[0][1])
    if len(members) >= 2:
        pairs["inter"] = (members[0][0], members[1][0])
    return pairs, [len(m) for m in members]


def _pingpong(pc: Any, buf: np.ndarray, inner: int) -> float:
    from mpi4py import MPI
    t0 = MPI.Wtime()
    if pc.Get_rank() == 0:
        for _ in range(inner):
            pc.Send(buf, dest=1, tag=1)
            pc.Recv(buf, source=1, tag=1)
    else:
        for _ in range(inner):
            pc.Recv(buf, source=0, tag=1)
            pc.Send(buf, dest=0, tag=1)
    return (MPI.Wtime() - t0) / (2 * inner)


def spin(seconds: float) -> None:
    """Busy work for *seconds* (``MPI.Wtime`` polled): the CPU stays with this process."""
    from mpi4py import MPI
    wtime = MPI.Wtime
    until = wtime() + seconds
    while wtime() < until:
        pass


def _stream(pc: Any, buf: np.ndarray, ack: np.ndarray, count: int, delay: float,
            busy: Callable[[float], None] = spin) -> float:
    """``T(count, delay, s)``: *count* sends with *delay* s of busy work between two
    consecutive ones (``count - 1`` delays: none after the last send, so that
    ``T(n, d, s) - T(1, 0, s) = (n - 1)(o + d)`` once ``d >= gap(s)``), one ack."""
    from mpi4py import MPI
    wtime = MPI.Wtime
    t0 = wtime()
    if pc.Get_rank() == 0:
        for i in range(count):
            if i and delay > 0:
                busy(delay)
            pc.Send(buf, dest=1, tag=2)
        pc.Recv(ack, source=1, tag=3)
    else:
        for _ in range(count):
            pc.Recv(buf, source=0, tag=2)
        pc.Send(ack, dest=0, tag=3)
    return wtime() - t0


@dataclass
class PairResult:
    """Everything measured on one pair: per size, summaries of each measurement."""

    kind: str
    ranks: tuple[int, int]
    sizes: list[int]
    pingpong: list[Summary] = field(default_factory=list)
    stream1: list[Summary] = field(default_factory=list)
    streamn: list[Summary] = field(default_factory=list)
    streamd: list[Summary] = field(default_factory=list)
    delays: list[float] = field(default_factory=list)
    inner: list[int] = field(default_factory=list)
    count: int = 0

    def half_rtt(self) -> np.ndarray:
        """Median one-way times (half round trip), per size."""
        return np.array([s.median for s in self.pingpong])

    def gaps(self) -> np.ndarray:
        """``gap(s) = (T(n,0,s) - T(1,0,s)) / (n-1)`` per size."""
        return np.array([(n.median - one.median) / (self.count - 1)
                         for n, one in zip(self.streamn, self.stream1, strict=True)])

    def overheads(self) -> np.ndarray:
        """``o(s) = (T(n,d,s) - T(1,0,s)) / (n-1) - d`` per size."""
        return np.array([(dd.median - one.median) / (self.count - 1) - d
                         for dd, one, d in zip(self.streamd, self.stream1, self.delays,
                                               strict=True)])


def measure_pair(comm: Any, pair: tuple[int, int], kind: str, sizes: Sequence[int],
                 rule: Repetitions, stream_count: int = 16,
                 min_sample: float = 50e-6,
                 busy: Callable[[float], None] = spin) -> PairResult | None:
    """Measure one pair (collective over *comm*); the result is returned on ``pair[0]``.

    *busy(seconds)* is the stream's work between sends (default :func:`spin`;
    under bsim, where a polled ``Wtime`` does not advance, ``bsim.add_time``).
    """
    from mpi4py import MPI
    me = comm.Get_rank()
    inside = me in pair
    pc = comm.Split(0 if inside else MPI.UNDEFINED, key=pair.index(me) if inside else 0)
    result = None
    if inside:
        result = PairResult(kind, pair, list(sizes), count=stream_count)
        ack = np.zeros(1, np.uint8)[:0]
        for nbytes in sizes:
            buf = np.zeros(max(nbytes, 1), np.uint8)[:nbytes]
            inner = choose_inner(pc, functools.partial(_pingpong, pc, buf, 1), min_sample)
            pp = repeat(pc, functools.partial(_pingpong, pc, buf, inner), rule)
            result.inner.append(inner)
            if pc.Get_rank() == 0:
                result.pingpong.append(summarize(pp))
            if stream_count >= 2:
                t1 = repeat(pc, functools.partial(_stream, pc, buf, ack, 1, 0.0), rule)
                tn = repeat(pc, functools.partial(_stream, pc, buf, ack, stream_count, 0.0),
                            rule)
                delay = 0.0
                if pc.Get_rank() == 0:
                    s1, sn = summarize(t1), summarize(tn)
                    result.stream1.append(s1)
                    result.streamn.append(sn)
                    delay = max((sn.median - s1.median) / (stream_count - 1), s1.median)
                delay = pc.bcast(delay, root=0)
                td = repeat(pc, functools.partial(_stream, pc, buf, ack, stream_count, delay,
                                               busy), rule)
                if pc.Get_rank() == 0:
                    result.streamd.append(summarize(td))
                    result.delays.append(delay)
        pc.Free()
    comm.Barrier()
    return result if me == pair[0] else None


@dataclass
class Fits:
    """The fits of one pair's measurements."""

    hockney: HockneyFit
    piecewise: PiecewiseFit | None
    loggp_all: LogGPRange | None
    loggp: list[LogGPRange]
    notes: list[str]
    flags: list[str] = field(default_factory=list)
    """What :mod:`bsim.calibration.quality` found wrong with these fits."""


def fit_pair(res: PairResult, weighting: str = "relative") -> Fits:
    """Hockney, piecewise (>= 6 sizes) and LogGP (when streams were measured) fits."""
    sizes, half = np.array(res.sizes, float), res.half_rtt()
    notes: list[str] = []
    hockney = fit_hockney(sizes, half, weighting)
    piecewise = None
    try:
        piecewise = fit_piecewise(sizes, half, 3, weighting)
    except FitError as exc:
        notes.append(f"piecewise fit skipped: {exc}")
    loggp_all, ranges = None, []
    if res.streamd:
        gaps, overheads = res.gaps(), res.overheads()
        try:
            loggp_all = fit_loggp(sizes, half, gaps, overheads, (), weighting)[0]
            breaks = piecewise.breaks if piecewise is not None else ()
            ranges = fit_loggp(sizes, half, gaps, overheads, breaks, weighting)
        except FitError as exc:
            notes.append(f"loggp fit skipped: {exc}")
        for r in ([loggp_all] if loggp_all else []) + ranges:
            if r.o_capped:
                notes.append(f"loggp {r.describe()}: the send overhead o(s) includes the "
                             f"transfer (the CPU copies the data); o capped at half the "
                             f"ping-pong intercept, {r.o * 1e6:.3f} us")
    flags = hockney_flags(hockney) + loggp_flags(([loggp_all] if loggp_all else []) + ranges) \
        + dof_flags(piecewise, ([loggp_all] if loggp_all else []) + ranges)
    return Fits(hockney, piecewise, loggp_all, ranges, notes, flags)


@dataclass
class NetworkCalibration:
    """Rank 0's outcome: measurements, fits, where they were written."""

    results: dict[str, PairResult]
    fits: dict[str, Fits]
    ranks_per_node: list[int]
    profile: Path | None = None
    data: Path | None = None

    def report(self) -> str:
        """A readable table of the medians and the fitted parameters."""
        out = [f"nodes: {len(self.ranks_per_node)}, ranks per node: {self.ranks_per_node}"]
        for kind, res in self.results.items():
            fits = self.fits[kind]
            out.append(f"\n{kind}-node pair {res.ranks}: one-way time (half ping-pong)")
            out.append(f"{'bytes':>9} {'median us':>10} {'IQR us':>8} {'MAD us':>8} "
                       f"{'outl':>4} {'n':>4}" + (f" {'gap us':>8} {'o us':>7}"
                                                  if res.streamd else ""))
            gaps = res.gaps() if res.streamd else None
            ovs = res.overheads() if res.streamd else None
            for i, (s, sm) in enumerate(zip(res.sizes, res.pingpong, strict=True)):
                line = (f"{s:>9} {sm.median * 1e6:>10.3f} {sm.iqr * 1e6:>8.3f} "
                        f"{sm.mad * 1e6:>8.3f} {sm.outliers:>4} {sm.n:>4}")
                if gaps is not None and ovs is not None:
                    line += f" {gaps[i] * 1e6:>8.3f} {ovs[i] * 1e6:>7.3f}"
                out.append(line)
            h = fits.hockney
            out.append(f"hockney: latency {h.latency * 1e6:.3f} us (var {100 * h.latency_var:.2g} "
                       f"%), bandwidth {h.bandwidth / 1e9:.3f} GB/s (var "
                       f"{100 * h.bandwidth_var:.2g} %), "
                       f"{residual_text(h.rel_residual, h.dof)}")
            if fits.piecewise:
                p = fits.piecewise
                out.append(f"piecewise: breaks {p.breaks} B; t0 "
                           f"{[round(v * 1e6, 3) for v in p.t0]} us; tb "
                           f"{[float(f'{v * 1e9:.4g}') for v in p.tb]} ns/B; "
                           f"{residual_text(p.rel_residual, p.dof)}")
            for r in ([fits.loggp_all] if fits.loggp_all else []) + fits.loggp:
                out.append(f"loggp {r.describe()}: L {r.L * 1e6:.3f} us, o {r.o * 1e6:.3f} us, "
                           f"g {r.g * 1e6:.3f} us, G {r.G * 1e9:.4g} ns/B, "
                           f"{residual_text(r.rel_residual, r.dof)}")
            out.extend(f"note: {n}" for n in fits.notes)
            out.extend(f"WARNING: {f}" for f in fits.flags)
        if self.profile:
            out.append(f"\nwrote profile {self.profile}")
        if self.data:
            out.append(f"wrote measurements {self.data}")
        return "\n".join(out) + "\n"


def calibrate_network(comm: Any = None, *, sizes: Sequence[int] = DEFAULT_SIZES,
                      rule: Repetitions | None = None, stream_count: int = 16,
                      min_sample: float = 50e-6, profile: str | Path | None = None,
                      data: str | Path | None = None, name: str | None = None,
                      cores_per_node: int | None = None,
                      weighting: str = "relative",
                      busy: Callable[[float], None] = spin) -> NetworkCalibration | None:
    """Measure, fit and write (collective over *comm*, default ``COMM_WORLD``).

    *busy* is the streams' work between sends (see :func:`measure_pair`).

    *stream_count* is the ``n`` of the LogGP streams, >= 2 (``gap`` and ``o`` divide
    by ``n - 1``), or 0 for no streams (``--no-stream``).  Returns the
    :class:`NetworkCalibration` on rank 0, None elsewhere.  Raises
    :class:`CalibrationError` for a bad stream count, one process or bad sizes.
    """
    if isinstance(stream_count, bool) or not isinstance(stream_count, int) or (
            stream_count < 2 and stream_count != 0):
        raise CalibrationError(f"--stream-count must be an integer >= 2 (gap and o divide by "
                               f"n - 1), got {stream_count!r}; --no-stream skips the streams "
                               f"(and LogGP)")
    from mpi4py import MPI
    comm = MPI.COMM_WORLD if comm is None else comm
    sizes = [int(s) for s in sizes]
    if comm.Get_size() < 2:
        raise CalibrationError("calibrate network needs >= 2 processes: run it under "
                               "mpiexec -n 2 (or more)")
    if any(s < 0 for s in sizes) or any(b <= a for a, b in itertools.pairwise(sizes)):
        raise CalibrationError(f"message sizes must be >= 0 and strictly increasing, "
                               f"got {sizes}")
    if len(sizes) < 3:
        raise CalibrationError(f"need >= 3 message sizes for a Hockney fit, got {len(sizes)}")
    rule = rule or Repetitions()
    pairs, per_node = find_pairs(comm)
    results: dict[str, PairResult] = {}
    for kind, pair in pairs.items():
        res = measure_pair(comm, pair, kind, sizes, rule, stream_count, min_sample, busy)
        if res is not None and pair[0] != 0:
            comm.send(res, dest=0, tag=77)
        if comm.Get_rank() == 0:
            got = res if pair[0] == 0 else comm.recv(source=pair[0], tag=77)
            assert isinstance(got, PairResult)
            results[kind] = got
    if comm.Get_rank() != 0:
        return None
    fits = {kind: fit_pair(res, weighting) for kind, res in results.items()}
    cal = NetworkCalibration(results, fits, per_node)
    if data is None and profile is not None:
        data = Path(profile).with_suffix(".network.csv")
    if data is not None:
        cal.data = atomic_write_text(data, csv_rows(results))
    if profile is not None:
        parts = profile_parts(cal, cal.data, name, cores_per_node)
        update_profile(profile, top=parts["top"], top_defaults=parts["defaults"],
                       tables={"network": parts["network"]},
                       subtables={"network_variants": parts["variants"],
                                  "hardware": parts["hardware"]},
                       comments=parts["comments"], remove=parts["remove"])
        cal.profile = Path(profile)
    if "inter" not in results:
        fits["intra"].notes.append("no inter-node pair (all ranks on one node): [network] is "
                                   "the intra-node fit")
    return cal
