# cython: annotation_typing=False
"""The discrete-event engine: a SimPy ``Environment`` whose processes are greenlets.

Each virtual rank runs the user's plain blocking code in a greenlet.  A blocking
MPI call schedules a wake-up (or waits for someone to schedule one) and
switches to the engine's greenlet, which pops the next event and switches back
into the rank it wakes.

Event order (the determinism contract, ``docs/architecture.md``): the queue is
ordered by ``(time, priority, key)``.  Priority 0 is network events (message
arrivals), priority 1 rank wake-ups, so a rank acting at time t sees every
message that arrived at t.  ``key`` is ``(owner world rank << 32) | owner's
sequence number``: the rank that caused the event and how many events it had
caused before.  Neither depends on host timing, insertion order or how ranks
are partitioned over host processes.  Plain SimPy events scheduled through
:meth:`Engine.schedule` (for models written as SimPy processes) get keys above
every rank's and keep SimPy's insertion order among themselves.

Every effect of one rank on another is an event at least ``lookahead`` after
the moment that causes it (``docs/protocols.md``, "Visibility").  Hence
:meth:`Engine.run_until` can process a window of events and
:mod:`bsim.engine.distributed` can run the ranks over several host processes, each
engine owning its ``local_ranks`` and shipping events for the others
(:meth:`Engine.post`), with results identical to one process.
"""

from __future__ import annotations

import gc
import math
import sys
import time as _time
from collections.abc import Callable
from heapq import heappop, heappush
from itertools import count
from typing import TYPE_CHECKING, Any

import greenlet
import simpy
from simpy.core import EmptySchedule

from ..errors import BsimError, LookaheadError, MPIUsageError, RankError
from .engine_state import EngineState
from .event_marks import EventMarks
from .events import PRIO_NET, PRIO_RANK, SIMPY_KEYS, Call, Deliveries, NetEvent, Wakeups
from .events import fire_simpy_event as run_simpy_event
from .failures import FailureReports, program_interrupt, user_location_of_traceback
from .host_memory import create_ranks, start_ranks
from .host_sockets import CooperativeSockets
from .host_watchdog import HostBlockWatchdog
from .matching import Message, by_key, deliver, early_matching, order_by_key, order_wakeups
from .private_modules import PrivateModules
from .process_exit import ExitGuard
from .rank import RankGreenlet, VirtualRank, enter_rank
from .rank_generators import RankGenerators
from .rank_threads import ThreadSupport

if TYPE_CHECKING:
    from .collective_rules import CollectiveCosts
    from .fabric import ContentionLayer

try:   # C types of the hot path's locals when compiled (bsim/engine/compiled.py, TYPED)
    import cython
except ImportError:   # (Cython is needed to build only)
    from . import pure_cython as cython

if not cython.compiled:   # compiled, greenlet's C API in its place (rank.pxd)
    green_switch = greenlet.greenlet.switch   # green_switch(g) is g.switch()

    def prefetch_deliveries(batch: list, i: int, n: int, ranks: list) -> None:
        """Compiled, cache hints for the next deliveries (core.pxd); as Python not called."""

    deliver_in_c = deliver   # compiled, matching.deliver called in C (core.pxd)

_DELIVER = deliver   # what the loop calls in C unless the module's ``deliver`` was replaced

__all__ = ["Engine", "LIVELOCK_POLLS"]

GC_YOUNG_MIN = 50_000          # young-generation collector threshold during a run, at least
GC_ALLOCS_PER_RANK = 64        # ... and this many net allocations per local rank
GC_YOUNG_MAX = 32_000_000      # ... up to this (bounds the garbage cycles a run can hold)
LIVELOCK_POLLS = 100_000   # consecutive fruitless polls before the livelock check scans the queue



def _ahead(head: tuple[Any, ...], prio: int, key: int) -> bool:
    """Whether the queue's first entry *head*, of the current time, comes before the entry
    ``(now, prio, key)`` of a batch's next item (keys are unique: no further field).
    Compiled, C integers compared; as Python the loop compares the tuples."""
    p = head[1]
    return p < prio or (p == prio and head[2] < key)


class Engine(EngineState, EventMarks, FailureReports, simpy.Environment):
    """One simulation: the event queue, the virtual ranks and the models they use.

    ``Engine(nranks, network, protocol)``; :meth:`run_program` runs
    ``program(rank)`` once per virtual rank in its own greenlet, to completion.
    It raises :class:`DeadlockError` when every unfinished rank is blocked and
    nothing is scheduled, :class:`LivelockError` when they only poll,
    :class:`SimulationLimitError` past ``max_sim_time``/``max_events``, and
    re-raises an exception from a rank (a :class:`BsimError` as is, anything
    else wrapped in :class:`RankError` with the rank number) after tearing the
    others down.

    Fields shared inside bsim (read by the protocols, matching, collective
    rules, the fabric and the MPI surface): ``ranks`` (every
    :class:`VirtualRank`), ``network``, ``protocol``, ``collective_costs``,
    ``fabric``, ``queue`` (the event heap: add to it only through :meth:`push`,
    :meth:`deliver_at`, :meth:`call_at` or :meth:`post`), ``lookahead``, ``comms`` (derived
    communicators by creation key), ``colls`` (collective instances),
    ``tracer``/``noise``/``progress``/``measure`` (hooks), ``host_of``,
    ``outbox`` and ``handles`` (distributed runs).  SimPy's clock field
    ``_now`` is read and written directly on the hot paths of this package
    (a reliance on SimPy internals listed in ``docs/simpy.md``); elsewhere
    read ``now``.
    """

    def __init__(self, nranks: int, network: Any = None, protocol: Any = None) -> None:
        super().__init__(initial_time=0.0)
        if nranks < 1:
            raise ValueError(f"need at least 1 rank, got {nranks}")
        self.nranks = nranks
        self.network = network
        self.protocol = protocol
        self.ranks = create_ranks(VirtualRank, self, nranks)   # (host_memory: counted)
        self.program: Callable[[VirtualRank], Any] | None = None   # set by start()
        self.own_programs: dict[VirtualRank, Callable[[VirtualRank], Any]] = {}
        self.returns: dict[VirtualRank, Any] = {}   # what a program returned, when not None
        self.main: greenlet.greenlet = greenlet.getcurrent()
        self.events = 0
        self.host_seconds = 0.0
        self._simpy_eid = count(SIMPY_KEYS)
        # the event heap of (time, priority, key, item) (bsim.engine.events); SimPy's own
        # _queue stays empty: SimPy events scheduled through schedule() land here too
        self.queue: list[tuple[float, int, int, Any]] = []
        self.deliveries: dict[float, Deliveries] = {}   # time -> its batch in the queue
        self.wakeups: dict[float, Wakeups] = {}         # the same for rank wake-ups
        self.last_batch, self.last_batch_time = None, 0.0   # the last send's (EngineState)
        self.colls: dict[Any, Any] = {}   # (collective context, sequence) -> CollInstance
        self.formula_collectives = 0       # calls priced by a formula (counted at member 0)
        self.collective_costs: CollectiveCosts   # set by simulate()
        self.request_class: Callable[..., Any]   # the surface's Request (surface.py): simulate()
        self.fabric: ContentionLayer | None = None   # contention 'fluid' (bsim.engine.fabric)
        # the ranks' own int objects, not a second set (32 bytes a rank above 256)
        self.world_group = tuple([vr.rank for vr in self.ranks])
        # instrumentation (bsim.engine.hooks): all off by default
        self.tracer: Any = None
        self.noise: Any = None
        self.progress: Callable[[Engine], None] | None = None
        self.measure: Any = None
        self.hooked = False        # tracer or noise set: add_time takes the slow path
        self.early_match = False   # blocking receives take messages in flight (start)
        self.calc_excess: dict[int, float] = {}   # rank -> calc beyond add_time's (peak.py)
        # per-rank copies of the program's own modules (bsim.engine.private_modules);
        # None: every module shared (simulate(private_modules=False))
        self.private_modules: PrivateModules | None = PrivateModules()
        self.comms: dict[Any, Any] = {}   # derived communicators by creation key
        self.watchdog = HostBlockWatchdog()   # a rank blocked in the host OS (socket, ...)
        self.sockets = CooperativeSockets()   # ... except on a socket: it polls
        self.exit_guard = ExitGuard()         # os._exit in a rank: an error, not silence
        self.generators = RankGenerators()    # random's, numpy.random's: one per rank
        self.thread_support = ThreadSupport(self)   # Python threads of ranks (rank_threads.py)
        self.user_state: dict[str, Any] = {}   # objects shared by the ranks (simpy_bridge.shared)
        self.filesystem: Any = None   # MPI-IO cost model (netmodels.filesystem): simulate()
        # visibility lag of messages and collective completions (docs/distributed.md):
        # the protocol's lookahead over this network, set by simulate()
        self.lookahead = 0.0
        # receives move their bytes when handled (bsim protocol + contention): the
        # ranks settle requests in turn (settle_in_turn.py); set by bind()
        self.defers = False
        # distributed runs (bsim.engine.distributed): which host process runs which rank
        self.host = 0
        self.host_of: list[int] | None = None     # None: every rank runs here
        self.local_ranks = self.ranks
        self.outbox: list[list[Any]] = []   # per host: events shipped at the window's end
        self.window_ends: list[float] = []   # per host: where its current window ends
        self.shipped = 0
        self.handles: dict[int, Any] = {}   # requests named by key in shipped events
        self.comm_hosts: dict[Any, tuple[int, ...]] = {}   # collective context -> hosts
        self.unreceived: dict[int, int] | None = None   # every host's, once gathered
        self.unfinished = 0
        self._gc_saved = gc.get_threshold()
        # limits of a run (simulate(max_sim_time=, max_events=)): a clear error, not a hang
        self.max_sim_time = math.inf
        self.max_events = 0                  # 0: no limit
        # livelock check: after this many consecutive poll wake-ups with nothing else
        # happening, scan the queue for anything that could still change an outcome
        self.livelock_polls = LIVELOCK_POLLS
        self.poll_streak = 0   # consecutive poll wake-ups so far (kept across windows)

    # -- SimPy compatibility -------------------------------------------------
    def schedule(self, event: simpy.Event, priority: int = 1, delay: float = 0) -> None:
        """Schedule a SimPy *event* (SimPy's own signature; keys above all ranks')."""
        self.push(self._now + delay, priority, next(self._simpy_eid), event)

    def step(self) -> None:
        """Not available: SimPy's ``run``/``step`` would pop rank wake-ups outside the
        greenlet scheduler; :meth:`run_program` drives models written as SimPy processes."""
        raise RuntimeError("Engine.step() is not supported: run simulations with "
                           "bsim.simulate() (Engine.run_program drives the queue)")

    # -- scheduling helpers ------------------------------------------------
    def push(self, t: float, priority: int, key: int, item: Any) -> None:
        """Put *item* on the queue at simulated time *t* (``bsim.engine.events``).

        The one way to add a queue entry besides :meth:`deliver_at`; hot paths inline
        them, each with a comment saying so (``VirtualRank.sleep_until``/``wake`` and
        the ``bsim`` protocol's send).
        """
        heappush(self.queue, (t, priority, key, item))

    def call_at(self, t: float, owner: VirtualRank, fn: Callable[..., None], *args: Any) -> None:
        """Run ``fn(*args)`` at simulated time *t* as a network event owned by *owner*.

        Only for events that touch state of *owner*'s host process; events for
        another rank go through :meth:`post`.
        """
        owner.seq += 1
        self.push(t, PRIO_NET, owner.keybase | owner.seq, Call(fn, args))

    def deliver_at(self, t: float, msg: Message) -> None:
        """Deliver *msg* at time *t*, in the order of its key among the deliveries of *t*.

        It joins the time's :class:`~bsim.engine.events.Deliveries` batch (one queue
        entry per time; ``bsim.engine.events``).  The ``bsim`` protocol's send inlines this.
        """
        batch = self.deliveries.get(t)
        if batch is None:
            batch = self.deliveries[t] = Deliveries()
            heappush(self.queue, (t, PRIO_NET, -1, batch))
        batch.append(msg)

    def post(self, t: float, key: int, item: Any, target: int) -> None:
        """Schedule network event *item* (a ``Message`` or a ``NetEvent``) for world rank
        *target* at time *t* with tie-break *key*.

        In a distributed run an event for a rank of another host process is
        shipped to it at the end of the window (:mod:`bsim.engine.distributed`); the
        lookahead guarantees ``t`` is not inside the current window.
        """
        host_of = self.host_of
        if host_of is None or host_of[target] == self.host:
            if type(item) is Message:
                self.deliver_at(t, item)
            else:
                self.push(t, PRIO_NET, key, item)
            return
        host = host_of[target]
        if t < self.window_ends[host]:
            raise LookaheadError(
                f"an event for rank {target} at t={t!r} falls inside the current window "
                f"of host process {host} (ends at {self.window_ends[host]!r}): the "
                f"lookahead {self.lookahead!r} s is not a "
                f"lower bound of every cross-host delay in this run (a collective faster "
                f"than the lookahead?)")
        self.outbox[host].append((t, key, item.to_wire(self)))
        self.shipped += 1

    def next_time(self) -> float:
        """Time of the earliest pending event (``inf`` when none)."""
        return self.queue[0][0] if self.queue else math.inf

    # -- running -----------------------------------------------------------
    def run_program(self, program: Callable[[VirtualRank], Any]) -> None:
        """Run *program* on every rank until all finish (or raise)."""
        self.start(program)
        try:
            self.run_until(self.max_sim_time)
            if self.unfinished and self.queue:
                self.limit_error(f"simulated time reached the limit "
                                 f"max_sim_time={self.max_sim_time!r} s")
            if self.unfinished:   # (reported before finish(): threads are still known)
                self._deadlock()
            if self.host_of is None:   # (distributed: on the gathered accounts, simulate.py)
                self.check_finish_limit()
        except KeyboardInterrupt as exc:   # Ctrl-C between events: say when, end the ranks
            if not hasattr(exc, "sim_time"):
                exc.sim_time = self._now   # type: ignore[attr-defined]
                self._teardown()
            raise
        finally:
            self.finish()

    def start(self, program: Callable[[VirtualRank], Any]) -> None:
        """Create the greenlets of the ranks this process runs; wake them at t = 0."""
        self.main = greenlet.getcurrent()
        # The run allocates many short-lived tuples and requests while thousands of
        # long-lived greenlets and frames exist: freezing what exists and raising the
        # young-generation threshold cuts collector work (~30% faster halo exchange at
        # 4,096 ranks).  What survives a young collection is the requests and messages in
        # flight, about proportional to the ranks, so the threshold grows with them
        # (GC_ALLOCS_PER_RANK, capped): at 65,536 ranks a fixed 50,000 spent 2.3 s of a
        # 19 s loop in young collections, 524,288 spends 0.3 s (docs/benchmarks.md).  The
        # halo holds ~12 requests and messages per rank in flight, MILC's CG about 30: a
        # threshold just under what a program holds collects again and again (16 a rank:
        # 34 collections, 1.2 s of MILC's 12 s loop at 4,096 ranks; 64 a rank: none).
        self._gc_saved = t = gc.get_threshold()
        young = min(max(t[0], GC_YOUNG_MIN, GC_ALLOCS_PER_RANK * len(self.local_ranks)),
                    GC_YOUNG_MAX)
        gc.set_threshold(young, max(t[1], 20), t[2])
        self.program = program   # what each rank's greenlet runs (rank_program.py)
        start_ranks(self.local_ranks, RankGreenlet, program, self.main)
        self.unfinished = len(self.local_ranks)
        self.hooked = self.tracer is not None or self.noise is not None
        self.early_match = early_matching(self)
        self.watchdog.arm()
        self.sockets.arm()
        self.thread_support.arm()
        self.exit_guard.arm()
        self.generators.arm()
        gc.freeze()

    def finish(self) -> None:
        """Undo :meth:`start`'s collector settings and watchdog; drop the private modules;
        run the callables the run registered in ``user_state["bsim.at_finish"]``."""
        self.watchdog.disarm()
        self.exit_guard.disarm()
        self.generators.disarm()
        self.sockets.disarm()
        self.thread_support.teardown()   # daemon threads left at their ranks' exit
        self.thread_support.disarm()
        gc.set_threshold(*self._gc_saved)
        gc.unfreeze()
        if self.private_modules is not None:
            self.private_modules.close()
        for done in self.user_state.pop("bsim.at_finish", ()):   # e.g. files left open
            done()

    @cython.locals(vr="VirtualRank", msg="Message", rkey="long long", events="long long",
                   mark="long long", idle="long long", livelock_polls=cython.double,
                   i=cython.Py_ssize_t, n=cython.Py_ssize_t, batch=list, head=tuple,
                   t0=cython.double, now=cython.double, key="long long", end=cython.double,
                   wakeups=dict, deliveries=dict, private="ModuleWatch", modules=dict,
                   direct=cython.bint)
    def run_until(self, end: float) -> None:
        """Process every event earlier than *end* (all of them for ``inf``)."""
        queue = self.queue
        ranks = self.ranks
        wake_cls = Wakeups
        wakeups = self.wakeups
        inf = math.inf
        msg_cls = Message
        call_cls = Call
        private = self.private_modules
        modules = sys.modules
        if private is not None:
            private.sync()   # once: what sys.modules holds at the start (the shim's) is shared
        # distributed runs check the limits and livelocks for all hosts at the exchange
        max_events = self.max_events if self.host_of is None else 0
        idle = self.poll_streak   # consecutive poll wake-ups with nothing else happening
        livelock_polls = self.livelock_polls if self.host_of is None else math.inf
        start = _time.perf_counter()
        base = self.events
        events = 0
        mark = self._next_mark(base, max_events)   # events (relative) of the next check
        deliveries = self.deliveries
        batch_cls = Deliveries
        direct = deliver is _DELIVER   # (the event queue's tests replace it, to watch)
        try:
            while queue:
                t0 = queue[0][0]   # (a C double when compiled)
                if not t0 < end:
                    break
                now, _, key, item = heappop(queue)   # a Wakeups, Message, Deliveries,
                self._now = now                        # Call, NetEvent or SimPy event
                cls = type(item)
                if cls is batch_cls:   # messages visible at `now`, in key order (events.py)
                    idle = 0
                    if key < 0:        # fresh from the send path: not yet sorted
                        if deliveries.get(now) is item:
                            del deliveries[now]
                            if self.last_batch is item:   # (EngineState)
                                self.last_batch = None
                        if len(item) > 1:   # (compiled, in C: matching.order_by_key)
                            if cython.compiled:
                                order_by_key(cython.cast(list, item))
                            else:
                                item.sort(key=by_key)
                    # (compiled, a list's C indexing: a subclass's item[i] is a Python call)
                    batch = cython.cast(list, item) if cython.compiled else item
                    i, n = 0, len(batch)
                    while i < n:
                        msg = batch[i]
                        if queue:   # the queue's first entry before (now, PRIO_NET, key)?
                            head = queue[0]   # (its time alone decides unless it is now:
                            t0 = head[0]      # no tuple made or compared per message)
                            if t0 < now or (t0 == now and (
                                    _ahead(head, PRIO_NET, msg.key) if cython.compiled
                                    else head < (now, PRIO_NET, msg.key))):
                                # an event ordered before this message: the rest waits
                                heappush(queue, (now, PRIO_NET, msg.key,
                                                 batch_cls(batch[i:]) if i else item))
                                break
                        events += 1
                        if events == mark:
                            start, mark = self._periodic(base, events, start, max_events)
                        if cython.compiled:   # the loads of the next deliveries (core.pxd)
                            prefetch_deliveries(batch, i, n, ranks)
                        try:
                            if direct:   # (compiled, a C call: no arguments' tuple)
                                deliver_in_c(ranks[msg.dst], msg, now)
                            else:
                                deliver(ranks[msg.dst], msg, now)
                        except BaseException as exc:
                            self._abort(None, exc)
                        i += 1
                    continue
                if cls is wake_cls:    # ranks resuming at `now`, in key order (events.py)
                    if key < 0:        # fresh from VirtualRank.wake: not yet sorted
                        if wakeups.get(now) is item:
                            del wakeups[now]
                        if len(item) > 1:   # (key, rank) pairs: the keys are unique
                            order_wakeups(cython.cast(list, item) if cython.compiled else item)
                    batch = cython.cast(list, item) if cython.compiled else item
                    i, n = 0, len(batch)
                    while i < n:
                        rkey, vr = batch[i]
                        if queue:   # as for the deliveries above
                            head = queue[0]
                            t0 = head[0]
                            if t0 < now or (t0 == now and (
                                    _ahead(head, PRIO_RANK, rkey) if cython.compiled
                                    else head < (now, PRIO_RANK, rkey))):
                                # an event ordered before this wake-up: the rest waits
                                heappush(queue, (now, PRIO_RANK, rkey,
                                                 wake_cls(batch[i:]) if i else item))
                                break
                        i += 1
                        if rkey != vr.wake_key:   # superseded wake-up
                            continue
                        vr.wake_key = -1
                        vr.wake_at = inf
                        if vr.polled:
                            vr.polled = False
                            idle += 1
                            if idle >= livelock_polls:
                                idle = 0
                                self._check_livelock(vr)
                        else:
                            idle = 0
                        events += 1
                        if events == mark:
                            start, mark = self._periodic(base, events, start, max_events)
                        if private is not None and private.swapping:
                            private.enter(vr.rank)
                        if cython.compiled:   # its MPI calls find it there (rank.py)
                            enter_rank(vr)
                        try:
                            resume = vr.resume
                            if resume is None:
                                green_switch(vr.greenlet)
                            else:   # a continuation (bsim/engine/schedule_driver.py)
                                vr.resume = None
                                resume()
                        except BaseException as exc:
                            self._abort(vr, exc)
                        finally:
                            if cython.compiled:
                                enter_rank(None)
                        if private is not None and (
                                len(modules) != private.count
                                or modules.get("__main__") is not private.main_now):
                            private.leave(vr.rank)   # the rank imported, or replaced __main__
                        if vr.finished:
                            self.unfinished -= 1
                    continue
                idle = 0
                events += 1
                if events == mark:
                    start, mark = self._periodic(base, events, start, max_events)
                try:
                    if cls is msg_cls:
                        deliver(ranks[item.dst], item, now)
                    elif cls is call_cls:
                        item.fn(*item.args)
                    elif isinstance(item, NetEvent):
                        item.run(self)
                    else:   # a SimPy event (bsim.engine.simpy_bridge)
                        run_simpy_event(item)
                except BaseException as exc:
                    self._abort(None, exc)
        finally:
            self.events = base + events
            self.host_seconds += _time.perf_counter() - start
            self.poll_streak = idle

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
        self.thread_support.teardown()
        self.queue.clear()
        self.deliveries.clear()
        self.last_batch = None
        self.wakeups.clear()

    def _abort(self, vr: VirtualRank | None, exc: BaseException) -> None:
        self._teardown()
        if isinstance(exc, KeyboardInterrupt):
            line = program_interrupt(exc, vr.rank) if vr is not None else None
            if line is not None and vr is not None:   # the program raised it: its error
                raise RankError(line, vr.rank) from exc
            exc.sim_time = self._now   # type: ignore[attr-defined]   # for the CLI's report
        if (vr is not None and isinstance(exc, MPIUsageError) and exc.args
                and isinstance(exc.args[0], str) and " (at " not in exc.args[0]):
            # a usage error of this rank's call: point at the user's line, as other errors do
            exc.args = (exc.args[0] + user_location_of_traceback(exc),) + exc.args[1:]
        if vr is None or isinstance(exc, (BsimError, KeyboardInterrupt, SystemExit,
                                          EmptySchedule, MemoryError)):
            raise exc   # (a MemoryError is the host's, not the rank's: simulate() says so)
        where = user_location_of_traceback(exc)
        raise RankError(f"rank {vr.rank} raised {type(exc).__name__}: {exc}{where}",
                        vr.rank) from exc
