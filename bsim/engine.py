"""The discrete-event engine: a SimPy ``Environment`` whose processes are greenlets.

Each virtual rank runs the user's plain blocking code in a greenlet.  A blocking
LMPI call schedules a wake-up (or waits for someone to schedule one) and
switches to the engine's greenlet, which pops the next event and switches back
into the rank it wakes.

Event order (the determinism contract, DESIGN.md "Engine"): the queue is
ordered by ``(time, priority, key)``.  Priority 0 is network events (message
arrivals), priority 1 rank wake-ups, so a rank acting at time t sees every
message that arrived at t.  ``key`` is ``(owner world rank << 32) | owner's
sequence number``: the rank that caused the event and how many events it had
caused before.  Neither depends on host timing, insertion order or how ranks
are partitioned over host processes.  Plain SimPy events scheduled through
:meth:`Engine.schedule` (for models written as SimPy processes) get keys above
every rank's and keep SimPy's insertion order among themselves.
"""

from __future__ import annotations

import gc
import os
import time as _time
from collections.abc import Callable
from heapq import heappop, heappush
from itertools import count
from typing import Any

import greenlet
import simpy
from simpy.core import EmptySchedule

from .errors import BsimError, DeadlockError, RankError
from .hooks import PROGRESS_EVERY
from .rank import PRIO_NET, RankGreenlet, VirtualRank

__all__ = ["Engine", "Call"]

_SIMPY_KEYS = 1 << 62
_BSIM_DIR = os.path.dirname(os.path.abspath(__file__))


class Call:
    """A scheduled function call: ``fn(*args)`` at a time, e.g. a message arrival."""

    __slots__ = ("fn", "args")

    def __init__(self, fn: Callable[..., None], args: tuple[Any, ...]) -> None:
        self.fn = fn
        self.args = args


class Engine(simpy.Environment):
    """One simulation: the event queue, the virtual ranks and the models they use.

    ``Engine(nranks, program)`` where ``program(rank)`` is run once per
    virtual rank in its own greenlet.  Call :meth:`run_program` to run to
    completion.  It raises :class:`DeadlockError` when every unfinished rank
    is blocked and nothing is scheduled, and re-raises an exception from a
    rank (a :class:`BsimError` as is, anything else wrapped in
    :class:`RankError` with the rank number) after tearing the others down.
    """

    def __init__(self, nranks: int, network: Any = None, protocol: Any = None) -> None:
        super().__init__(initial_time=0.0)
        if nranks < 1:
            raise ValueError(f"need at least 1 rank, got {nranks}")
        self.nranks = nranks
        self.network = network
        self.protocol = protocol
        self.ranks = [VirtualRank(r, self) for r in range(nranks)]
        self.main: greenlet.greenlet = greenlet.getcurrent()
        self.events = 0
        self.host_seconds = 0.0
        self._simpy_eid = count(_SIMPY_KEYS)
        # (time, priority, key, item): items are ranks, Calls or SimPy events
        self._queue: list[tuple[float, int, int, Any]] = []  # type: ignore[assignment]
        self.colls: dict[Any, Any] = {}   # (collective context, sequence) -> CollInstance
        self.collective_costs: Any = None  # bsim.collectives.CollectiveCosts
        self.world_group = tuple(range(nranks))
        # instrumentation (bsim.hooks): all off by default
        self.tracer: Any = None
        self.noise: Any = None
        self.progress: Callable[[Engine], None] | None = None
        self.measure: Any = None
        self.hooked = False        # tracer or noise set: add_time takes the slow path
        self.comms: dict[Any, Any] = {}   # derived communicators by creation key

    # -- SimPy compatibility -------------------------------------------------
    def schedule(self, event: simpy.Event, priority: int = 1, delay: float = 0) -> None:
        """Schedule a SimPy *event* (SimPy's own signature; keys above all ranks')."""
        heappush(self._queue, (self._now + delay, priority, next(self._simpy_eid), event))

    def step(self) -> None:
        """Not available: rank wake-ups must run inside :meth:`run_program`'s loop.

        SimPy's ``run``/``step`` would pop rank wake-ups outside the greenlet
        scheduler; bsim models written as SimPy processes are driven by
        :meth:`run_program` instead.
        """
        raise RuntimeError("Engine.step() is not supported: run simulations with "
                           "bsim.simulate() (Engine.run_program drives the queue)")

    # -- scheduling helpers ------------------------------------------------
    def call_at(self, t: float, owner: VirtualRank, fn: Callable[..., None], *args: Any) -> None:
        """Run ``fn(*args)`` at simulated time *t* as a network event owned by *owner*."""
        owner.seq += 1
        heappush(self._queue, (t, PRIO_NET, owner.keybase | owner.seq, Call(fn, args)))

    # -- running -----------------------------------------------------------
    def run_program(self, program: Callable[[VirtualRank], Any]) -> None:
        """Run *program* on every rank until all finish (or raise)."""
        self.main = greenlet.getcurrent()
        for vr in self.ranks:
            g = RankGreenlet(self._rank_main(program, vr), self.main)
            g.vrank = vr
            vr.greenlet = g
            vr.wake(0.0)
        unfinished = self.nranks
        queue = self._queue
        rank_cls = VirtualRank
        call_cls = Call
        self.hooked = self.tracer is not None or self.noise is not None
        progress = self.progress
        # The run allocates many short-lived tuples and requests while thousands of
        # long-lived greenlets and frames exist: freezing what exists and raising the
        # young-generation threshold cuts collector work (~30% faster halo exchange).
        thresholds = gc.get_threshold()
        gc.freeze()
        gc.set_threshold(max(thresholds[0], 50_000), max(thresholds[1], 20), thresholds[2])
        start = _time.perf_counter()
        base = self.events
        events = 0
        try:
            while queue:
                now, _, key, item = heappop(queue)   # item: VirtualRank, Call or a SimPy event
                self._now = now
                cls = item.__class__
                if cls is rank_cls:
                    if key != item.wake_key:   # superseded wake-up
                        continue
                    item.wake_key = -1
                    item.wake_at = float("inf")
                    events += 1
                    if progress is not None and not events & (PROGRESS_EVERY - 1):
                        self.events = base + events
                        self.host_seconds = _time.perf_counter() - start
                        progress(self)
                    try:
                        item.greenlet.switch()
                    except BaseException as exc:
                        self._abort(item, exc)
                    if item.finished:
                        unfinished -= 1
                elif cls is call_cls:
                    events += 1
                    try:
                        item.fn(*item.args)
                    except BaseException as exc:
                        self._abort(None, exc)
                else:
                    events += 1
                    self._simpy_event(item)
        finally:
            self.events = base + events
            self.host_seconds = _time.perf_counter() - start
            gc.set_threshold(*thresholds)
            gc.unfreeze()
        if unfinished:
            self._deadlock()

    def _rank_main(self, program: Callable[[VirtualRank], Any],
                   vr: VirtualRank) -> Callable[[], None]:
        def run() -> None:
            if self.measure is not None:
                vr.host_mark = self.measure.clock()
            vr.retval = program(vr)
            if self.measure is not None:
                from .rank import current
                current()   # charge the compute after the last MPI call
            vr.finished = True
        return run

    def _simpy_event(self, event: Any) -> None:
        callbacks, event.callbacks = event.callbacks, None
        for callback in callbacks:
            callback(event)
        if not event._ok and not hasattr(event, "_defused"):
            exc = type(event._value)(*event._value.args)
            exc.__cause__ = event._value
            raise exc

    # -- failure -------------------------------------------------------------
    def _teardown(self) -> None:
        """Kill every unfinished rank's greenlet (runs their ``finally`` blocks)."""
        for vr in self.ranks:
            g = vr.greenlet
            if g is not None and not g.dead:
                try:
                    g.throw(greenlet.GreenletExit)
                except BaseException:   # a rank's cleanup failing must not mask the cause
                    pass
        self._queue.clear()

    def _abort(self, vr: VirtualRank | None, exc: BaseException) -> None:
        self._teardown()
        if isinstance(exc, (BsimError, KeyboardInterrupt, SystemExit, EmptySchedule)):
            raise exc
        if vr is None:
            raise exc
        where = _user_location_of_traceback(exc)
        raise RankError(f"rank {vr.rank} raised {type(exc).__name__}: {exc}{where}",
                        vr.rank) from exc

    def _deadlock(self) -> None:
        blocked = []
        for vr in self.ranks:
            if not vr.finished:
                call = vr.pending or "?"
                if vr.waitset:
                    waiting = [r.describe() for r in vr.waitset if r._avail is None]
                    if len(vr.waitset) == 1 and vr.waitset[0]._call == call:
                        call = waiting[0] if waiting else call
                    else:
                        call += " on " + ", ".join(waiting)
                blocked.append((vr.rank, call, _user_location(vr.greenlet)))
        lines = [f"  rank {r}: {call} at {where}" for r, call, where in blocked[:32]]
        if len(blocked) > 32:
            lines.append(f"  ... and {len(blocked) - 32} more")
        self._teardown()
        raise DeadlockError(
            f"deadlock at t={self._now!r}: {len(blocked)} of {self.nranks} ranks blocked "
            f"with no pending event\n" + "\n".join(lines), blocked)


def _is_internal(filename: str) -> bool:
    return os.path.dirname(os.path.abspath(filename)) == _BSIM_DIR


def _user_location(g: greenlet.greenlet | None) -> str:
    """``file:line`` of the innermost frame of *g* that is not bsim's own code."""
    frame = g.gr_frame if g is not None else None
    while frame is not None and _is_internal(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return "?"
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def _user_location_of_traceback(exc: BaseException) -> str:
    tb = exc.__traceback__
    where = ""
    while tb is not None:
        if not _is_internal(tb.tb_frame.f_code.co_filename):
            where = f" (at {tb.tb_frame.f_code.co_filename}:{tb.tb_lineno})"
        tb = tb.tb_next
    return where
