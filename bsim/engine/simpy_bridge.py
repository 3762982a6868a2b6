"""Models written as SimPy processes, used by the virtual ranks of a bsim run.

The engine *is* a :class:`simpy.Environment` (``bsim.engine.core.Engine``): SimPy
events, timeouts, processes and resources created on it go on bsim's own event
queue, ordered after every rank wake-up of the same time (their keys are above
every rank's, ``bsim.engine.events``), so runs stay deterministic.  A rank
takes part through two calls:

* :func:`simpy_env` brings the calling rank's lazy clock up to the engine's
  time and returns the environment, so that events it creates start *now*
  for that rank;
* :func:`wait_for` suspends the calling rank until a SimPy event has been
  processed and charges the time blocked to one of the rank's accounts
  (``"wait"``, ``"comm"`` or ``"calc"``), which keeps ``finish = calc + wait +
  comm``.  Which account is the caller's modelling choice: waiting in a
  server's queue is wait (another rank holds the server), being served is
  comm (the operation's own cost).

:func:`shared` gives one object per simulation (e.g. the ``simpy.Resource``
every rank uses).  ``docs/simpy.md`` has a worked example (a shared I/O
server) and lists the SimPy internals the engine relies on.  SimPy state is
global to a run, so these calls refuse distributed runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import simpy

from ..errors import DistributedError, MPIUsageError
from .core import Engine
from .rank import VirtualRank, current

__all__ = ["simpy_env", "wait_for", "shared", "ACCOUNTS"]

ACCOUNTS = ("wait", "comm", "calc")

T = TypeVar("T")


def _rank_for(call: str) -> VirtualRank:
    vr = current()
    if vr.engine.host_of is not None:
        raise DistributedError(f"rank {vr.rank}: {call}: SimPy models share state between all "
                               f"ranks and cannot be split over host processes; run it in "
                               f"one process")
    return vr


def simpy_env() -> Engine:
    """The run's SimPy environment, with the calling rank's clock brought to its ``now``.

    Raises :class:`~bsim.errors.NotInSimulationError` outside a simulated rank
    and :class:`~bsim.errors.DistributedError` in a distributed run.
    """
    vr = _rank_for("simpy_env")
    vr.sync("simpy_env")
    return vr.engine


def shared(name: str, factory: Callable[[Engine], T]) -> T:
    """The object called *name* in this run, made by ``factory(env)`` on first use.

    Every rank gets the same object (one shared server, one shared store);
    a new simulation gets a new one.
    """
    vr = _rank_for("shared")
    store: dict[str, Any] = vr.engine.user_state
    if name not in store:
        store[name] = factory(vr.engine)
    obj: T = store[name]
    return obj


def wait_for(event: simpy.Event, account: str = "wait") -> Any:
    """Block the calling rank until SimPy processes *event*; return the event's value.

    The simulated time spent blocked is added to the rank's *account*
    (``"wait"``, ``"comm"`` or ``"calc"``).  An event already processed returns
    at once; a failed event raises its exception in the rank.  Raises
    :class:`~bsim.errors.MPIUsageError` for an unknown account or an event of
    another environment.
    """
    vr = _rank_for("wait_for")
    if account not in ACCOUNTS:
        raise MPIUsageError(f"rank {vr.rank}: wait_for(account={account!r}): valid accounts "
                            f"are {', '.join(ACCOUNTS)}")
    engine = vr.engine
    if event.env is not engine:
        raise MPIUsageError(f"rank {vr.rank}: wait_for({event!r}): the event belongs to "
                            f"another environment (create it with simpy_env())")
    vr.sync("wait_for")
    if event.callbacks is not None:   # not processed yet: sleep until it is
        def resume(ev: simpy.Event) -> None:
            if not ev.ok:
                ev.defused = True   # raised in the rank below, not by the engine loop
            vr.wake(engine.now)

        event.callbacks.append(resume)
        vr.suspend(f"wait_for({type(event).__name__})")
        start, vr.clock = vr.clock, engine.now
        blocked = vr.clock - start
        setattr(vr, account, getattr(vr, account) + blocked)
        tracer = engine.tracer
        if tracer is not None and blocked > 0.0:
            tracer.span(vr.rank, account, "wait_for", start, vr.clock)
    vr.ops += 1
    if not event.ok:
        event.defused = True
        exc = event.value
        raise exc if isinstance(exc, BaseException) else RuntimeError(exc)
    return event.value
