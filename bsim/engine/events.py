"""What the engine's queue holds, and in which order (the determinism contract).

The queue is a heap of ``(time, priority, key, item)``:

* ``time``: simulated seconds;
* ``priority`` (:class:`Priority`): at equal times network events come
  first, then rank wake-ups (so a rank acting at t sees every message that
  arrived at t), then the fluid fabric's settling of rates;
* ``key``: ``(owner world rank << 32) | owner's sequence number``, the rank
  that caused the event and how many events it had caused before; plain
  SimPy events get keys above every rank's (``SIMPY_KEYS``) in insertion order;
* ``item``: a :class:`~bsim.engine.rank.VirtualRank` (a wake-up), a
  :class:`~bsim.engine.matching.Message` (a delivery), a :class:`Deliveries`
  batch, a :class:`Call`, a :class:`NetEvent` or a SimPy event.

Deliveries: in one process the point-to-point send does not push each message;
messages that become visible at the same time ``t`` join one :class:`Deliveries`
list, which sits in the heap once as ``(t, NET, -1, batch)``.  When it comes out the
loop sorts it by the messages' keys and delivers them in that order, and before each
one checks the heap: an entry ordered before the next message (another network event
of time ``t`` with a smaller key) sends the rest of the batch back into the heap under
that message's key.  The order of deliveries is therefore exactly the order of one
heap entry per message, and the heap holds one entry per distinct time instead of
one per message in flight (a halo exchange's sends of one step share their time).

Wake-ups are batched the same way: :meth:`~bsim.engine.rank.VirtualRank.wake` adds
``(key, rank)`` to the :class:`Wakeups` of its time, in the heap once as
``(t, RANK, -1, batch)`` and run in key order with the same check before each rank.
A bulk-synchronous program wakes most of its ranks at a few distinct times, so the
heap stays small at a million ranks (a heap operation on a million entries costs
several times one on a thousand: cache misses).

None of the four depends on host timing or on how ranks are partitioned over
host processes, so runs are bit-identical (``docs/architecture.md``).
:meth:`bsim.engine.core.Engine.push` is the one way to add an entry.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from enum import IntEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .core import Engine

__all__ = ["Priority", "WaitMode", "Call", "Deliveries", "Wakeups", "NetEvent", "SIMPY_KEYS",
           "PRIO_NET", "PRIO_RANK", "PRIO_SETTLE", "TIE", "fire_simpy_event"]

SIMPY_KEYS = 1 << 62   # keys of plain SimPy events start here (above every rank's)

#: Send times this close (relative) are a tie for the order in which a rank handles its
#: receives under contention (``bsim.engine.settle_in_turn``): far below any physical
#: difference (a nanosecond at 1,000 s), far above float rounding (1e-16 a step).
TIE = 1e-12


class Priority(IntEnum):
    """Order of events at equal times."""

    NET = 0      # message arrivals and other network events
    RANK = 1     # rank wake-ups: at equal times they see messages that arrived
    SETTLE = 2   # the fluid fabric recomputes rates after every start at an instant


class WaitMode(IntEnum):
    """What a suspended rank waits for (how ``on_resolve`` treats its requests)."""

    NONE = 0   # not waiting on requests
    ALL = 1    # settle: every request of the wait set
    ANY = 2    # settle_any: the first request to become available


# hot paths use these module globals as plain ints: an Enum attribute lookup costs ~6x a
# global's, and heap comparisons of exact ints take CPython's fast path
PRIO_NET, PRIO_RANK, PRIO_SETTLE = int(Priority.NET), int(Priority.RANK), int(Priority.SETTLE)


class Call:
    """A scheduled function call: ``fn(*args)`` at a time, e.g. a message arrival."""

    __slots__ = ("fn", "args")

    def __init__(self, fn: Callable[..., None], args: tuple[Any, ...]) -> None:
        self.fn = fn
        self.args = args


class Deliveries(list):
    """Messages that become visible at one time, delivered in key order (module docstring)."""

    __slots__ = ()


class Wakeups(list):
    """``(key, rank)`` wake-ups of one time, run in key order as :class:`Deliveries` are
    delivered; a superseded one (``key != rank.wake_key``) is skipped (module docstring)."""

    __slots__ = ()


class NetEvent(ABC):
    """A network event that may cross host processes: ``run(engine)`` at its time.

    Subclasses (the ``loggp`` clear-to-send and data arrival) hold object
    references in a single process and ``to_wire()`` gives a picklable form
    that :mod:`bsim.engine.distributed` rebuilds on the target's host.
    """

    __slots__ = ()

    @abstractmethod
    def run(self, engine: Engine) -> None:
        """Take effect at the event's time, on the host of its target rank."""

    @abstractmethod
    def to_wire(self, engine: Engine) -> tuple[Any, ...]:
        """A picklable form (object references replaced by keys in ``engine.handles``)."""


def fire_simpy_event(event: Any) -> None:
    """Process a SimPy event popped from the engine's queue as SimPy's ``step`` does: run
    its callbacks; a failed event nobody defused raises its exception (a copy, caused by
    the original)."""
    callbacks, event.callbacks = event.callbacks, None
    for callback in callbacks:
        callback(event)
    if not event._ok and not hasattr(event, "_defused"):
        exc = type(event._value)(*event._value.args)
        exc.__cause__ = event._value
        raise exc
