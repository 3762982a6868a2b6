"""Python threads of a virtual rank: each one its own execution context and clock.

A program may start ``threading.Thread``s in a rank and make MPI calls from them
(mpi4py asks for ``MPI_THREAD_MULTIPLE``).  Every rank runs in a greenlet of the one
host thread, so a real OS thread could not make a simulated call.  While the engine
runs (:class:`ThreadSupport`, armed by ``Engine.start``), a thread started *by a rank*
runs instead as a **thread context**: a greenlet with its own
:class:`~bsim.engine.rank.VirtualRank` record -- its own simulated clock, starting at
the starter's clock, its own pending requests and wake-ups -- that acts as the rank in
every MPI call (the same world rank, communicators, mailbox and collective sequence),
scheduled by the engine like any rank.  So a communication thread overlaps the main
thread's computation, as it would on a core of its own; greenlets never preempt, so
the interleaving is deterministic and MPI calls are serialized (``THREAD_MULTIPLE``'s
semantics with one call at a time).

The host-level synchronisation a thread needs is cooperative while the engine runs:
``threading.Lock`` (and everything ``threading`` builds on it: ``RLock``,
``Condition``, ``Event``, ``Semaphore``, ``Barrier``, ``queue.Queue``, ``Thread.join``;
``queue.SimpleQueue`` is the standard library's pure-Python one, on a ``Semaphore``, so
``concurrent.futures.ThreadPoolExecutor``'s workers wait cooperatively)
created during the run is a :class:`CooperativeLock`: a context that would block waits
in simulated time (a ``wait`` account, like an MPI wait) until the holder releases it,
at the holder's clock; a timeout is in simulated seconds.  ``threading.get_ident`` and
``current_thread`` tell the contexts apart.  When a rank's main program returns, the
rank waits for its non-daemon threads, as the interpreter does at exit, and leaves its
daemon threads, after calling what it registered with ``threading._register_atexit``.
``threading.local`` made during the run (:class:`ContextLocal`) has one namespace per
rank and per thread context.  ``time.sleep`` in a context spends simulated time (the
wait account) and lets the contexts behind it in time run, so a polling loop does not
starve the others.

Accounts: a thread's operations, messages and bytes count for its rank; its
calculation, wait and communication time do not (they overlap the main thread's; the
rank's finish time includes a thread only if the main thread waits for it).  Not
simulated: threads over several host processes (``hosts=``).  Locks made before the
run are the host's.
"""

from __future__ import annotations

import _thread
import queue
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import count
from typing import TYPE_CHECKING, Any

import greenlet

from ..errors import MPIUsageError
from .matching import mailbox, stop_early_matching
from .rank import RankGreenlet, VirtualRank

if TYPE_CHECKING:
    from .core import Engine

__all__ = ["ThreadSupport", "CooperativeLock", "ContextLocal", "cooperative_objects"]

_HOST_SLEEP = time.sleep
_TEARDOWN = False      # the run is ending its thread contexts: no more waiting
THREAD_KEYS = 1 << 61   # event keys of thread contexts start here (below SimPy's 1 << 62)
_IDENT_BASE = 1 << 48   # threading.get_ident() of thread contexts
SPIN_ACQUIRES = 10      # locks taken in a row at one clock before a context counts as polling


def _context() -> VirtualRank | None:
    g = greenlet.getcurrent()
    return g.vrank if g.__class__ is RankGreenlet else None


def _wait(vr: VirtualRank, waiters: list[list[Any]], deadline: float | None,
          call: str) -> bool:
    """Suspend *vr* until :func:`_notify` picks it (True) or its clock reaches
    *deadline* (False); the time asleep is charged as wait."""
    if deadline is not None and deadline <= vr.clock:
        return False
    token: list[Any] = [vr, False]
    waiters.append(token)
    if deadline is not None:
        vr.wake(deadline)
    vr.suspend(call)
    now = vr.engine.now
    if now > vr.clock:
        vr.wait += now - vr.clock
        vr.clock = now
    if not token[1]:
        waiters.remove(token)
        return False
    return True


def _notify(waiters: list[list[Any]]) -> None:
    """Wake the first waiter still running at the releasing context's clock (or the
    engine's now)."""
    while waiters:
        token = waiters.pop(0)
        waiter: VirtualRank = token[0]
        if waiter.finished:   # an abandoned daemon thread
            continue
        token[1] = True
        me = _context()
        t = me.clock if me is not None else waiter.engine.now
        waiter.wake(max(t, waiter.clock, waiter.engine.now))
        return


def _sleep(seconds: float) -> None:
    """``time.sleep`` while the engine runs: in a rank or thread context, *seconds* of
    simulated time idle (the wait account: a sleep is mostly a polling loop's back-off),
    then a turn for the contexts behind it in time (a polling loop lets the others run)."""
    vr = _context()
    if vr is None:
        _HOST_SLEEP(seconds)
        return
    seconds = float(seconds)
    if not seconds >= 0:
        raise ValueError("sleep length must be non-negative")
    vr.clock += seconds
    vr.wait += seconds
    vr.sync("time.sleep")


_BOOTSTRAP = ("<frozen importlib._bootstrap>", "<frozen importlib._bootstrap_external>")


def _importing() -> bool:
    """Whether the calling context is executing an ``import`` (a frame of
    ``importlib._bootstrap`` on its stack): the module is half made and the
    interpreter's module lock is held, so no other context may run meanwhile."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename in _BOOTSTRAP:
            return True
        frame = frame.f_back
    return False


def _may_yield(vr: VirtualRank) -> bool:
    """Whether a lock operation of *vr* first lets the contexts behind it in time act.

    A lock belongs to one process, so only the other thread contexts of the same rank
    can contend for it: a rank without live threads never yields in a lock (another
    rank must not run while this one holds a lock the interpreter takes internally:
    an import's, ``logging``'s, a cache's).  Nor does a context that is importing."""
    if _TEARDOWN:
        return False
    support = vr.engine.thread_support
    if not support.threads or not support.company(vr):
        return False
    return not _importing()


def _spinning_is_set(is_set: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """``Event.is_set`` during a run: an unset event asked from a context whose rank has
    threads counts as a spin (it takes no lock: ``while not event.is_set(): pass``)."""
    def spinning_is_set(event: Any) -> bool:
        flag = is_set(event)
        if not flag:
            vr = _context()
            if vr is not None and _may_yield(vr):
                vr.engine.thread_support.count_spin(vr)
        return flag
    return spinning_is_set


class CooperativeLock:
    """``threading.Lock`` while the engine runs: a host lock whose contended
    ``acquire`` from a rank or thread context waits in simulated time.

    A free lock is taken at once; when the rank has other thread contexts (and is
    not importing), the contexts behind this one in simulated time act first, so
    that the lock goes to the earliest."""

    __slots__ = ("_real", "_waiters", "__weakref__")

    def __init__(self) -> None:
        self._real = _thread.allocate_lock()
        self._waiters: list[list[Any]] = []

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        vr = _context()
        if vr is not None and _may_yield(vr):
            vr.sync("Lock.acquire")   # the contexts behind this one in time act first
            vr.engine.thread_support.count_spin(vr)
        if self._real.acquire(False):
            return True
        if not blocking:
            return False
        if vr is None:   # outside the simulation: the host's lock
            return self._real.acquire(True, timeout)
        deadline = None if timeout is None or timeout < 0 else vr.clock + timeout
        while True:
            if not _wait(vr, self._waiters, deadline, "Lock.acquire"):
                return False
            if self._real.acquire(False):
                return True

    def release(self) -> None:
        vr = _context()
        if vr is not None and _may_yield(vr):
            vr.sync("Lock.release")   # held until this context's clock
        self._real.release()
        if self._waiters:
            _notify(self._waiters)

    def locked(self) -> bool:
        return self._real.locked()

    def _at_fork_reinit(self) -> None:
        self._real = _thread.allocate_lock()
        self._waiters = []

    __enter__ = acquire

    def __exit__(self, *exc: Any) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"<bsim cooperative lock {'locked' if self.locked() else 'unlocked'}>"


_LOCALS: weakref.WeakKeyDictionary[Any, tuple[dict[Any, dict[str, Any]], tuple[Any, ...],
                                              dict[str, Any]]] = weakref.WeakKeyDictionary()


def _own_dict(local: Any) -> None:
    """Install the calling context's namespace of *local* (made, and ``__init__`` run
    with the constructor's arguments, on its first use there)."""
    dicts, args, kwargs = _LOCALS[local]
    g = greenlet.getcurrent()
    namespace = dicts.get(g)
    if namespace is not None:
        object.__setattr__(local, "__dict__", namespace)
        return
    namespace = dicts[g] = {}
    object.__setattr__(local, "__dict__", namespace)
    init = type(local).__init__
    if init is not object.__init__:
        init(local, *args, **kwargs)


class ContextLocal:
    """``threading.local`` while the engine runs: one namespace per rank and per thread
    context (a host thread is one greenlet of them), as separate processes and threads
    have; subclasses' ``__init__`` runs in each, as with ``threading.local``."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if (args or kwargs) and cls.__init__ is object.__init__:
            raise TypeError("Initialization arguments are not supported")
        self = object.__new__(cls)
        namespace: dict[str, Any] = {}
        _LOCALS[self] = ({greenlet.getcurrent(): namespace}, args, kwargs)
        object.__setattr__(self, "__dict__", namespace)
        return self

    def __getattribute__(self, name: str) -> Any:
        _own_dict(self)
        return object.__getattribute__(self, name)

    def __setattr__(self, name: str, value: Any) -> None:
        _own_dict(self)
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        _own_dict(self)
        object.__delattr__(self, name)


_OBJECTS = {"_allocate_lock": CooperativeLock, "Lock": CooperativeLock, "_CRLock": None,
            "local": ContextLocal}


@contextmanager
def cooperative_objects() -> Iterator[None]:
    """``threading``'s lock and local types as a run has them, meanwhile: for modules a
    run imports before it starts (``simulate``'s rebinding of ``mpi4py.futures``)."""
    saved = {name: getattr(threading, name) for name in _OBJECTS}
    for name, value in _OBJECTS.items():
        setattr(threading, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(threading, name, value)


class ThreadSupport:
    """The ``threading`` internals swapped while an engine runs (:meth:`arm` /
    :meth:`disarm`) and the thread contexts of the run."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.saved: dict[str, Any] = {}
        self.idents: dict[greenlet.greenlet, int] = {}     # context greenlet -> ident
        self.sentinels: dict[greenlet.greenlet, CooperativeLock] = {}
        self.threads: dict[VirtualRank, Any] = {}          # context -> its Thread (or None)
        self.atexits: dict[int, list[tuple[Callable[..., Any], tuple[Any, ...],
                                           dict[str, Any]]]] = {}
        self.saved_sleep: Callable[..., None] | None = None
        self.saved_queue: type | None = None
        self.saved_pool_lock: Any = None   # concurrent.futures.thread's, made before the run
        self.saved_pool_shutdown = False   # ... and its _shutdown flag then
        self.saved_is_set: Callable[[Any], bool] | None = None
        self.spins: dict[VirtualRank, list[Any]] = {}     # context -> [clock, acquires]
        self.live: dict[int, int] = {}                     # rank -> its running threads
        self._next = count()

    def arm(self) -> None:
        if self.saved:
            return
        real_ident = _thread.get_ident
        idents = self.idents

        def get_ident() -> int:
            ident = idents.get(greenlet.getcurrent())
            return real_ident() if ident is None else ident

        def set_sentinel() -> CooperativeLock:
            lock = CooperativeLock()   # Thread._set_tstate_lock acquires it
            self.sentinels[greenlet.getcurrent()] = lock
            return lock

        def register_atexit(function: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
            vr = _context()
            if vr is None:
                self.saved["_register_atexit"](function, *args, **kwargs)
            else:   # the rank's interpreter exit (rank_exit) calls it
                self.atexits.setdefault(vr.rank, []).append((function, args, kwargs))

        swaps = {"_start_new_thread": self.start_new_thread, "get_ident": get_ident,
                 "_set_sentinel": set_sentinel, "_register_atexit": register_atexit, **_OBJECTS}
        for name, value in swaps.items():
            self.saved[name] = getattr(threading, name, None)
            setattr(threading, name, value)
        self.saved_sleep = time.sleep
        setattr(time, "sleep", _sleep)   # noqa: B010 - time.sleep's stub type is narrower
        # queue.SimpleQueue is C and blocks the host thread in get(): the standard
        # library's pure-Python one waits on a threading.Semaphore (cooperative here);
        # concurrent.futures.ThreadPoolExecutor's workers wait on one
        self.saved_is_set = threading.Event.is_set
        setattr(threading.Event, "is_set", _spinning_is_set(self.saved_is_set))   # noqa: B010
        self.saved_queue = queue.SimpleQueue
        setattr(queue, "SimpleQueue", queue._PySimpleQueue)   # noqa: B010
        # a module-level lock made before the run is the host's: ThreadPoolExecutor.submit
        # holds concurrent.futures.thread's while it starts a worker (a switch), so another
        # rank's submit would block the host thread; the run's own is cooperative
        pool = sys.modules.get("concurrent.futures.thread")
        self.saved_pool_shutdown = bool(getattr(pool, "_shutdown", False))
        if pool is not None and not isinstance(pool._global_shutdown_lock, CooperativeLock):
            self.saved_pool_lock = pool._global_shutdown_lock
            pool._global_shutdown_lock = CooperativeLock()

    def disarm(self) -> None:
        for name, value in self.saved.items():
            setattr(threading, name, value)
        self.saved.clear()
        if self.saved_sleep is not None:
            setattr(time, "sleep", self.saved_sleep)   # noqa: B010
            self.saved_sleep = None
        if self.saved_is_set is not None:
            setattr(threading.Event, "is_set", self.saved_is_set)   # noqa: B010
            self.saved_is_set = None
        if self.saved_queue is not None:
            setattr(queue, "SimpleQueue", self.saved_queue)   # noqa: B010
            self.saved_queue = None
        pool = sys.modules.get("concurrent.futures.thread")
        if pool is not None:
            # the ranks' interpreter exits set its _shutdown: the host's goes on
            pool._shutdown = self.saved_pool_shutdown
            if self.saved_pool_lock is not None:
                pool._global_shutdown_lock = self.saved_pool_lock
        self.saved_pool_lock = None

    def count_spin(self, vr: VirtualRank) -> None:
        """A lock taken by *vr* at the clock of its previous ones: after
        :data:`SPIN_ACQUIRES` in a row the context is spinning (``while not
        future.done(): pass``, whose ``done`` takes the future's lock), so it polls as
        ``while not req.Test()`` does: ``poll_time`` of wait, and the other contexts run
        (the engine's livelock check names a spin that nothing can end)."""
        spin = self.spins.get(vr)
        if spin is None or spin[0] != vr.clock:
            self.spins[vr] = [vr.clock, 1]
            return
        spin[1] += 1
        if spin[1] >= SPIN_ACQUIRES:
            del self.spins[vr]
            self.engine.protocol.poll(vr, "Lock.acquire (spinning)")

    def company(self, vr: VirtualRank) -> bool:
        """Whether *vr* is a thread context or its rank has a live thread context."""
        if vr in self.threads:
            return True
        return self.live.get(vr.rank, 0) > 0

    def start_new_thread(self, function: Callable[..., Any], args: tuple[Any, ...],
                         kwargs: dict[str, Any] | None = None) -> int:
        """``_thread.start_new_thread`` as ``Thread.start`` calls it: a thread context
        when a rank calls it, a host thread otherwise."""
        parent = _context()
        if parent is None:
            ident: int = self.saved["_start_new_thread"](function, args, kwargs or {})
            return ident
        engine = self.engine
        if engine.host_of is not None:
            raise MPIUsageError(f"rank {parent.rank}: threading.Thread.start: Python threads "
                                f"of a rank are not simulated over several host processes")
        root = engine.ranks[parent.rank]
        if engine.early_match:   # a rank's threads send in their own key order
            stop_early_matching(engine)
        if root.coll_seq is None:
            root.coll_seq = {}
        ctx = VirtualRank(parent.rank, engine)
        k = next(self._next)
        ctx.keybase = THREAD_KEYS | (k << 32)
        ctx.box, ctx.coll_seq, ctx.world = mailbox(root), root.coll_seq, parent.world
        ctx.clock = parent.clock
        g = RankGreenlet(ctx, lambda vr: self._run(vr, function, args, kwargs), engine.main)
        self.idents[g] = _IDENT_BASE + k
        self.threads[ctx] = getattr(function, "__self__", None)   # Thread._bootstrap's
        engine.unfinished += 1
        self.live[parent.rank] = self.live.get(parent.rank, 0) + 1
        ctx.wake(parent.clock)
        return _IDENT_BASE + k

    def _run(self, ctx: VirtualRank, function: Callable[..., Any], args: tuple[Any, ...],
             kwargs: dict[str, Any] | None) -> None:
        try:
            function(*args, **(kwargs or {}))
        finally:
            root = self.engine.ranks[ctx.rank]
            root.ops += ctx.ops
            root.msgs += ctx.msgs
            root.nbytes += ctx.nbytes
            root.open_requests += ctx.open_requests
            ctx.ops = ctx.msgs = ctx.nbytes = ctx.open_requests = 0
            self.live[ctx.rank] -= 1
            sentinel = self.sentinels.pop(greenlet.getcurrent(), None)
            if sentinel is not None and sentinel.locked():
                sentinel.release()   # Thread.join / is_alive see the end

    def rank_exit(self, vr: VirtualRank) -> None:
        """A rank's main program returned: wait for its non-daemon threads (as the
        interpreter does at exit), leave its daemon threads."""
        if vr in self.threads:
            return
        for function, args, kwargs in reversed(self.atexits.pop(vr.rank, [])):
            function(*args, **kwargs)   # threading._register_atexit's, as _shutdown calls
        for ctx, thread in list(self.threads.items()):
            if ctx.rank != vr.rank or ctx.finished or thread is None:
                continue
            if not thread.daemon:
                thread.join()
        for ctx in self.threads:
            if ctx.rank == vr.rank and not ctx.finished:
                ctx.finished = True          # abandoned daemon: no longer awaited
                ctx.wake_key = -1
                self.engine.unfinished -= 1

    def teardown(self) -> None:
        """Kill the greenlets of unfinished contexts (end of the run), quietly."""
        hook = threading.excepthook

        def excepthook(args: Any) -> None:
            if args.exc_type is not greenlet.GreenletExit:   # the kill itself is no news
                hook(args)

        threading.excepthook = excepthook
        global _TEARDOWN
        _TEARDOWN = True
        try:
            for ctx in self.threads:
                g = ctx.greenlet
                if g is not None and not g.dead:
                    try:
                        g.throw(greenlet.GreenletExit)
                    except BaseException:   # noqa: S110 - a thread's cleanup must not mask the cause
                        pass
        finally:
            threading.excepthook = hook
            _TEARDOWN = False
        self.atexits.clear()
        shutdown: set[Any] = getattr(threading, "_shutdown_locks", set())
        for lock in self.sentinels.values():
            shutdown.discard(lock)   # the interpreter's exit would wait for them
        self.threads.clear()
        self.live.clear()
        self.spins.clear()
        self.idents.clear()
        self.sentinels.clear()
