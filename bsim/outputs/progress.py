"""A progress line on stderr for long simulations (the engine's ``progress`` hook).

The engine calls the hook every ``bsim.engine.hooks.PROGRESS_EVERY`` events with
itself.  :class:`ProgressBar` stays silent for the first *delay* host seconds
(short runs print nothing), then redraws at most every *interval* seconds::

    bsim t=12.345 ms  ranks done 3/4096  events 2,345,678  412,000 ev/s  6.1 s eta<=40s

``t`` is the simulated time reached: the largest rank clock (ranks run ahead
of the engine's ``now`` between synchronisations; ``now`` is shown when it is
larger).  A run's end is not known in advance, so there is an ETA only when the
run has a limit (``--max-events`` or ``--max-sim-time``): the time to reach it
at the current rate, an upper bound.  :func:`make_progress`
returns None (no hook at all) with ``quiet`` or when the stream is not a
terminal, so logs and pipes never see carriage returns.
"""

from __future__ import annotations

import math
import shutil
import sys
import time
from typing import Any, TextIO

__all__ = ["ProgressBar", "make_progress"]


class ProgressBar:
    """The ``progress`` hook: a one-line status on *stream* after *delay* host seconds."""

    def __init__(self, stream: TextIO | None = None, delay: float = 3.0,
                 interval: float = 0.25) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.delay, self.interval = float(delay), float(interval)
        self.shown = False
        self.last_draw = -1.0
        self.started = time.perf_counter()
        self.last_len = 0

    def __call__(self, engine: Any) -> None:
        """Called by the engine with itself; redraws when due."""
        host = engine.host_seconds
        if host < self.delay or host - self.last_draw < self.interval:
            return
        self.last_draw = host
        self.draw(self.line(engine))

    @staticmethod
    def stats(engine: Any) -> dict[str, float]:
        """Simulated time reached, finished ranks, operations, events, event rate."""
        ranks = engine.ranks
        clock = max((r.clock for r in ranks), default=0.0)
        now = float(engine.now)
        done = sum(1 for r in ranks if r.finished)
        ops = sum(r.ops for r in ranks)
        host = engine.host_seconds
        return {"time": max(clock, now), "done": done, "ranks": len(ranks), "ops": ops,
                "events": engine.events, "host": host,
                "rate": engine.events / host if host > 0 else 0.0}

    def line(self, engine: Any) -> str:
        """The status line for *engine*'s current state."""
        s = self.stats(engine)
        # compact enough for an 80-column terminal; draw() cuts anything longer
        return (f"bsim t={_fmt(s['time'])}  ranks done {s['done']}/{s['ranks']}  "
                f"events {s['events']:,}  {s['rate']:,.0f} ev/s  {s['host']:.1f} s"
                f"{_eta(engine, s)}")

    def draw(self, text: str) -> None:
        """Overwrite the current line with *text*, cut to the terminal's width.

        A line as wide as the terminal would wrap, and every redraw would then leave
        a stale line behind.
        """
        text = text[:max(shutil.get_terminal_size((80, 24)).columns - 1, 20)]
        pad = " " * max(self.last_len - len(text), 0)
        self.stream.write("\r" + text + pad)
        self.stream.flush()
        self.last_len = len(text)
        self.shown = True

    def close(self) -> None:
        """Erase the line if one was drawn (call after the run)."""
        if self.shown:
            self.stream.write("\r" + " " * self.last_len + "\r")
            self.stream.flush()
            self.shown = False


def make_progress(quiet: bool = False, stream: TextIO | None = None,
                  delay: float = 3.0) -> ProgressBar | None:
    """A :class:`ProgressBar` for *stream* (stderr), or None when *quiet* or not a terminal."""
    stream = stream if stream is not None else sys.stderr
    if quiet or stream is None:
        return None
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return ProgressBar(stream, delay=delay) if tty else None


def _eta(engine: Any, s: dict[str, float]) -> str:
    """`` eta<=N s`` to the run's limit at the current rate, or ``""`` without a limit."""
    left = []
    limit = getattr(engine, "max_events", 0)
    if limit and s["rate"] > 0:
        left.append((limit - s["events"]) / s["rate"])
    until = getattr(engine, "max_sim_time", math.inf)
    if math.isfinite(until) and s["time"] > 0 and s["host"] > 0:
        left.append((until - s["time"]) / (s["time"] / s["host"]))
    return f" eta<={max(min(left), 0.0):.0f}s" if left else ""


def _fmt(seconds: float) -> str:
    a = abs(seconds)
    if a >= 1 or a == 0:
        return f"{seconds:.4f} s"
    if a >= 1e-3:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds * 1e6:.3f} us"
