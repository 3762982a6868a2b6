# cython: annotation_typing=False, auto_pickle=False
"""What a communicator is for a virtual rank: its contexts, kind and group, and the
calling rank's rank, size and collective context in it.

:class:`CommIdentity` is the base of :class:`~bsim.mpi.comms.comm.Comm`: the state every
call reads (``context``, ``coll_ctx``, ``kind``, the group as world ranks and its index,
the world ranks that freed their handle) and the queries of it that the point-to-point
and collective paths ask at every call.  Compiled (``comm_identity.pxd``), it is an
extension type: the engine reads these fields as C fields and calls the queries as C
methods, where a ``Comm``'s slots and methods cost a Python attribute lookup each.  An
intercommunicator replaces the queries with its own (``Intercomm``: those of
:mod:`bsim.mpi.management.intercomm`), and the C calls find them there.  It has no pickling
of its own (``auto_pickle=False``): a ``Comm`` pickles as ``CommPythonAPI`` says.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...constants import CommKind as Kind
from ...errors import MPIUsageError
from .python_api import on_freed, on_null

if TYPE_CHECKING:
    from ...engine.rank import VirtualRank

__all__ = ["CommIdentity", "IDENTITY_FIELDS"]

_WORLD, _SELF, _GROUP, _NULL = Kind.WORLD, Kind.SELF, Kind.GROUP, Kind.NULL

#: The fields of :class:`CommIdentity`, which a copy of a communicator's handle shares.
IDENTITY_FIELDS = ("context", "coll_ctx", "kind", "_group", "_index", "freed_by")


class CommIdentity:
    """A communicator's identity and the calling rank's place in it.

    * ``context``: the point-to-point context id (an int or a tuple);
    * ``coll_ctx``: the collectives' context id (``coll_context`` is the one to use);
    * ``kind``: a :class:`~bsim.constants.CommKind`;
    * ``_group``: the members' world ranks in rank order, ``_index`` their ranks;
    * ``freed_by``: world ranks that freed their handle.

    The queries raise :class:`~bsim.errors.MPIUsageError` on ``COMM_NULL``, for a
    rank that is not a member, and after that rank's ``Free``.
    """

    __slots__ = IDENTITY_FIELDS   # (compiled, comm_identity.pxd declares them as C fields)

    def rank_of(self, vr: VirtualRank) -> int:
        """The rank of *vr* in this communicator."""
        kind = self.kind
        if kind is _WORLD:   # a spawned rank's world: bsim/engine/spawning.py
            return vr.rank if vr.world is None else vr.rank - vr.world.base
        if kind is _SELF:
            return 0
        self._refuse_null_or_freed(vr)
        try:
            return self._index[vr.rank]
        except KeyError:
            raise MPIUsageError(f"rank {vr.rank} is not a member of {self!r}") from None

    def size_of(self, vr: VirtualRank) -> int:
        """The size of this communicator as seen by *vr*."""
        kind = self.kind
        if kind is _WORLD:
            return vr.engine.nranks if vr.world is None else vr.world.size
        if kind is _SELF:
            return 1
        self._refuse_null_or_freed(vr)
        return len(self._group)

    def _refuse_null_or_freed(self, vr: VirtualRank) -> int:
        """Raise for ``COMM_NULL``, or for a handle *vr* has freed (a null handle now, in
        mpi4py); 0 otherwise.  The checks ``rank_of`` and ``size_of`` share."""
        if self.kind is _NULL:
            raise on_null(vr)
        if self.freed_by and vr.rank in self.freed_by:
            raise on_freed(self, vr)
        return 0

    def world_rank(self, crank: int, vr: VirtualRank) -> int:
        """World rank of communicator rank *crank* (an intercomm's: of the remote group)."""
        kind = self.kind
        if kind is _WORLD:
            return crank if vr.world is None else vr.world.base + crank
        if kind is _SELF:
            return vr.rank
        return self._group[crank]

    def coll_context(self, vr: VirtualRank) -> Any:
        """Context of this communicator's collectives (COMM_SELF: one per rank)."""
        kind = self.kind
        if kind is _SELF:
            return ("self", vr.rank)
        return vr.world.coll_ctx if kind is _WORLD and vr.world is not None else self.coll_ctx

    def coll_identity(self, vr: VirtualRank) -> tuple[Any, int, int]:
        """``(coll_context(vr), rank_of(vr), size_of(vr))``: what ``arrive`` asks, at once."""
        kind = self.kind
        if kind is _WORLD:
            world = vr.world
            if world is None:
                return self.coll_ctx, vr.rank, vr.engine.nranks
            return world.coll_ctx, vr.rank - world.base, world.size
        if kind is _SELF:
            return ("self", vr.rank), 0, 1
        index = self._index   # a member of a group none freed: rank_of's answer, inlined
        me = index[vr.rank] if kind is _GROUP and not self.freed_by and vr.rank in index \
            else self.rank_of(vr)   # a null, freed or foreign communicator raises here
        return self.coll_ctx, me, len(self._group)

    def members(self, vr: VirtualRank) -> tuple[int, ...]:
        """World ranks of the members, in communicator rank order."""
        kind = self.kind
        if kind is _WORLD:
            return vr.engine.world_group if vr.world is None else vr.world.members
        if kind is _SELF:
            return (vr.rank,)
        if kind is _NULL:
            raise on_null(vr)
        return self._group
