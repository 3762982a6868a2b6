"""``bsim calibrate collectives``: the measured table of the BSIM paper's PRIMEQUEST method.

Run under ``mpiexec -n P``::

    mpiexec -n 2 python -m bsim.calibration calibrate collectives --profile host.toml

For every sub-communicator size ``p`` (ranks ``0..p-1`` of ``COMM_WORLD``;
the others wait in a barrier), every op and every size, one sample is:
a barrier, then ``inner`` back-to-back calls (``inner`` chosen so a sample
lasts >= ``min_sample``), timed on each rank; the sample is the **maximum
over the ranks** of their mean time per call (a collective is over when its
slowest rank is).  Samples repeat per :class:`~bsim.calibration.stats.Repetitions`.

``nbytes`` follows ``docs/collectives.md``: the allreduce vector (float64
``SUM``), the bcast buffer, one rank's alltoall send buffer (``p`` blocks of
``nbytes // p``: the size written is ``p * (nbytes // p)``), 0 for barrier.

The CSV has the ``table`` model's columns ``op, nprocs, nbytes, seconds``
plus the statistics of each point (``median, q1, q3, mad, n, outliers,
inner``).  ``seconds`` is the median, made non-decreasing in size per
``(op, nprocs)`` by isotonic regression (the table model's ``monotone``
check; ``monotone=False`` keeps the raw medians).
"""

from __future__ import annotations

import csv
import datetime
import functools
import io
import itertools
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..outputs.files import atomic_write_text
from .errors import CalibrationError
from .profile import update_profile
from .sampling import choose_inner, mpi_library, repeat
from .stats import Repetitions, Summary, isotonic, summarize

__all__ = ["DEFAULT_OPS", "OPS", "DEFAULT_SIZES", "QUICK_SIZES", "CollectiveCalibration",
           "default_nprocs", "calibrate_collectives"]

DEFAULT_OPS = ("allreduce", "bcast", "alltoall", "barrier")
OPS = ("allreduce", "bcast", "alltoall", "barrier", "allgather", "reduce")
DEFAULT_SIZES = (0, 8, 64, 512, 4096, 32768, 262144, 1048576)
QUICK_SIZES = (0, 64, 4096, 65536)


def default_nprocs(size: int) -> list[int]:
    """``1..size`` up to 8 processes, else the powers of two below *size* and *size*."""
    if size <= 8:
        return list(range(1, size + 1))
    out, p = [], 1
    while p < size:
        out.append(p)
        p *= 2
    return [*out, size]


def _runner(comm: Any, op: str, nbytes: int) -> tuple[Callable[[], None], int]:
    """A closure doing one *op* of *nbytes* on *comm*, and the size it really moves."""
    from mpi4py import MPI
    p = comm.Get_size()
    if op == "barrier":
        return comm.Barrier, 0
    if op in ("allreduce", "reduce"):
        count = nbytes // 8
        send, recv = np.ones(count), np.empty(count)
        if op == "allreduce":
            return (lambda: comm.Allreduce(send, recv, op=MPI.SUM)), 8 * count
        return (lambda: comm.Reduce(send, recv, op=MPI.SUM, root=0)), 8 * count
    if op == "bcast":
        buf = np.zeros(nbytes, np.uint8)
        return (lambda: comm.Bcast(buf, root=0)), nbytes
    block = nbytes // p
    if op == "alltoall":
        send, recv = np.zeros(block * p, np.uint8), np.zeros(block * p, np.uint8)
        return (lambda: comm.Alltoall(send, recv)), block * p
    if op == "allgather":
        send, recv = np.zeros(block, np.uint8), np.zeros(block * p, np.uint8)
        return (lambda: comm.Allgather(send, recv)), block * p
    raise CalibrationError(f"unknown collective {op!r}; valid: {', '.join(OPS)}")


def _sample(comm: Any, fn: Callable[[], None], inner: int) -> float:
    from mpi4py import MPI
    comm.Barrier()
    t0 = MPI.Wtime()
    for _ in range(inner):
        fn()
    return (MPI.Wtime() - t0) / inner


@dataclass
class Point:
    """One measured (op, nprocs, nbytes)."""

    op: str
    nprocs: int
    nbytes: int
    summary: Summary
    inner: int
    seconds: float = 0.0


@dataclass
class CollectiveCalibration:
    """Rank 0's outcome: the points and where they were written."""

    points: list[Point] = field(default_factory=list)
    csv: Path | None = None
    profile: Path | None = None
    monotone: bool = True

    def report(self) -> str:
        """The table as text (microseconds)."""
        out = [f"{'op':<10} {'P':>3} {'bytes':>9} {'median us':>10} {'IQR us':>8} "
               f"{'outl':>4} {'n':>4} {'table us':>9}"]
        for pt in self.points:
            s = pt.summary
            out.append(f"{pt.op:<10} {pt.nprocs:>3} {pt.nbytes:>9} {s.median * 1e6:>10.3f} "
                       f"{s.iqr * 1e6:>8.3f} {s.outliers:>4} {s.n:>4} {pt.seconds * 1e6:>9.3f}")
        if self.csv:
            out.append(f"wrote table {self.csv}")
        if self.profile:
            out.append(f"wrote [collectives] of {self.profile}")
        return "\n".join(out) + "\n"

    def to_csv(self) -> str:
        """The ``table`` CSV with statistics columns."""
        buf = io.StringIO()
        buf.write(f"# bsim calibrate collectives on {socket.gethostname()}, {mpi_library()}, "
                  f"{datetime.date.today().isoformat()}\n# seconds: median per call, max over "
                  f"ranks{' (isotonic in nbytes)' if self.monotone else ''}; docs/"
                  f"calibration.md\n")
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["op", "nprocs", "nbytes", "seconds", "median", "q1", "q3", "mad", "n",
                    "outliers", "inner"])
        for pt in self.points:
            s = pt.summary
            w.writerow([pt.op, pt.nprocs, pt.nbytes, repr(pt.seconds), repr(s.median),
                        repr(s.q1), repr(s.q3), repr(s.mad), s.n, s.outliers, pt.inner])
        return buf.getvalue()


def _check(ops: Sequence[str], nprocs: Sequence[int], sizes: Sequence[int], size: int) -> None:
    bad = [op for op in ops if op not in OPS]
    if bad or not ops:
        raise CalibrationError(f"unknown collective(s) {', '.join(bad) or '(none given)'}; "
                               f"valid: {', '.join(OPS)}")
    wrong = [p for p in nprocs if not 1 <= p <= size]
    if wrong:
        raise CalibrationError(f"sub-communicator sizes {wrong} outside 1..{size} (the "
                               f"mpiexec -n)")
    if len(set(nprocs)) < 2:
        raise CalibrationError(f"the table model needs >= 2 process counts, got {list(nprocs)}"
                               f"; run under mpiexec -n 2 or more")
    if any(s < 0 for s in sizes) or any(b <= a for a, b in itertools.pairwise(sizes)):
        raise CalibrationError(f"sizes must be >= 0 and strictly increasing, got {list(sizes)}")
    if any(op != "barrier" for op in ops) and len(sizes) < 2:
        raise CalibrationError(f"the table model needs >= 2 sizes per row, got {list(sizes)}")


def calibrate_collectives(comm: Any = None, *, ops: Sequence[str] = DEFAULT_OPS,
                          nprocs: Sequence[int] | None = None,
                          sizes: Sequence[int] = DEFAULT_SIZES, rule: Repetitions | None = None,
                          min_sample: float = 50e-6, csv_path: str | Path | None = None,
                          profile: str | Path | None = None,
                          monotone: bool = True) -> CollectiveCalibration | None:
    """Time *ops* over sub-communicators of *nprocs* ranks and *sizes* bytes; write the table.

    Collective over *comm* (default ``COMM_WORLD``); returns the result on
    rank 0, None elsewhere.  The CSV goes to *csv_path* (default: *profile*
    with suffix ``.collectives.csv``); *profile* gets ``[collectives] model =
    "table"`` with the CSV's absolute path.
    """
    from mpi4py import MPI
    comm = MPI.COMM_WORLD if comm is None else comm
    size, rank = comm.Get_size(), comm.Get_rank()
    ops = [op.strip().lower() for op in ops]
    nprocs = sorted(set(nprocs)) if nprocs else default_nprocs(size)
    sizes = [int(s) for s in sizes]
    _check(ops, nprocs, sizes, size)
    if csv_path is None and profile is not None:
        csv_path = Path(profile).with_suffix(".collectives.csv")
    if csv_path is None:
        raise CalibrationError("give a CSV path or a profile to write the table to")
    rule = rule or Repetitions()
    cal = CollectiveCalibration(monotone=monotone)
    for p in nprocs:
        sub = comm.Split(0 if rank < p else MPI.UNDEFINED, rank)
        if rank < p:
            for op in ops:
                done: set[int] = set()
                for nbytes in (sizes[:1] if op == "barrier" else sizes):
                    fn, actual = _runner(sub, op, nbytes)
                    if actual in done:          # alltoall blocks round down: skip repeats
                        continue
                    done.add(actual)
                    inner = choose_inner(sub, functools.partial(_sample, sub, fn, 1),
                                         min_sample)
                    samples = repeat(sub, functools.partial(_sample, sub, fn, inner), rule,
                                     combine="max")
                    if rank == 0:
                        cal.points.append(Point(op, p, actual, summarize(samples), inner))
            sub.Free()
        comm.Barrier()
    if rank != 0:
        return None
    rows: dict[tuple[str, int], list[Point]] = {}
    for pt in cal.points:
        rows.setdefault((pt.op, pt.nprocs), []).append(pt)
    for row in rows.values():
        medians = [pt.summary.median for pt in row]
        for pt, sec in zip(row, isotonic(medians) if monotone else medians, strict=True):
            pt.seconds = sec
    cal.csv = atomic_write_text(csv_path, cal.to_csv())
    if profile is not None:
        update_profile(profile, tables={"collectives": {
            "model": "table", "path": str(Path(csv_path).resolve()),
            "monotone": monotone}},
            comments={"collectives.path": "bsim calibrate collectives (BSIM paper table method)"})
        cal.profile = Path(profile)
    return cal
