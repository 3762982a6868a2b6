# cython: annotation_typing=False
"""``EngineState``: the fields of the engine that the hot path reads, the base of ``Engine``;
``ModuleWatch``: those of the run's private modules that the event loop reads.

A compiled build makes it an extension type (``engine_state.pxd``), so that the compiled
modules (``bsim.engine.compiled.TYPED``) read these fields as C fields; ``Engine``
(``core.py``) sets them and documents them.  SimPy's clock ``_now`` is one of them.
"""

from __future__ import annotations

__all__ = ["EngineState", "ModuleWatch"]


class EngineState:
    """The engine's fields read on every message and wake-up, and on every collective
    arrival (``colls``, ``collective_costs``, ``request_class``, ``formula_collectives``:
    ``bsim.engine.collective_rules.arrive``); set by ``Engine.__init__`` and ``simulate``.

    ``last_batch`` and ``last_batch_time``: the ``Deliveries`` batch a send last joined
    and its time, or None; when set, it is ``deliveries[last_batch_time]``.  The ``bsim``
    send checks it before the dictionary (the sends of a rank, and of ranks in step, join
    one batch): no float hashed and looked up per message.  Whatever takes a batch out of
    ``deliveries`` sets it to None.

    ``early_match``: blocking receives may take messages still in flight
    (``bsim.engine.matching.early_matching``); set when the run starts.
    """

    __slots__ = ("_now", "nranks", "ranks", "protocol", "main", "queue", "deliveries",
                 "wakeups", "lookahead", "host_of", "tracer", "measure", "defers", "hooked",
                 "last_batch", "last_batch_time", "early_match", "colls",
                 "formula_collectives", "collective_costs", "request_class")


class ModuleWatch:
    """What the event loop checks at every switch to a rank, the base of
    :class:`~bsim.engine.private_modules.PrivateModules`: ``swapping``, whether a switch
    must install the rank's own modules first; ``count`` and ``main_now``, the size of
    ``sys.modules`` and its ``__main__`` as the last switch left them (a rank that imports
    or replaces ``__main__`` changes one, and its modules are recorded after its turn).
    Compiled, C fields (``engine_state.pxd``): the loop reads them without a lookup."""

    __slots__ = ("swapping", "count", "main_now")
