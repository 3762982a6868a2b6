"""Communicator management: Dup, Split, Split_type, Create, Create_group, Compare, Abort.

Creating a communicator is a collective on the parent (all-to-all dependency
rule) priced as MPICH implements it: ``Dup``/``Create`` as an allreduce of one
8-byte context id, ``Split`` as an allgather of the (color, key) pairs.  The
new communicator object is shared by its members; its context is derived
from the parent's context and the call's sequence number, so it is the same
in every run and on every partition.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..engine.collective_rules import ALL, arrive, finalize
from ..engine.rank import VirtualRank, current
from ..errors import MPIUsageError, SimulationError
from .groups import CONGRUENT, IDENT, SIMILAR, UNEQUAL, Group

if TYPE_CHECKING:
    from .comm import Comm

__all__ = ["CommManagement", "COMM_TYPE_SHARED"]

COMM_TYPE_SHARED = 1
UNDEFINED = -32766


class CommManagement:
    """Mixin of :class:`bsim.mpi.comm.Comm`: creating and comparing communicators."""

    __slots__ = ()

    def _new_comm(self, vr: VirtualRank, ctx: Any, members: tuple[int, ...],
                  name: str, cls: Any = None, **attrs: Any) -> Comm:
        """The shared communicator with context *ctx* (created by its first member)."""
        from .comm import _KIND_GROUP, Intracomm
        comms = vr.engine.comms
        comm = comms.get(ctx)
        if comm is None:
            comm = (cls or Intracomm)(ctx, _KIND_GROUP, members, name=name)
            for k, v in attrs.items():
                setattr(comm, k, v)
            comms[ctx] = comm
        return comm

    def _collective_create(self, vr: VirtualRank, call: str, value: Any, cost_op: str,
                           nbytes: int, extra: tuple[Any, ...] = ()) -> tuple[Any, int, int]:
        seq = (vr.coll_seq or {}).get(self.coll_context(vr), 0)  # type: ignore[attr-defined]
        inst, me, req = arrive(vr, self, call, ALL, -1, nbytes, value, extra,  # type: ignore[arg-type]
                               cost_op=cost_op)
        if req is not None:
            vr.settle([req], call)
        return inst, me, seq

    def Get_group(self) -> Group:
        """The group of the communicator."""
        return Group(self.members(current()))  # type: ignore[attr-defined]

    @property
    def group(self) -> Group:
        """The group of the communicator."""
        return self.Get_group()

    def Dup(self, info: Any = None) -> Comm:
        """Duplicate: same group, new context (collective)."""
        vr = current()
        inst, me, seq = self._collective_create(vr, "Dup", None, "allreduce", 8)
        ctx = ("dup", self.coll_context(vr), seq)  # type: ignore[attr-defined]
        comm = self._new_comm(vr, ctx, self.members(vr), f"{self.Get_name()}.Dup")  # type: ignore[attr-defined]
        finalize(vr, self, inst)  # type: ignore[arg-type]
        return comm

    def Clone(self) -> Comm:
        """Same as Dup."""
        return self.Dup()

    def Split(self, color: int = 0, key: int = 0) -> Comm:
        """Split by *color*, ordering each part by (*key*, old rank) (collective)."""
        from .. import MPI
        vr = current()
        if not isinstance(color, int) or (color < 0 and color != UNDEFINED):
            raise MPIUsageError(f"rank {vr.rank}: Split(color={color!r}): color must be an "
                                f"int >= 0 or UNDEFINED")
        size = self.size_of(vr)  # type: ignore[attr-defined]
        inst, me, seq = self._collective_create(vr, "Split", (color, key), "allgather",
                                                8 * size)
        if color == UNDEFINED:
            finalize(vr, self, inst)  # type: ignore[arg-type]
            return MPI.COMM_NULL
        if inst.result is None:   # computed once per instance: color -> ordered members
            members = self.members(vr)  # type: ignore[attr-defined]
            parts: dict[int, list[tuple[int, int]]] = {}
            for r, (c, k) in enumerate(inst.values):
                parts.setdefault(c, []).append((k, r))
            inst.result = {c: tuple(members[r] for _, r in sorted(v)) for c, v in parts.items()}
        group = inst.result[color]
        ctx = ("split", self.coll_context(vr), seq, color)  # type: ignore[attr-defined]
        comm = self._new_comm(vr, ctx, group, f"{self.Get_name()}.Split({color})")  # type: ignore[attr-defined]
        finalize(vr, self, inst)  # type: ignore[arg-type]
        return comm

    def Split_type(self, split_type: int, key: int = 0, info: Any = None) -> Comm:
        """``COMM_TYPE_SHARED``: one communicator per simulated node."""
        from .. import MPI
        vr = current()
        if split_type == UNDEFINED:
            return self.Split(UNDEFINED, key)
        if split_type != COMM_TYPE_SHARED:
            raise MPIUsageError(f"rank {vr.rank}: Split_type({split_type!r}): only "
                                f"COMM_TYPE_SHARED is supported")
        node_of = getattr(vr.engine.network, "node_of", None)
        node = node_of(vr.rank) if node_of is not None else vr.rank
        comm = self.Split(int(node), key)
        return comm if comm else MPI.COMM_NULL

    def Create(self, group: Group) -> Comm:
        """A communicator of *group*'s members (collective over this communicator)."""
        from .. import MPI
        vr = current()
        inst, me, seq = self._collective_create(vr, "Create", None, "allreduce", 8,
                                                (("group", hash(group.members)),))
        ctx = ("create", self.coll_context(vr), seq)  # type: ignore[attr-defined]
        finalize(vr, self, inst)  # type: ignore[arg-type]
        if vr.rank not in group._index:
            return MPI.COMM_NULL
        return self._new_comm(vr, ctx, group.members, f"{self.Get_name()}.Create")  # type: ignore[attr-defined]

    def Create_group(self, group: Group, tag: int = 0) -> Comm:
        """A communicator of *group*, collective over the group's members only."""
        from .comm import _KIND_GROUP, Intracomm
        vr = current()
        if vr.rank not in group._index:
            raise MPIUsageError(f"rank {vr.rank}: Create_group: the caller is not in the group")
        base = ("cgroup", self.coll_context(vr), group.members, tag)  # type: ignore[attr-defined]
        scratch = Intracomm(base, _KIND_GROUP, group.members, name="Create_group")
        inst, me, seq = scratch._collective_create(vr, "Create_group", None, "allreduce", 8)
        comm = self._new_comm(vr, ("cg", base, seq), group.members,
                              f"{self.Get_name()}.Create_group")  # type: ignore[attr-defined]
        finalize(vr, scratch, inst)
        return comm

    def Compare(self, comm: Comm) -> int:
        """``IDENT``, ``CONGRUENT``, ``SIMILAR`` or ``UNEQUAL``."""
        vr = current()
        if comm is self:
            return IDENT
        a, b = self.members(vr), comm.members(vr)  # type: ignore[attr-defined]
        if a == b:
            return CONGRUENT
        if set(a) == set(b):
            return SIMILAR
        return UNEQUAL

    def Free(self) -> None:
        """Release the handle (a no-op: the object is shared by the members)."""

    def Abort(self, errorcode: int = 0) -> None:
        """Abort the whole simulation."""
        raise SimulationError(f"rank {current().rank} called Abort({errorcode})")

    def Get_topology(self) -> int:
        """``UNDEFINED`` for a plain intracommunicator."""
        return UNDEFINED
