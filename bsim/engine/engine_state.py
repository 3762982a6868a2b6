# cython: annotation_typing=False
"""``EngineState``: the fields of the engine that the hot path reads, the base of ``Engine``.

A compiled build makes it an extension type (``engine_state.pxd``), so that the compiled
modules (``bsim.engine.compiled.TYPED``) read these fields as C fields; ``Engine``
(``core.py``) sets them and documents them.  SimPy's clock ``_now`` is one of them.
"""

from __future__ import annotations

__all__ = ["EngineState"]


class EngineState:
    """The engine's fields read on every message and wake-up (set by ``Engine.__init__``)."""

    __slots__ = ("_now", "nranks", "ranks", "protocol", "main", "queue", "deliveries",
                 "wakeups", "lookahead", "host_of", "tracer", "measure", "defers", "hooked")
