"""The size check shared by the collectives that move blocks: what a rank sends must fill
the receive block it lands in.

MPI requires the type signature of the data a rank sends in a collective to equal the
type signature of the receive block it lands in (MPI 4.1, Sec. 6.1 for the
intracommunicator and intercommunicator collectives, Sec. 8.6 for the neighbourhood
ones); bsim moves and prices bytes, so it compares byte counts.  A send larger than its
block would be truncated, and a smaller one would be charged as if the program had sent
the receive side's size: either way the prediction would be silently wrong, so a
mismatch is an :class:`~bsim.errors.MPIUsageError` of class ``ERR_TRUNCATE`` whose one
line names the rank, the call, the sender (when it is another rank) and both sizes.

Used by :mod:`bsim.mpi.collective_exchanges` (``Gather`` ... ``Alltoallw``),
:mod:`bsim.mpi.neighbor_vectors` (``Neighbor_allgather`` ... ``Neighbor_alltoallw``)
and :mod:`bsim.mpi.inter_buffers` (the same calls on an intercommunicator).  Each
checks where both sizes meet without an extra message, usually at the receiver as it
places the data, so that no rank checks more than the blocks it receives.
"""

from __future__ import annotations

from typing import Any

from ..errors import MPIUsageError

__all__ = ["ERR_TRUNCATE", "check_block"]

ERR_TRUNCATE = 14   # MPI_ERR_TRUNCATE (bsim/mpi/error_codes.py)


def check_block(vr: Any, call: str, sent: int, block: int, source: int | None = None) -> None:
    """Refuse *sent* bytes landing in a receive block of *block* bytes unless they are equal.

    *vr* is the rank checking, *call* the MPI name of the call (``Gatherv``,
    ``Ineighbor_alltoall``, ...), *source* the sending rank when it is another rank
    (None: this rank sends).  MPI requires matching type signatures: more bytes would be
    truncated, fewer would be charged as if the program had sent less.
    """
    if sent != block:
        who = "this rank sends" if source is None else f"rank {source} sends"
        why = "; message truncated" if sent > block else ""
        raise MPIUsageError(f"rank {vr.rank}: {call}: {who} {sent} bytes but its receive block "
                            f"holds {block} bytes (send and receive counts must match{why})",
                            error_class=ERR_TRUNCATE)
