"""A rank blocked in the host operating system: reported instead of hanging forever.

Every virtual rank runs on the one OS thread of its host process (greenlets), so a
rank that waits for another rank *outside* MPI -- a read from a pipe the other rank
would write, a lock, a subprocess that waits for a peer -- blocks the whole
simulation: the rank it waits for can never run (sockets are the exception: their
blocking calls poll, ``host_sockets.py``).  No event is pending
that the engine could see, so its deadlock check cannot fire either.

:class:`HostBlockWatchdog` is armed while the engine runs (``Engine.start`` to
``Engine.finish``): a real-time interval timer (``SIGALRM``) checks every few seconds
whether the process used CPU time.  A rank greenlet that holds the thread while the
process stays idle (less than 1% of one core) for ``BSIM_HOST_BLOCK_TIMEOUT`` seconds
(default 60; ``0`` disables) gets :class:`~bsim.errors.HostBlockedError` raised in it
by the signal handler -- a blocking system call is interrupted and returns with the
exception (PEP 475) -- so the run ends with one line naming the rank, the host call and
the user's ``file:line``.  A rank computing on the host (``--compute measure``, a long
numpy call) uses CPU and is never stopped.

The watchdog is off where Python cannot deliver the signal to the simulation: outside
the main thread, on platforms without ``setitimer``, or when the program already has
its own ``SIGALRM`` handler.
"""

from __future__ import annotations

import os
import signal
import sysconfig
import threading
import time
from types import FrameType
from typing import Any

import greenlet

from ..errors import HostBlockedError

__all__ = ["HostBlockWatchdog", "host_block_timeout", "HOST_BLOCK_TIMEOUT"]

HOST_BLOCK_TIMEOUT = 60.0   # seconds of an idle process inside one rank before it is stopped
IDLE_CPU_SHARE = 0.01       # "idle": less CPU time than this share of the wall time
_BSIM_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_STDLIB_DIR = os.path.abspath(sysconfig.get_paths()["stdlib"]) + os.sep


def host_block_timeout() -> float:
    """Seconds from ``BSIM_HOST_BLOCK_TIMEOUT`` (default 60; 0 or less: no watchdog)."""
    text = os.environ.get("BSIM_HOST_BLOCK_TIMEOUT", "")
    try:
        return float(text) if text else HOST_BLOCK_TIMEOUT
    except ValueError:
        return HOST_BLOCK_TIMEOUT


def _where(frame: FrameType | None) -> tuple[str, str]:
    """``(host call, user file:line)``: "the host call F()" when the innermost frame is
    the standard library's function F ("a host call" when it is the user's own: the call
    is C code), and the innermost frame that is neither bsim's nor the standard library's."""
    call = "a host call"
    if frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
            (_BSIM_DIR, _STDLIB_DIR)):
        call = f"the host call {frame.f_code.co_name}()"
    while frame is not None:
        name = os.path.abspath(frame.f_code.co_filename)
        if not (name.startswith(_BSIM_DIR) or name.startswith(_STDLIB_DIR)):
            return call, f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return call, "?"


class HostBlockWatchdog:
    """``SIGALRM`` every ``tick`` seconds while armed; see the module docstring."""

    def __init__(self, limit: float | None = None) -> None:
        self.limit = host_block_timeout() if limit is None else limit
        self.tick = min(5.0, max(self.limit / 4.0, 0.05))
        self.armed = False
        self._saved: Any = None
        self._wall = 0.0
        self._cpu = 0.0
        self._idle = 0.0

    def arm(self) -> None:
        """Start the timer (does nothing where the module docstring says it is off)."""
        if (self.armed or self.limit <= 0 or not hasattr(signal, "setitimer")
                or threading.current_thread() is not threading.main_thread()
                or signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, None)):
            return
        self._saved = signal.signal(signal.SIGALRM, self._check)
        self._wall, self._cpu, self._idle = time.monotonic(), time.process_time(), 0.0
        signal.setitimer(signal.ITIMER_REAL, self.tick, self.tick)
        self.armed = True

    def disarm(self) -> None:
        """Stop the timer and restore the previous handler."""
        if not self.armed:
            return
        signal.setitimer(signal.ITIMER_REAL, 0.0, 0.0)
        signal.signal(signal.SIGALRM, self._saved)
        self.armed = False

    def _check(self, signum: int, frame: FrameType | None) -> None:
        wall, cpu = time.monotonic(), time.process_time()
        busy = cpu - self._cpu >= IDLE_CPU_SHARE * (wall - self._wall)
        self._idle = 0.0 if busy else self._idle + (wall - self._wall)
        self._wall, self._cpu = wall, cpu
        vr = getattr(greenlet.getcurrent(), "vrank", None)
        if vr is None or self._idle < self.limit:
            return
        self._idle = 0.0
        call, where = _where(frame)
        raise HostBlockedError(
            f"rank {vr.rank}: blocked in {call} for {self.limit:g} s with the "
            f"process idle (at {where}): all virtual ranks share one OS thread, so a rank "
            f"waiting for another through a socket, pipe, lock or subprocess never returns; "
            f"use MPI calls between ranks (BSIM_HOST_BLOCK_TIMEOUT sets the limit, 0 turns "
            f"this check off)", vr.rank)
