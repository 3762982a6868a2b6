"""Every rank's greenlet (:class:`RankGreenlet`) and what it runs: the program, then the
rank's exit; and the host compute of a rank in host-compute mode (charged here at the rank's
end, and by ``current``).

Kept out of the compiled modules (``bsim.engine.compiled.TYPED``) on purpose.  A greenlet
saves the C stack between its start and the point where it switches, at every switch and
for as long as the rank is suspended.  Interpreted, the function at a greenlet's base, the
program and the program's Python callees share one evaluation loop's C frame; a compiled
function there would be a C frame of its own, and so would the new evaluation loop it
starts for the program: about 0.5 KiB more per idle rank (``docs/benchmarks.md``).
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import copy_context
from typing import TYPE_CHECKING, Any

import greenlet

if TYPE_CHECKING:
    from .rank import VirtualRank

__all__ = ["RankGreenlet", "run_current_rank", "run_rank", "charge_host_compute"]


def run_current_rank() -> None:
    """The function of every rank's greenlet (``RankGreenlet``): :func:`run_rank` on its
    rank and program.  One function for all, not a closure made per rank (about 220 bytes
    a rank fewer), and not a method (a bound method's call would leave ~140 bytes more of
    C stack to save at every switch).  The program is the run's (``engine.program``) or,
    for a Python thread of a rank or a spawned rank, its own (``engine.own_programs``)."""
    vr = greenlet.getcurrent().vrank
    engine = vr.engine
    program = engine.own_programs.pop(vr, None)
    run_rank(vr, engine.program if program is None else program)


def run_rank(vr: VirtualRank, program: Callable[[VirtualRank], Any]) -> None:
    """*program* on *vr*, then its exit: sys.exit code, threads, atexit handlers."""
    engine = vr.engine
    if engine.measure is not None:
        engine.measure.mark(vr)
    try:
        retval = program(vr)
        if retval is not None:   # kept by the engine, not on every rank (docs/benchmarks.md)
            engine.returns[vr] = retval
    except SystemExit as exc:   # sys.exit(0) ends the rank; another code is an error
        if exc.code not in (None, 0):
            raise engine.exit_guard.exit_error(vr, exc) from None
        engine.exit_guard.left(vr, exc)   # a deadlock report names a rank that left
    if engine.thread_support.threads:   # the interpreter's exit: wait for threads
        engine.thread_support.rank_exit(vr)
    engine.exit_guard.run_atexits(vr)   # then the rank's atexit handlers
    if engine.measure is not None:
        charge_host_compute(vr)   # the compute after the last MPI call
    vr.finished = True


def charge_host_compute(vr: VirtualRank) -> None:
    """Host-compute mode: charge *vr* the host time since its last mark, times the scale
    (calc that is not modelled compute: also added to ``engine.calc_excess[rank]``)."""
    m = vr.engine.measure
    now = m.clock()
    dt = (now - m.marks[vr]) * m.scale
    m.marks[vr] = now
    if dt > 0.0:
        start = vr.clock
        vr.clock = start + dt
        vr.calc += dt
        excess = vr.engine.calc_excess
        excess[vr.rank] = excess.get(vr.rank, 0.0) + dt
        tracer = vr.engine.tracer
        if tracer is not None:   # a calc span, as add_time's (the trace adds up to calc)
            tracer.span(vr.rank, "calc", "measured", start, vr.clock)


class RankGreenlet(greenlet.greenlet):
    """The greenlet running one virtual rank's program: ``program(vrank)``.

    Every rank's greenlet runs the one function :func:`run_current_rank`; the class lives
    here, with it, outside the compiled modules.

    It runs in a copy of the creator's :mod:`contextvars` context (a greenlet starts
    in an empty one), as an asyncio task does: what the run set up in a
    context variable is seen in the rank (``netmodels.input_files``: the files a rank
    reads are the run's inputs), and what a rank sets is its own.  Set once here, not
    by a ``Context.run`` around the program, which would add a C frame to every switch.
    """

    __slots__ = ("vrank",)   # the program is the engine's (16 bytes a rank fewer)

    def __init__(self, vrank: VirtualRank, program: Callable[[VirtualRank], Any],
                 parent: greenlet.greenlet) -> None:
        super().__init__(run_current_rank, parent)
        greenlet.greenlet.gr_context.__set__(self, copy_context())   # the base's own slot
        self.vrank = vrank
        engine = vrank.engine
        if program is not engine.program:   # a thread's, a spawned rank's
            engine.own_programs[vrank] = program
        vrank.greenlet = self
