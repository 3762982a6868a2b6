# cython: annotation_typing=False
"""Virtual ranks: one greenlet, one simulated clock and a calc/wait/comm account each.

A rank's ``clock`` is its own simulated time.  It may run *ahead* of the
engine's ``now``: ``add_time`` and fully determined waits only move the clock
(no event), and the rank synchronises with the engine (sleeps until
``now == clock``) only before an action whose outcome depends on what other
ranks did up to that instant: a wildcard receive, a probe, a test.  Whenever a
rank runs, ``clock >= now - lookahead`` (it may trail ``now`` when what it
waited for became visible only after the lookahead).

Accounting (``docs/protocols.md``): every advance of the clock is charged to
exactly one of ``calc`` (``add_time``), ``wait`` (blocked because a partner had
not yet called its matching operation) or ``comm`` (the modeled cost of the
operation), so ``finish == calc + wait + comm``.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from heapq import heappush
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import greenlet
from greenlet import getcurrent

from ..errors import AddTimeError, MPIUsageError, NotInSimulationError
from .events import PRIO_RANK, WaitMode, Wakeups
from .rank_program import RankGreenlet, charge_host_compute
from .request_state import RankState, RequestState
from .settle_in_turn import settle_in_turn, trace_handled, trace_idle

try:   # C types of the hot path's locals when compiled (rank.pxd, bsim/engine/compiled.py)
    import cython
except ImportError:
    from . import pure_cython as cython

if TYPE_CHECKING:
    from .core import Engine
    from .surface import Request

__all__ = ["VirtualRank", "RankGreenlet", "WaitMode", "current", "current_or_none", "add_time"]


if not cython.compiled:   # compiled, greenlet's C API in their place (rank.pxd)
    green_current = getcurrent
    green_switch = greenlet.greenlet.switch   # green_switch(g) is g.switch()
    vrank_of = attrgetter("vrank")   # (as Python, the call sites read g.vrank themselves)
    thread_state = threading.get_ident   # (compiled, PyThreadState_Get: rank.pxd)

# Compiled, the rank the engine has switched into (Engine.run_until) and the host thread
# that switched: an MPI call of that rank finds it here without asking greenlet, which
# costs about 120 instructions a call (thread-local reads and type checks).  As Python
# not kept (greenlet.getcurrent() is a builtin there, cheaper than keeping it).
_running: VirtualRank | None = None
_running_thread = 0

# hot path: plain ints (an Enum attribute lookup costs ~6x a global's; compiled, C longs)
_NONE, _ALL, _ANY = int(WaitMode.NONE), int(WaitMode.ALL), int(WaitMode.ANY)
WAIT_NONE, WAIT_ALL = _NONE, _ALL   # for bsim.engine.schedule_driver



class VirtualRank(RankState):
    """State of one virtual rank.  Kept small: thousands of these live at once."""

    __slots__ = (
        "rank", "engine", "greenlet", "keybase", "seq", "wake_key", "clock",
        "calc", "wait", "comm", "ops", "msgs", "nbytes", "finished",
        "pending", "box", "nic_free", "last_arrival", "waitset", "wait_mode",
        "unknown", "wake_at", "coll_seq", "polled", "finalized", "resume",
        "world", "thread_level",
    )

    def __init__(self, rank: int, engine: Engine) -> None:
        self.rank = rank
        self.engine = engine
        self.greenlet: RankGreenlet | None = None
        self.keybase = rank << 32
        self.seq = 0
        self.wake_key = -1
        self.clock = self.calc = self.wait = self.comm = 0.0
        self.ops = self.msgs = self.nbytes = 0
        self.finished = False
        self.pending: str | None = None   # the blocking call, for deadlock reports
        self.box: Any = None              # Mailbox, created on first use
        self.nic_free = 0.0               # loggp: when this rank's NIC is free again
        self.last_arrival: dict[int, float] | None = None  # loggp: per-destination FIFO
        self.waitset: list[Request] | Request | None = None   # settle_one: a request
        self.wait_mode = _NONE
        self.unknown = 0
        self.wake_at = math.inf
        self.coll_seq: dict[Any, int] | None = None   # per collective context
        self.polled = False               # asleep after a poll that found nothing
        self.finalized = False            # called MPI.Finalize: no MPI call after it
        self.open_requests = 0            # nonblocking requests handed out, not completed
        # what the engine calls instead of switching into the rank at its next wake-up
        # (bsim/engine/schedule_driver.py: the rounds of an expanded collective)
        self.resume: Callable[[], None] | None = None
        # its MPI.COMM_WORLD when not the run's: a spawned rank's (bsim/engine/spawning.py)
        self.world: Any = None
        self.thread_level = -1   # its Init_thread's, -1 before (mpi/common/initialization)

    # -- scheduling primitives ----------------------------------------------
    def next_key(self) -> int:
        """A fresh tie-break key owned by this rank: ``(rank << 32) | sequence``."""
        self.seq += 1
        return self.keybase | self.seq

    def wake(self, t: float) -> None:
        """Schedule this (suspended) rank to resume at simulated time *t*.

        The wake-up joins the :class:`~bsim.engine.events.Wakeups` of time *t*
        (``bsim.engine.events``: the order is that of one queue entry per wake-up).
        """
        self.seq += 1
        key = self.keybase | self.seq
        self.wake_key = key
        self.wake_at = t
        eng = self.engine
        batch = eng.wakeups.get(t)
        if batch is None:
            batch = eng.wakeups[t] = Wakeups()
            heappush(eng.queue, (t, PRIO_RANK, -1, batch))
        if cython.compiled:   # list's own append in C (a subclass's is a Python-level call)
            cython.cast(list, batch).append((key, self))
        else:
            batch.append((key, self))

    def suspend(self, call: str) -> None:
        """Give control to the engine until someone calls :meth:`wake`."""
        if green_current() is not self.greenlet:   # (running_rank)
            refuse_other_greenlet(self, call)
        self.pending = call
        green_switch(self.engine.main)
        self.pending = None
        if self.engine.measure is not None:
            self.engine.measure.mark(self)

    def sleep_until(self, t: float, call: str = "") -> None:
        """Resume at simulated time *t* (>= now); the clock is not charged here."""
        if green_current() is not self.greenlet:   # (running_rank)
            refuse_other_greenlet(self, call)
        self.wake(t)   # and suspend(), inlined
        self.pending = call
        green_switch(self.engine.main)
        self.pending = None
        if self.engine.measure is not None:
            self.engine.measure.mark(self)

    def sync(self, call: str = "", polling: bool = False) -> None:
        """Bring the engine up to this rank's clock (sleep until ``now == clock``).

        *polling*: for a test or probe, whose wake-up belongs to a poll loop: the livelock
        check counts it as a poll, not as the rank acting, so that a loop that computes
        between fruitless polls (``while not comm.Iprobe(): add_time(dt)``) is found as a
        loop of polls alone is (``docs/errors.md``, ``LivelockError``).
        """
        if self.clock > self.engine._now:
            if polling:
                self.polled = True
            self.sleep_until(self.clock, call)

    # -- waiting on requests --------------------------------------------------
    def on_resolve(self, req: Request) -> None:
        """A request this rank is blocked on now knows when it completes."""
        mode = self.wait_mode
        if mode == _ALL:
            self.unknown -= 1
            if self.unknown == 0:
                self.wake(max(self.engine._now, self.clock))
        elif mode == _ANY:
            avail = req.avail
            if avail is None:   # not resolved yet (cannot happen: it calls on_resolve)
                return
            # a bsim receive resolves when its message becomes visible, after avail
            t = max(self.clock, avail, self.engine._now)
            if t < self.wake_at:
                self.wake(t)

    def settle(self, reqs: list[Request], call: str) -> None:
        """Block until every request in *reqs* completes; charge wait and comm.

        Timing rule (docs/protocols.md): requests are handled one at a time in
        order of availability ``avail`` (ties by list position), each as a
        blocking operation starting when the previous one ended: ``t =
        max(t, avail) + cost``.  The idle part ``max(0, avail - t)`` is wait
        up to the partner's call time ``partner`` and comm after it; ``cost``
        is comm.  Under ``loggp`` ``cost`` is the receive overhead, so
        transfers overlap each other and preceding ``add_time``; under ``bsim``
        ``cost`` is the whole message cost (the BSIM paper's receive rule).
        """
        if self.engine.defers:
            settle_in_turn(self, reqs, call)
            return
        unknown = 0
        for r in reqs:
            if r.avail is None:
                r.waited = True
                unknown += 1
        if unknown:
            _await(self, reqs, unknown, call)
            for r in reqs:
                r.waited = False
        self.charge(reqs, call)

    def settle_one(self, req: Request, call: str) -> None:
        """:meth:`settle` of one request, *req*, as a blocking call has (``Recv``,
        ``Wait``, a blocking collective): no list is made before the wait, and while the
        rank waits its ``waitset`` is *req* itself (80 bytes less on every idle rank:
        ``docs/benchmarks.md``, memory per idle rank)."""
        if self.engine.defers:
            settle_in_turn(self, [req], call)
            return
        if req.avail is None:
            req.waited = True
            _await(self, req, 1, call)
            req.waited = False
        self.charge([req], call)

    def charge(self, reqs: list[Request], call: str) -> None:
        """Charge the resolved requests *reqs* by :meth:`settle`'s timing rule.

        A method of its own, called after the wait: compiled, its C frame, the largest of
        the blocking path's, is not on the stack of a suspended rank, which the rank keeps
        while it waits (``docs/benchmarks.md``, memory per idle rank).
        """
        if len(reqs) > 1:
            if cython.compiled:
                reqs = _by_avail(reqs)
            else:   # (as Python, sorted() is the faster)
                try:
                    reqs = sorted(reqs, key=_AVAIL)   # a C-level key
                except TypeError:   # an unresolved request (avail None): it goes last
                    reqs = sorted(reqs, key=_avail_of)
        t = self.clock
        wait = comm = 0.0
        tracer = self.engine.tracer
        for r in reqs:
            avail = r.avail
            if avail is None:   # every request is resolved here
                continue
            av = avail   # (a C double when compiled: rank.pxd)
            if av > t:
                idle = av - t
                w = r.partner - t
                if w > idle:
                    w = idle
                if w > 0.0:
                    wait += w
                    comm += idle - w
                else:
                    comm += idle
                if tracer is not None:
                    trace_idle(tracer, self.rank, call, t, max(w, 0.0), av)
                t = av
            cost = r.cost
            t += cost
            comm += cost
            if tracer is not None:
                trace_handled(tracer, self.rank, call, t, cost, r.flow)
        self.wait += wait
        self.comm += comm
        self.clock = t

    def settle_any(self, reqs: list[Request], call: str) -> int:
        """Block until one of *reqs* can complete; handle it; return its index.

        The rank synchronises first (the choice depends on time).  Of the
        requests already complete at the call (``avail <= clock``) it takes the
        first in list order, as MPICH's and Open MPI's ``MPI_Waitany`` scan the
        array (and as ``Testany`` does); when none is, the one with the smallest
        ``avail`` (ties by list position) once the engine reaches it.  Then it
        pays the request's cost as in :meth:`settle`.
        """
        self.sync(call)
        clock = self.clock
        while True:
            best = -1
            best_avail = math.inf
            for i, r in enumerate(reqs):
                a = r.avail
                if a is not None and a < best_avail:
                    best, best_avail = i, a
                    if a <= clock:   # complete at the call: the first such in list order
                        break
            when = max(self.clock, best_avail)
            if best >= 0 and when <= self.engine._now:
                break
            for r in reqs:
                r.waited = True
            self.waitset = reqs
            self.wait_mode = _ANY
            self.wake_at = math.inf
            if best >= 0:
                self.wake(when)
            self.suspend(call)
            self.wait_mode = _NONE
            self.waitset = None
            for r in reqs:
                r.waited = False
        self.settle([reqs[best]], call)
        return best

    def charge_wait_until(self, t: float) -> None:
        """Blocked from the clock until *t* waiting for a partner: all of it is wait."""
        if t > self.clock:
            self.wait += t - self.clock
            self.clock = t

    def __repr__(self) -> str:
        state = "finished" if self.finished else (self.pending or "running")
        return f"<VirtualRank {self.rank} t={self.clock:.9g} {state}>"


def _await(vr: VirtualRank, waitset: Any, unknown: int, call: str) -> None:
    """Suspend *vr* in blocking call *call* until its *unknown* unresolved requests of
    *waitset* (a list, or one request) are resolved (:meth:`VirtualRank.on_resolve`
    wakes it).  ``suspend``, inlined when compiled (``rank.pxd``): no C frame of its own
    on the stack a suspended rank keeps (``docs/benchmarks.md``, memory per idle rank)."""
    if green_current() is not vr.greenlet:   # (running_rank)
        refuse_other_greenlet(vr, call)
    vr.waitset = waitset
    vr.wait_mode = _ALL
    vr.unknown = unknown
    vr.pending = call
    green_switch(vr.engine.main)
    vr.pending = None
    if vr.engine.measure is not None:
        vr.engine.measure.mark(vr)
    vr.wait_mode = _NONE
    vr.waitset = None


def _avail_of(r: Request) -> float:
    avail = r.avail
    return avail if avail is not None else math.inf


def _by_avail(reqs: list[Request]) -> list[Request]:
    """*reqs* in order of ``avail``, ties in list order, unresolved (None) last: ``sorted(reqs,
    key=_avail_of)``; compiled, an insertion sort on C doubles for a call's few requests.
    Compiled only, called by :meth:`VirtualRank.charge`, whose callers type-tested the
    requests: read here without a test."""
    n = len(reqs)
    if n > 32:
        return sorted(reqs, key=_avail_of)
    ordered = True
    prev = -_INF
    for x in reqs:
        r = cython.cast(RequestState, x)
        if r.avail is None:
            return sorted(reqs, key=_avail_of)
        a = r.avail
        if a < prev:
            ordered = False
        prev = a
    if ordered:   # already in order (the list itself: the callers only read it)
        return reqs
    out = list(reqs)
    for i in range(1, n):
        r = cython.cast(RequestState, out[i])
        a = r.avail
        j = i - 1
        while j >= 0:
            q = cython.cast(RequestState, out[j])
            b = q.avail
            if b <= a:   # stable: an equal avail stays after the earlier request
                break
            out[j + 1] = q
            j -= 1
        out[j + 1] = r
    return out


_INF = math.inf   # (globals, not module attributes: the compiled hot path reads them)
_AVAIL = attrgetter("avail")


def enter_rank(vr: VirtualRank | None) -> None:
    """Compiled, the engine switches into *vr*'s greenlet now (None: it is back)."""
    global _running, _running_thread
    _running = vr
    _running_thread = thread_state()


def running_rank() -> VirtualRank | None:
    """The rank a caller whose greenlet is not a rank's runs for, or None.

    Compiled, the rank the engine switched into, when the caller runs in the host thread
    that switched (every call asks this first).  As Python (asked when the greenlet is not
    a rank's), the rank whose greenlet the caller's descends from: a greenlet's parent is
    the one that made it, unless the program sets another.  So a greenlet of the
    program's own, made and switched to in a rank, makes its MPI calls as that rank either
    way.  It cannot wait in one: the engine resumes the rank's greenlet, not it, so
    before a rank waits its greenlet is checked (:func:`refuse_other_greenlet`)."""
    if cython.compiled:
        return _running if _running_thread == thread_state() else None
    g = green_current().parent
    while g is not None and g.__class__ is not RankGreenlet:
        g = g.parent
    return None if g is None else g.vrank


def refuse_other_greenlet(vr: VirtualRank, call: str) -> None:
    """Raise :class:`MPIUsageError`: a greenlet not *vr*'s is about to wait in *call* as
    *vr* (see :func:`running_rank`)."""
    raise MPIUsageError(
        f"rank {vr.rank}: {call}: waits in a greenlet that is not the rank's own (the "
        f"engine resumes the rank's greenlet: a greenlet of the program's may make only "
        f"MPI calls that do not wait)")


def current_or_none() -> VirtualRank | None:
    """The virtual rank running the caller, or None outside a simulation."""
    g = green_current()
    return g.vrank if type(g) is RankGreenlet else None


def current() -> VirtualRank:
    """The virtual rank running the caller.  Raises outside a simulation."""
    vr = running_rank() if cython.compiled else None
    if vr is None:
        g = green_current()
        if type(g) is RankGreenlet:
            vr = vrank_of(g) if cython.compiled else g.vrank
        else:   # as Python, a greenlet of the program's own in a rank is taken for it here
            vr = running_rank()
            if vr is None:
                raise NotInSimulationError(
                    "this MPI call was made outside a simulated rank: run the program "
                    "with bsim.simulate(main, ranks=N) or `bsim run`")
    if vr.finalized:
        raise MPIUsageError(f"rank {vr.rank}: MPI call after MPI.Finalize()")
    if vr.engine.measure is not None:
        charge_host_compute(vr)
    return vr


def add_time(seconds: float) -> None:
    """Charge *seconds* of calculation to the calling rank (BSIM_Add_time, the BSIM paper).

    Outside a simulation (the same skeleton under real ``mpiexec``) the
    behaviour is set by ``bsim.realmode`` (default: do nothing).
    """
    r = running_rank() if cython.compiled else None
    if r is None:
        g = green_current()
        if type(g) is RankGreenlet:
            r = vrank_of(g) if cython.compiled else g.vrank
        else:
            r = running_rank()   # (as in current())
            if r is None:
                from .. import realmode
                realmode.add_time(seconds)
                return
    # inlined check: the fast path is a finite float >= 0
    try:
        ok = seconds >= 0.0 and seconds != _INF and type(seconds) is not bool
    except TypeError:
        ok = False
    if not ok:
        raise AddTimeError(f"rank {r.rank}: add_time({seconds!r}): duration must be a finite "
                           f"number of seconds >= 0")
    eng = r.engine
    if eng.hooked:
        _add_time_hooked(r, eng, seconds)
        return
    r.clock += seconds
    r.calc += seconds
    r.ops += 1


def _add_time_hooked(r: VirtualRank, eng: Any, seconds: float) -> None:
    """add_time with OS noise and/or tracing on.  The noise's stretch beyond the modelled
    *seconds*, ``stretch - seconds``, is added to ``eng.calc_excess[rank]`` (calc that is
    not modelled compute, which the peak check takes out, ``bsim/machines/peak.py``)."""
    start = r.clock
    if eng.noise is not None:
        stretched = eng.noise.stretch(r.rank, start, seconds)
        if stretched != seconds:
            excess = eng.calc_excess
            excess[r.rank] = excess.get(r.rank, 0.0) + (stretched - seconds)
        seconds = stretched
    r.clock = start + seconds
    r.calc += seconds
    r.ops += 1
    if eng.tracer is not None and seconds > 0.0:
        eng.tracer.span(r.rank, "calc", "add_time", start, r.clock)
