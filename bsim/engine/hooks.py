"""Instrumentation hooks of the engine: tracing, OS noise, progress, host-compute mode.

All hooks are optional and cost one attribute check when off.  Set them on the
engine (``bsim.simulate(..., tracer=..., noise=..., progress=...)``):

* ``tracer``: receives every span of every rank and every message
  (:class:`Tracer`); the timeline exporter implements it.
* ``noise``: stretches ``add_time`` durations (:class:`ComputeNoise`), e.g.
  periodic OS daemons or random detours on the rank's node.
* ``progress``: called every ``PROGRESS_EVERY`` events with the engine.

Host-compute mode (SMPI's "online" mode) is :func:`measure_compute`: the host
time a rank spends between MPI calls, times a scale, is charged as calc.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .core import Engine

__all__ = ["Tracer", "ComputeNoise", "PROGRESS_EVERY", "measure_compute"]

PROGRESS_EVERY = 1 << 14


class Tracer(Protocol):
    """Receives the timeline of a run (all times in simulated seconds)."""

    def span(self, rank: int, kind: str, name: str, start: float, end: float) -> None:
        """Rank *rank* spent ``[start, end)`` in *kind* (``calc``/``wait``/``comm``) of *name*."""

    def message(self, src: int, dst: int, nbytes: int, tag: int, sent: float,
                received: float) -> None:
        """A point-to-point message from world rank *src* to *dst*."""


class ComputeNoise(Protocol):
    """Turns a compute duration into the time it takes on a noisy node."""

    def stretch(self, rank: int, start: float, seconds: float) -> float:
        """Wall duration of *seconds* of work started at *start* on *rank*'s node (>= seconds)."""


class _Measure:
    """Host-compute mode state: the scale, the clock, and each rank's mark: the clock's
    reading when the rank last resumed or returned from bsim's bookkeeping (kept here,
    not on every rank: ``docs/benchmarks.md``, memory per idle rank)."""

    __slots__ = ("scale", "clock", "marks")

    def __init__(self, scale: float) -> None:
        self.scale = scale
        self.clock = time.perf_counter
        self.marks: dict[Any, float] = {}   # VirtualRank (or a thread's) -> clock()

    def mark(self, vr: Any) -> None:
        """Start *vr*'s next stretch of measured compute now."""
        self.marks[vr] = self.clock()


def measure_compute(engine: Engine, scale: float = 1.0) -> None:
    """Charge host time spent between MPI calls (times *scale*) as calc on *engine*'s ranks.

    The time from a rank's resumption (or the return of its previous MPI call's
    bookkeeping) to its next MPI call is measured with ``time.perf_counter``.
    bsim's own bookkeeping inside nonblocking calls (a few microseconds) is
    counted as compute too; blocking calls are excluded (the clock restarts
    when the rank resumes).  Results are then not bit-reproducible.
    """
    if not scale >= 0:
        raise ValueError(f"compute scale must be >= 0, got {scale!r}")
    engine.measure = _Measure(float(scale))


def hooks_active(engine: Any) -> bool:
    """Whether any per-operation hook is set (the fast paths check one flag)."""
    return engine.tracer is not None or engine.noise is not None
