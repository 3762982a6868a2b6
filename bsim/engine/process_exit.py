"""What a rank does to the host process: ``os._exit``, ``os.fork``, a thread that dies.

``os._exit(n)`` ends the calling OS process at once, without ``finally`` blocks, ``atexit``
handlers or ``MPI_Finalize``.  In a real MPI job that is one process gone without
finalizing, which the launcher reports as a failed job (MPICH's ``mpiexec`` and Open MPI's
``mpirun`` both end the job with an error).  Under bsim every virtual rank shares one host
process, so the same call would end the whole simulation with no message and no result.

While a run is going, :class:`ExitGuard` puts a function in ``os._exit``'s place that,
called from a rank (or one of its threads), raises :class:`~bsim.errors.RankError` naming
the rank, the exit code and the user's ``file:line``, whatever the code (0 included: the
process would still not have finalized).  Called from anything else (the host's own code, a
host thread, a child process ``multiprocessing`` forked for a rank, as it ends its children) it
is the real ``os._exit``.  ``sys.exit`` is a different matter: it raises
``SystemExit`` in the rank, which ends the rank (code 0) or is a ``RankError``
(:meth:`bsim.engine.core.Engine.run_rank`); where a rank ended with ``sys.exit(0)`` is
kept, for a deadlock report of the ranks still waiting for it.  ``os.fork`` from a rank
(:meth:`ExitGuard._arm_fork`) and an exception that ends a rank's Python thread
(:meth:`ExitGuard._arm_threads`) are errors too.

``atexit.register`` called from a rank's own code keeps the handler for that rank's
interpreter exit (a registration made by the standard library or an installed package,
such as ``logging``'s when it is first imported inside a rank, is the host process's and
goes to the real ``atexit``): :meth:`ExitGuard.run_atexits` calls its handlers, last
registered first, when its program has returned (after its threads, as Python's exit
runs ``threading``'s shutdown first), in the rank, where they may still make MPI calls
(mpi4py's own finalization handler is registered before them, so it runs after them).
An exception in one is printed as Python prints it ("Exception ignored in atexit
callback") and the others still run.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any

import greenlet

from ..errors import BsimError, RankError
from .failures import called_from, in_library, user_location_of_traceback
from .rank import current_or_none

__all__ = ["ExitGuard", "MAX_EXITS"]

MAX_EXITS = 1024   # ranks whose sys.exit(0) a deadlock report can name


class ExitGuard:
    """Swaps ``os._exit`` and ``os.fork`` for the rank-aware ones during a run (``arm`` /
    ``disarm``), and keeps where ranks ended early with ``sys.exit(0)`` (``left``), which
    a deadlock report says (a rank that others still wait for)."""

    __slots__ = ("saved", "forks", "exits", "hook", "atexits", "saved_atexit")

    def __init__(self) -> None:
        self.saved: Callable[[int], Any] | None = None
        self.forks: dict[str, Callable[[], Any]] = {}
        self.exits: dict[int, str] = {}   # rank -> "sys.exit(0) at file:line (t=...)"
        self.hook: Callable[[Any], Any] | None = None   # threading.excepthook before
        self.atexits: dict[int, list[tuple[Callable[..., Any], tuple[Any, ...],
                                           dict[str, Any]]]] = {}
        self.saved_atexit: tuple[Callable[..., Any], Callable[..., Any]] | None = None

    def left(self, vr: Any, exc: SystemExit) -> None:
        """Rank *vr* ended with ``sys.exit(0)`` (or ``sys.exit()``): note where (the
        first :data:`MAX_EXITS` ranks: a program whose every rank ends so keeps no more)."""
        if len(self.exits) >= MAX_EXITS:
            return
        where = user_location_of_traceback(exc).strip() or "(at an unknown line)"
        code = "" if exc.code is None else repr(exc.code)
        self.exits[vr.rank] = f"sys.exit({code}) {where} (t={vr.clock!r})"

    def exit_error(self, vr: Any, exc: SystemExit) -> RankError:
        """The error of rank *vr* ending with ``sys.exit(code)``, a code other than 0."""
        return RankError(f"rank {vr.rank} called sys.exit({exc.code!r})"
                         f"{user_location_of_traceback(exc)}", vr.rank)

    def arm(self) -> None:
        self._arm_fork()
        self._arm_threads()
        self._arm_atexit()
        if self.saved is not None or getattr(os._exit, "__wrapped__", None) is not None:
            return   # armed already (by this run, or by a run that encloses it)
        real = self.saved = os._exit
        pid = os.getpid()

        def rank_exit(code: int) -> Any:
            vr = current_or_none()
            if vr is None or os.getpid() != pid:   # not a rank, or a child a rank forked
                return real(code)
            where = called_from()[1]
            raise RankError(f"rank {vr.rank} called os._exit({code!r}) (at {where}): it ends "
                            f"the process without MPI_Finalize, which a real MPI job reports "
                            f"as a failure; end the rank with return or sys.exit()", vr.rank)

        setattr(rank_exit, "__wrapped__", real)   # noqa: B010 - marks the guard as armed
        setattr(os, "_exit", rank_exit)   # noqa: B010 - os._exit's stub type is NoReturn

    def _arm_fork(self) -> None:
        """``os.fork``/``os.forkpty`` called by a rank: a :class:`RankError`.  The child
        would be a copy of the whole simulation (every rank, the engine) that runs the
        rest of the run again; a real MPI process forks only itself.  ``subprocess`` (fork
        and exec in one call) and ``multiprocessing`` (whose forked child runs only its
        target, then ``os._exit``) still work."""
        for name in ("fork", "forkpty"):
            real = getattr(os, name, None)
            if real is None or getattr(real, "__wrapped__", None) is not None:
                continue

            def rank_fork(real: Callable[[], Any] = real, name: str = name) -> Any:
                vr = current_or_none()
                caller = str(sys._getframe(1).f_globals.get("__name__", ""))
                if vr is None or caller.startswith("multiprocessing."):
                    return real()   # (multiprocessing's child runs its target and exits)
                where = called_from()[1]
                raise RankError(f"rank {vr.rank} called os.{name}() (at {where}): under bsim "
                                f"every rank shares one host process, so the child would be "
                                f"a copy of the whole simulation; start processes with "
                                f"subprocess or multiprocessing instead",
                                vr.rank)
            setattr(rank_fork, "__wrapped__", real)   # noqa: B010
            self.forks[name] = real
            setattr(os, name, rank_fork)

    def _arm_threads(self) -> None:
        """An exception that ends a rank's Python thread fails the run: a
        :class:`RankError` naming the rank, the thread and the user's line, raised by the
        engine at the current simulated time (Python would print it and go on, and the
        run would end with status 0 and a result missing that thread's work)."""
        if self.hook is not None or getattr(threading.excepthook, "__wrapped__", None):
            return
        saved = self.hook = threading.excepthook

        def rank_thread_failed(args: Any) -> Any:
            vr = current_or_none()
            if vr is None or args.exc_value is None or issubclass(
                    args.exc_type, (greenlet.GreenletExit, SystemExit)):
                return saved(args)
            name = args.thread.name if args.thread is not None else "?"
            where = user_location_of_traceback(args.exc_value)
            error = RankError(f"rank {vr.rank}: thread {name!r} raised "
                              f"{args.exc_type.__name__}: {args.exc_value}{where}", vr.rank)
            error.__cause__ = args.exc_value
            engine = vr.engine
            engine.call_at(engine._now, vr, _raise, error)
            return None

        setattr(rank_thread_failed, "__wrapped__", saved)   # noqa: B010
        threading.excepthook = rank_thread_failed

    def _arm_atexit(self) -> None:
        if self.saved_atexit is not None or getattr(atexit.register, "__wrapped__", None):
            return   # armed already (by this run, or by a run that encloses it)
        real_register, real_unregister = self.saved_atexit = (atexit.register,
                                                              atexit.unregister)

        def register(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
            vr = current_or_none()
            if vr is None or in_library(sys._getframe(1).f_code.co_filename):
                return real_register(function, *args, **kwargs)
            self.atexits.setdefault(vr.rank, []).append((function, args, kwargs))
            return function

        def unregister(function: Callable[..., Any]) -> None:
            vr = current_or_none()
            if vr is None or in_library(sys._getframe(1).f_code.co_filename):
                return real_unregister(function)
            kept = self.atexits.get(vr.rank, [])
            kept[:] = [h for h in kept if h[0] != function]
            return None

        setattr(register, "__wrapped__", real_register)   # noqa: B010
        atexit.register, atexit.unregister = register, unregister

    def run_atexits(self, vr: Any) -> None:
        """The handlers rank *vr* registered with ``atexit.register``, last first."""
        for function, args, kwargs in reversed(self.atexits.pop(vr.rank, [])):
            try:
                function(*args, **kwargs)
            except Exception as exc:   # noqa: BLE001 - Python prints it and goes on
                if isinstance(exc, BsimError):
                    raise
                print(f"Exception ignored in atexit callback {function!r}:", file=sys.stderr)
                traceback.print_exception(exc, file=sys.stderr)

    def disarm(self) -> None:
        if self.saved_atexit is not None:
            atexit.register, atexit.unregister = self.saved_atexit
            self.saved_atexit = None
        self.atexits.clear()
        if self.hook is not None:
            threading.excepthook = self.hook
            self.hook = None
        for name, real in self.forks.items():
            setattr(os, name, real)
        self.forks.clear()
        if self.saved is not None:
            setattr(os, "_exit", self.saved)   # noqa: B010
            self.saved = None


def _raise(error: BaseException) -> None:
    raise error
