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

The receive blocks of one v or w collective must not overlap: MPI 4.1 Sec. 6.6 (and
6.7, 6.8 for ``Allgatherv``, ``Alltoallv``, ``Alltoallw``): "The specification of
counts, types, and displacements should not cause any location on the root to be
written more than once.  Such a call is erroneous."  MPICH does not check, and writes
the blocks in whatever order its algorithm delivers them; :func:`check_disjoint` names
the two blocks and the byte they share (``ERR_ARG``), at the call.

Used by :mod:`bsim.mpi.collectives.exchanges` (``Gather`` ... ``Alltoallw``),
:mod:`bsim.mpi.topologies.neighbor_buffers` (``Neighbor_allgather`` ... ``Neighbor_alltoallw``)
and :mod:`bsim.mpi.collectives.intercomm_buffers` (the same calls on an intercommunicator).  Each
checks where both sizes meet without an extra message, usually at the receiver as it
places the data, so that no rank checks more than the blocks it receives.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import MPIUsageError

__all__ = ["ERR_TRUNCATE", "check_block", "check_disjoint"]

ERR_TRUNCATE = 14   # MPI_ERR_TRUNCATE (bsim/mpi/common/error_codes.py)
ERR_ARG = 12        # MPI_ERR_ARG


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


def check_disjoint(vr: Any, call: str, info: Any, nblocks: int) -> None:
    """Refuse receive blocks of *info* (a ``BufInfoV`` with real memory) that write one
    memory location twice (MPI 4.1 Sec. 6.6: erroneous).  Blocks are compared where they
    land in the user's memory: through a derived datatype's layout when the buffer is
    seen through one (``GatherView``), so a resized type's interleaved blocks are fine."""
    mem = info.mem
    if mem is None or info.counts is None or nblocks < 2:
        return
    spans = [info.block(r) for r in range(nblocks)]
    index = getattr(mem, "_index", None)
    if index is None:   # plain bytes: intervals [off, off + n)
        live = sorted((off, off + n, r) for r, (off, n) in enumerate(spans) if n > 0)
        for (a0, a1, ra), (b0, _, rb) in zip(live, live[1:]):
            if b0 < a1:
                _overlap(vr, call, min(ra, rb), max(ra, rb), b0)
        return
    parts = [index[off:off + n] for off, n in spans]
    where = np.concatenate(parts) if parts else np.empty(0, dtype=np.intp)
    if where.size < 2:
        return
    order = np.sort(where, kind="stable")
    dup = np.flatnonzero(order[1:] == order[:-1])
    if dup.size:
        byte = int(order[dup[0]])
        owners = [r for r, part in enumerate(parts) if np.any(part == byte)]
        _overlap(vr, call, owners[0], owners[1], byte)


def _overlap(vr: Any, call: str, a: int, b: int, byte: int) -> None:
    raise MPIUsageError(f"rank {vr.rank}: {call}: receive blocks {a} and {b} overlap (both "
                        f"write byte {byte} of the receive buffer; MPI forbids writing a "
                        f"location twice: check the counts and displacements)",
                        error_class=ERR_ARG)
