"""Persistent collectives (MPI 4.0, Sec. 6.13): ``Allreduce_init`` ... ``Start`` ... ``Wait``.

Each ``X_init`` returns an inactive :class:`~bsim.mpi.requests.request.Prequest`; every
``Start`` runs the nonblocking ``IX`` with the arguments given at ``X_init``
(send buffers are read at ``Start``, as MPI allows) into that same request, so
one start costs and completes exactly as one ``IX`` posted at the start time
(``docs/collectives.md``, "Nonblocking and persistent collectives").  All
members must start their persistent collectives in the same order, as MPI
requires; a mismatch is the same ``CollectiveMismatchError`` as for ``IX``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...engine.collective_rules import start_into
from ...engine.rank import current
from ..requests.request import DONE, Prequest

__all__ = ["persistent", "PERSISTENT"]

PERSISTENT = {
    "Barrier_init": "Ibarrier", "Bcast_init": "Ibcast", "Gather_init": "Igather",
    "Gatherv_init": "Igatherv", "Scatter_init": "Iscatter", "Scatterv_init": "Iscatterv",
    "Allgather_init": "Iallgather", "Allgatherv_init": "Iallgatherv",
    "Alltoall_init": "Ialltoall", "Alltoallv_init": "Ialltoallv",
    "Alltoallw_init": "Ialltoallw", "Reduce_init": "Ireduce", "Allreduce_init": "Iallreduce",
    "Reduce_scatter_block_init": "Ireduce_scatter_block",
    "Reduce_scatter_init": "Ireduce_scatter", "Scan_init": "Iscan", "Exscan_init": "Iexscan",
}
"""Each persistent collective and the nonblocking call one of its starts runs."""


def persistent(name: str) -> Callable[..., Prequest]:
    """The method ``Comm.<name>`` (e.g. ``Allreduce_init``) for the table above."""
    nonblocking = PERSISTENT[name]

    def init(comm: Any, *args: Any, **kwargs: Any) -> Prequest:
        def issue(req: Prequest) -> None:
            got = start_into(req, lambda: getattr(comm, nonblocking)(*args, **kwargs))
            if got is not req:   # pragma: no cover - the engine's contract
                raise RuntimeError(f"{name}: the start did not fill its request")

        return Prequest(current(), DONE, name, issue)

    init.__name__ = init.__qualname__ = name
    init.__doc__ = f"Persistent form of ``{nonblocking}``: start it with ``Start``."
    return init
