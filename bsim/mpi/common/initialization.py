"""MPI initialization as mpi4py does it, per virtual rank: at import or by ``MPI.Init``.

mpi4py initializes MPI when ``mpi4py.MPI`` is imported unless ``mpi4py.rc.initialize``
is False; then the program calls ``MPI.Init()`` or ``MPI.Init_thread(required)`` itself
(MPI 4.1 Sec. 11.2.1).  Calling either a second time is erroneous (``ERR_OTHER``, as
MPICH).  The thread level (MPI 4.1 Sec. 11.6) is what the rank asked for:
``Init_thread``'s *required*, ``THREAD_SINGLE`` for ``Init``, and at import
``mpi4py.rc.thread_level`` (``THREAD_SINGLE`` when ``mpi4py.rc.threads`` is False), as
MPICH provides any level up to ``THREAD_MULTIPLE``.  Whatever level is asked, a rank's
Python threads run as thread contexts, one MPI call at a time (docs/architecture.md).

A rank's state is its ``VirtualRank.thread_level``: -1 while it is initialized by
``mpi4py.rc`` (or not at all, when ``rc.initialize`` is False), else the level its own
``Init``/``Init_thread`` provided.
"""

from __future__ import annotations

import sys
from typing import Any

from ...constants import ERR_OTHER, THREAD_MULTIPLE, THREAD_SINGLE
from ...engine.rank import current, current_or_none
from ...errors import MPIUsageError

__all__ = ["Init", "Init_thread", "Is_initialized", "Query_thread"]

LEVELS = {"single": 0, "funneled": 1, "serialized": 2, "multiple": 3}   # MPI's THREAD_*


def _rc() -> Any:
    return getattr(sys.modules.get("mpi4py"), "rc", None)


def _initialized_at_import() -> bool:
    rc = _rc()
    return rc is None or bool(getattr(rc, "initialize", True))


def _init(call: str, level: int) -> int:
    vr = current()
    if vr.thread_level >= 0 or _initialized_at_import() or vr.finalized:
        why = ("mpi4py initializes it on import unless mpi4py.rc.initialize = False"
               if vr.thread_level < 0 and not vr.finalized else "it was called before")
        raise MPIUsageError(f"rank {vr.rank}: {call}: MPI is already initialized ({why}; "
                            f"calling MPI_Init or MPI_Init_thread twice is erroneous)",
                            error_class=ERR_OTHER)
    vr.thread_level = level
    return level


def Init() -> None:
    """Initialize MPI (with ``mpi4py.rc.initialize = False``); an error otherwise."""
    _init("MPI.Init()", THREAD_SINGLE)


def Init_thread(required: int = THREAD_MULTIPLE) -> int:
    """Initialize MPI with thread support *required*; returns the level provided
    (*required*, up to ``THREAD_MULTIPLE``)."""
    level = int(required)
    return _init(f"MPI.Init_thread({level})",
                 min(max(level, THREAD_SINGLE), THREAD_MULTIPLE))


def Is_initialized() -> bool:
    """Whether the calling rank has initialized MPI (still True after ``Finalize``)."""
    vr = current_or_none()
    if vr is None or vr.finalized or vr.thread_level >= 0:
        return True
    return _initialized_at_import()


def Query_thread() -> int:
    """The calling rank's thread level: what it asked for (module docstring)."""
    vr = current_or_none()
    if vr is not None and vr.thread_level >= 0:
        return int(vr.thread_level)
    rc = _rc()
    if rc is None:
        return THREAD_MULTIPLE
    if not getattr(rc, "threads", True):
        return THREAD_SINGLE
    return LEVELS.get(str(getattr(rc, "thread_level", "multiple")).lower(), THREAD_MULTIPLE)
