"""A rank's ``os._exit``: one line naming the rank instead of a silent end of everything.

``os._exit(n)`` ends the calling OS process at once, without ``finally`` blocks, ``atexit``
handlers or ``MPI_Finalize``.  In a real MPI job that is one process gone without
finalizing, which the launcher reports as a failed job (MPICH's ``mpiexec`` and Open MPI's
``mpirun`` both end the job with an error).  Under bsim every virtual rank shares one host
process, so the same call would end the whole simulation with no message and no result.

While a run is going, :class:`ExitGuard` puts a function in ``os._exit``'s place that,
called from a rank (or one of its threads), raises :class:`~bsim.errors.RankError` naming
the rank, the exit code and the user's ``file:line``, whatever the code (0 included: the
process would still not have finalized).  Called from anything else (the host's own code, a
host thread, a child process a rank forked, as ``multiprocessing`` ends its children) it
is the real ``os._exit``.  ``sys.exit`` is a different matter: it raises
``SystemExit`` in the rank, which ends the rank (code 0) or is a ``RankError``
(:meth:`bsim.engine.core.Engine.run_rank`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..errors import RankError
from .failures import called_from
from .rank import current_or_none

__all__ = ["ExitGuard"]


class ExitGuard:
    """Swaps ``os._exit`` for the rank-aware one during a run (``arm`` / ``disarm``)."""

    __slots__ = ("saved",)

    def __init__(self) -> None:
        self.saved: Callable[[int], Any] | None = None

    def arm(self) -> None:
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

    def disarm(self) -> None:
        if self.saved is not None:
            setattr(os, "_exit", self.saved)   # noqa: B010
            self.saved = None
