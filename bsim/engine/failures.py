"""How a run that cannot go on says so: deadlock, livelock and limit reports.

:class:`FailureReports` is the part of :class:`~bsim.engine.core.Engine` that names
every unfinished rank -- its rank, the call it is blocked in and the user's
``file:line`` (the innermost frame outside bsim's own package) -- tears the run down
and raises :class:`~bsim.errors.DeadlockError`, :class:`~bsim.errors.LivelockError` or
:class:`~bsim.errors.SimulationLimitError` (``docs/errors.md``).
"""

from __future__ import annotations

import ast
import dis
import linecache
import os
import sys
import sysconfig
import types
from typing import TYPE_CHECKING, Any

import greenlet

from ..errors import DeadlockError, LivelockError, SimulationLimitError
from .compiled import COMPILED, compiled_modules
from .events import Wakeups
from .rank import VirtualRank

if TYPE_CHECKING:
    from .rank_threads import ThreadSupport

__all__ = ["FailureReports", "user_location_of_traceback", "program_interrupt"]

# bsim's own code: every module of the bsim package and of its network models, netmodels
# (not skeletons, not the user's files)
_BSIM_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_OWN_DIRS = (_BSIM_DIR, os.path.join(os.path.dirname(os.path.dirname(_BSIM_DIR)),
                                     "netmodels") + os.sep)
# how compiled modules name their source in tracebacks (the path setup.py gave Cython)
_COMPILED_PREFIXES = tuple(name.rpartition(".")[0].replace(".", "/") + "/"
                           for name in COMPILED)
_STDLIB_DIR = os.path.abspath(sysconfig.get_paths()["stdlib"]) + os.sep
# the standard library and installed packages: a call into them is reported where it was made
_LIBRARY_DIRS = tuple(sorted({_STDLIB_DIR} | {
    os.path.abspath(sysconfig.get_paths()[key]) + os.sep for key in ("purelib", "platlib")}))


def in_library(filename: str) -> bool:
    """Whether *filename* is in the standard library or an installed package."""
    return os.path.abspath(filename).startswith(_LIBRARY_DIRS)


class FailureReports:
    """Reports of a run that cannot go on (mixed into the engine)."""

    queue: list[tuple[float, int, int, Any]]
    ranks: list[VirtualRank]
    local_ranks: list[VirtualRank]
    nranks: int
    host_of: Any
    max_sim_time: float
    thread_support: ThreadSupport
    _now: float

    if TYPE_CHECKING:
        def _teardown(self) -> None: ...   # the engine's: kill every unfinished rank

    def blocked_ranks(self) -> list[tuple[int, str, str]]:
        """``(rank, call, where)`` of every unfinished rank run by this process."""
        blocked = []
        sends: dict[int, Any] | None = None
        for vr in [*self.local_ranks, *self.thread_support.threads]:
            if not vr.finished:
                call = vr.pending or "?"
                thread = self.thread_support.threads.get(vr, vr)
                if thread is not vr:   # a Python thread of the rank (rank_threads.py)
                    call = f"{call} in thread {getattr(thread, 'name', '?')}"
                if vr.polled:
                    call = f"polling {call}"
                waitset = vr.waitset
                if waitset is not None and not isinstance(waitset, list):
                    waitset = [waitset]   # VirtualRank.settle_one's one request
                if waitset:
                    if sends is None:
                        sends = self._unmatched_sends()
                    waiting = [_describe(r, sends) for r in waitset if r.avail is None]
                    if len(waitset) == 1 and waitset[0].call == call:
                        call = waiting[0] if waiting else call
                    elif waiting:
                        call += " on " + ", ".join(waiting)
                    else:   # every request known: the rank waits for the last to end
                        call += f" ({len(waitset)} requests, ending)"
                blocked.append((vr.rank, call, _user_location(vr.greenlet)))
        return blocked

    def _unmatched_sends(self) -> dict[int, Any]:
        """``id(send request) -> Message`` of the messages of this process that wait in a
        receiver's unexpected queue with their sender waiting on them (a synchronous send,
        a rendezvous): what a blocked send's line names (a send request keeps no
        destination of its own; looked up only when a run cannot go on)."""
        return {id(msg.sreq): msg for vr in self.local_ranks if vr.box is not None
                for msg in vr.box.unexpected or () if msg.sreq is not None}

    def _check_livelock(self, polling: VirtualRank) -> None:
        """Raise :class:`LivelockError` if every pending event is a poll's wake-up.

        Then nothing in flight (a message, a collective completion, a computing
        rank's next action) can change what the polls find.  *polling* is the
        rank just woken from its poll.
        """
        if not self.only_polling():
            return
        polling.polled = True          # still polling: report it as such
        self.livelock_error(self.blocked_ranks())

    def only_polling(self) -> bool:
        """True if every pending event is the wake-up of a rank asleep after a fruitless poll."""
        for _, _, _, item in self.queue:
            if item.__class__ is not Wakeups:
                return False           # a message, a completion or a SimPy event in flight
            for key, vr in item:
                if key == vr.wake_key and not vr.polled:
                    return False       # a rank that will act (computing, about to send)
        return True

    def livelock_error(self, blocked: list[tuple[int, str, str]]) -> None:
        """Tear down and raise :class:`LivelockError` for *blocked* (every unfinished rank)."""
        self._teardown()
        lines = [f"  rank {r}: {call} at {where}" for r, call, where in blocked[:32]]
        if len(blocked) > 32:
            lines.append(f"  ... and {len(blocked) - 32} more")
        npoll = sum(call.startswith("polling ") for _, call, _ in blocked)
        raise LivelockError(
            f"livelock at t={self._now!r}: {npoll} of {self.nranks} ranks polling and "
            f"{len(blocked) - npoll} blocked, with nothing in flight that could satisfy "
            f"them\n" + "\n".join(lines), blocked)

    def limit_error(self, what: str, blocked: list[tuple[int, str, str]] | None = None) -> None:
        """Tear down and raise :class:`SimulationLimitError` naming the unfinished ranks."""
        if blocked is None:
            blocked = self.blocked_ranks()
        self._teardown()
        first = f"; e.g. rank {blocked[0][0]} in {blocked[0][1]} at {blocked[0][2]}" \
            if blocked else ""
        raise SimulationLimitError(f"{what} at t={self._now!r} with {len(blocked)} of "
                                   f"{self.nranks} ranks unfinished{first}")

    def check_finish_limit(self) -> None:
        """After a run: :class:`SimulationLimitError` when a rank finished past
        ``max_sim_time`` (its last ``add_time`` or call crossed the limit, and no event
        after it did; every host process runs this on the gathered accounts)."""
        late = max(self.ranks, key=lambda vr: vr.clock, default=None)
        if late is not None and late.clock > self.max_sim_time:
            raise SimulationLimitError(
                f"simulated time passed the limit max_sim_time={self.max_sim_time!r} s: "
                f"rank {late.rank} finished at t={late.clock!r}")

    def _deadlock(self) -> None:
        self.deadlock_error(self.blocked_ranks(), self.nranks)

    def deadlock_error(self, blocked: list[tuple[int, str, str]], nranks: int,
                       clocks: dict[int, float] | None = None) -> None:
        """Tear down and raise :class:`DeadlockError` for *blocked*, each line with the
        time its rank blocked (its clock: *clocks*, gathered from every host process in a
        distributed run, else this engine's ranks') and the error with the last of them."""
        t = self._now
        if clocks is None:   # one process (another host's ranks are not known here)
            clocks = {vr.rank: vr.clock for vr in self.ranks
                      if not vr.finished and self.host_of is None}
        since: dict[int, str] = {}
        for rank, clock in clocks.items():
            since[rank] = f" (blocked since t={clock!r})"
            t = max(t, clock)
        lines = [f"  rank {r}: {call} at {where}{since.get(r, '')}"
                 for r, call, where in blocked[:32]]
        if len(blocked) > 32:
            lines.append(f"  ... and {len(blocked) - 32} more")
        exits = getattr(getattr(self, "exit_guard", None), "exits", {})
        lines += [f"  rank {r} had ended early with {how}: the others may wait for it"
                  for r, how in sorted(exits.items())[:8]]
        self._teardown()
        raise DeadlockError(
            f"deadlock at t={t!r}: {len({r for r, _, _ in blocked})} of {nranks} ranks "
            f"blocked with no pending event\n" + "\n".join(lines), blocked)



def _describe(req: Any, sends: dict[int, Any]) -> str:
    """A blocked request as its line shows it: a send found unmatched in a receiver's
    queue names its destination (world rank), tag and size, e.g. ``Ssend(dest=world 1,
    tag=7, 800 bytes)``; anything else describes itself (``Request.describe``)."""
    msg = sends.get(id(req))
    if msg is None:
        return str(req.describe())
    return f"{req.call}(dest=world {msg.dst}, tag={msg.tag}, {msg.nbytes} bytes)"


def _is_internal(filename: str) -> bool:
    """True for a frame of bsim's own code (any module of ``bsim`` or ``netmodels``); a
    compiled module's frames (``bsim/engine/compiled.py``) name its source relative to
    the build directory."""
    if filename.startswith(_COMPILED_PREFIXES) and not os.path.isabs(filename):
        return True
    return os.path.abspath(filename).startswith(_OWN_DIRS)


def _user_location(g: greenlet.greenlet | None) -> str:
    """``file:line`` of the innermost frame of *g* that is neither bsim's own code nor
    the standard library's (a ``Thread.join`` is reported at the user's call), else the
    innermost that is not bsim's."""
    frame = g.gr_frame if g is not None else None
    first = None
    while frame is not None:
        name = frame.f_code.co_filename
        if not _is_internal(name):
            where = f"{name}:{frame.f_lineno}"
            if not os.path.abspath(name).startswith(_STDLIB_DIR):
                return where
            first = first or where
        frame = frame.f_back
    return first or "?"


def called_from() -> tuple[str, str]:
    """The bsim call the running rank is in and the user's ``file:line`` that made it.

    The call is the outermost frame of bsim's own code before the user's (``Barrier``
    when ``comm.Barrier()`` fails deep inside), for errors raised where the call's name
    is not known; ``("", "?")`` outside any user code.
    """
    frame: types.FrameType | None = sys._getframe(1)
    call = ""
    while frame is not None:
        name = frame.f_code.co_filename
        if not _is_internal(name):
            # a compiled call has no frame: what is seen is a helper it called (on_null),
            # so the call is read from the user's source instead
            written = _callee_written(frame) if compiled_modules() else ""
            return written or call, f"{name}:{frame.f_lineno}"
        call = frame.f_code.co_name
        frame = frame.f_back
    return call, "?"


def _callee_written(frame: types.FrameType) -> str:
    """The name of the function *frame* is calling, as its source writes the call
    (``Barrier`` for ``comm.Barrier()``), from the call's source span; "" if unknown."""
    try:
        span = list(frame.f_code.co_positions())[frame.f_lasti // 2]
        first, last, col, end_col = span
        lines = [linecache.getline(frame.f_code.co_filename, n).encode()
                 for n in range(first, last + 1)]   # (columns count UTF-8 bytes)
        lines[-1] = lines[-1][:end_col]
        lines[0] = lines[0][col:]
        node = ast.parse(b"".join(lines).decode(), mode="eval").body
    except (AttributeError, IndexError, TypeError, SyntaxError, ValueError):
        return ""   # (no positions before Python 3.11, no source, not one expression)
    func = node.func if isinstance(node, ast.Call) else None
    return (func.attr if isinstance(func, ast.Attribute)
            else func.id if isinstance(func, ast.Name) else "")


def user_location_of_traceback(exc: BaseException) -> str:
    """`` (at file:line)`` of the innermost frame of *exc*'s traceback in the user's code:
    not bsim's, the standard library's or an installed package's (``json.loads`` failing
    is reported at the user's call, not in ``json/decoder.py``); else the innermost frame
    that is not bsim's; ``""`` when there is none."""
    tb = exc.__traceback__
    user = other = ""
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if not _is_internal(name):
            other = f" (at {name}:{tb.tb_lineno})"
            if not os.path.abspath(name).startswith(_LIBRARY_DIRS):
                user = other
        tb = tb.tb_next
    return user or other


_RAISE = dis.opmap["RAISE_VARARGS"]


def program_interrupt(exc: BaseException, rank: int | None = None) -> str | None:
    """The one line of a ``KeyboardInterrupt`` that a rank's program raised itself
    (``raise KeyboardInterrupt`` at the user's ``file:line``), else None: a program's
    exception like any other (``rank 2 raised KeyboardInterrupt (at prog.py:7)``), not
    the user pressing Ctrl-C at the simulator.

    A Ctrl-C raises where the interpreter checks for signals (a call, a loop's jump, a
    function's start, a blocking call in C), never at a ``raise`` instruction; so an
    interrupt whose innermost frame stopped at one was raised by code, and it was the
    program's when that frame ran in a rank (the traceback passes through the rank's
    ``Engine.run_rank``, whose ``vr`` names it).  A Ctrl-C re-raised by the program keeps
    the frame where it struck, and stays an interrupt.  *rank*: the rank whose greenlet
    raised it, when the caller knows (a compiled ``run_rank``'s frame shows no locals)."""
    if not isinstance(exc, KeyboardInterrupt) or exc.__traceback__ is None:
        return None
    tb: types.TracebackType | None = exc.__traceback__
    last = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if (rank is None and code.co_name == "run_rank" and _is_internal(code.co_filename)
                and isinstance(tb.tb_frame.f_locals.get("vr"), VirtualRank)):
            rank = tb.tb_frame.f_locals["vr"].rank
        last, tb = tb, tb.tb_next
    raw = last.tb_frame.f_code.co_code
    if (rank is None or _is_internal(last.tb_frame.f_code.co_filename)
            or not 0 <= last.tb_lasti < len(raw) or raw[last.tb_lasti] != _RAISE):
        return None
    text = f": {exc}" if str(exc) else ""
    return (f"rank {rank} raised KeyboardInterrupt{text}{user_location_of_traceback(exc)} "
            f"(an exception of the program, not a Ctrl-C)")
