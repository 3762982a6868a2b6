"""Process groups (mpi4py's ``MPI.Group``): ordered sets of world ranks.

Handles as mpi4py has them: ``Group()`` is a null group, equal to ``GROUP_NULL`` (and
false); ``Group(group)`` another object for the same group; ``Free`` makes a group
equal to ``GROUP_NULL``; ``GROUP_NULL`` and ``GROUP_EMPTY`` pickle to themselves, copies
of them to equal objects, any other group not at all (``ValueError``, as mpi4py: a group
is a handle local to its process).  Non-null groups are equal when they have the same
members in the same order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...constants import (
    ERR_ARG,
    ERR_GROUP,
    ERR_RANK,
    ERR_SESSION,
    IDENT,
    PROC_NULL,
    SIMILAR,
    UNDEFINED,
    UNEQUAL,
)
from ...engine.rank import current, current_or_none
from ...errors import MPIUsageError
from ..common.handles import HandleValues
from ..common.integers import integral

__all__ = ["Group", "GROUP_EMPTY", "GROUP_NULL"]


def _error(call: str, what: str, error_class: int) -> MPIUsageError:
    """The error of ``Group.<call>``, naming the calling rank (in a simulation): MPICH's
    classes, ``ERR_GROUP`` for a null group, ``ERR_RANK`` for a rank outside the group,
    ``ERR_ARG`` for a bad range triple."""
    vr = current_or_none()
    who = f"rank {vr.rank}: " if vr is not None else ""
    return MPIUsageError(f"{who}Group.{call}: {what}", error_class=error_class)


class Group(HandleValues):
    """An ordered group of world ranks; rank *i* of the group is ``members[i]``."""

    __slots__ = ("members", "_index", "_null", "__weakref__")
    _handle_kind = "Group"

    def _handle_identity(self) -> object | None:
        """Equal groups (the same members in the same order) share a handle."""
        return None if self._null else self.members

    def __init__(self, members: Sequence[int] | Group | None = None) -> None:
        if members is None or isinstance(members, Group):
            self._null: bool = members is None or members._null
            self.members: tuple[int, ...] = () if members is None else members.members
            self._index: dict[int, int] = {} if members is None else members._index
            return
        if not isinstance(members, (list, tuple, range)):
            raise TypeError(f"Group(): expected a Group, got {type(members).__name__}")
        self._null = False
        self.members = tuple(members)
        if len(set(self.members)) != len(self.members):
            raise ValueError(f"group has repeated ranks: {list(self.members)}")
        self._index = {w: i for i, w in enumerate(self.members)}

    def _not_null(self, call: str) -> None:
        """``ERR_GROUP`` for a call on ``GROUP_NULL`` (a null or freed group)."""
        if self._null:
            raise _error(call, "the group is GROUP_NULL (a null or freed group)", ERR_GROUP)

    def Get_size(self) -> int:
        """Number of processes in the group."""
        self._not_null("Get_size")
        return len(self.members)

    def Get_rank(self) -> int:
        """Rank of the calling process in the group, or ``UNDEFINED``."""
        self._not_null("Get_rank")
        return self._index.get(current().rank, UNDEFINED)

    @property
    def size(self) -> int:
        """Number of processes in the group."""
        return self.Get_size()

    @property
    def rank(self) -> int:
        """Rank of the calling process in the group, or ``UNDEFINED``."""
        return self.Get_rank()

    def _check(self, ranks: Sequence[int], call: str, proc_null: bool = False,
               distinct: bool = False) -> None:
        """``ERR_GROUP`` on ``GROUP_NULL``; ``ERR_RANK`` for a rank outside the group (or
        repeated, when *distinct*), as MPICH."""
        self._not_null(call)
        seen: set[int] = set()
        for i, r in enumerate(ranks):
            if not (0 <= r < len(self.members) or proc_null and r == PROC_NULL):
                raise _error(call, f"ranks[{i}] = {r} is not a rank of the group (0.."
                             f"{len(self.members) - 1})", ERR_RANK)
            if distinct and r in seen:
                raise _error(call, f"ranks[{i}] = {r} is repeated", ERR_RANK)
            seen.add(r)

    def _ranges(self, ranges: Sequence[tuple[int, int, int]], call: str) -> list[int]:
        """The ranks of ``(first, last, stride)`` triples (MPI 4.1 Sec. 7.3.2: ``first``,
        ``first + stride``, ..., ``first + floor((last - first) / stride) * stride``);
        ``ERR_ARG``, as MPICH checks them, for a zero stride, an end outside the group, or
        a stride that leads away from *last* (first > last with a positive stride, first <
        last with a negative one: a negative count of steps)."""
        self._not_null(call)
        n = len(self.members)
        ranks: list[int] = []
        for i, triple in enumerate(ranges):
            first, last, stride = (integral(v) for v in triple)   # 2.0 is 2, as in mpi4py
            if not all(isinstance(v, int) for v in (first, last, stride)):
                raise _error(call, f"ranges[{i}] = {tuple(triple)}: first, last and stride "
                             f"must be integers", ERR_ARG)
            if stride == 0 or not (0 <= first < n and 0 <= last < n):
                raise _error(call, f"ranges[{i}] = {(first, last, stride)}: first and last "
                             f"must be ranks of the group (0..{n - 1}) and stride nonzero",
                             ERR_ARG)
            if (last - first) * stride < 0:
                raise _error(call, f"ranges[{i}] = {(first, last, stride)}: a stride of "
                             f"{stride} does not lead from {first} to {last}", ERR_ARG)
            ranks.extend(range(first, last + (1 if stride > 0 else -1), stride))
        return ranks

    @classmethod
    def Create_from_session_pset(cls, session: Any, pset_name: str) -> Group:
        """The group of process set *pset_name* of *session* (``bsim/mpi/dynamic/sessions.py``)."""
        if type(session).__name__ != "Session":
            raise _error("Create_from_session_pset", f"expected a Session, got "
                         f"{type(session).__name__}", ERR_SESSION)
        return session.Create_group(pset_name)

    def Incl(self, ranks: Sequence[int]) -> Group:
        """The group of the listed ranks, in that order."""
        self._check(ranks, "Incl", distinct=True)
        return Group([self.members[r] for r in ranks])

    def Excl(self, ranks: Sequence[int]) -> Group:
        """The group without the listed ranks."""
        self._check(ranks, "Excl", distinct=True)
        drop = set(ranks)
        return Group([w for i, w in enumerate(self.members) if i not in drop])

    def Range_incl(self, ranges: Sequence[tuple[int, int, int]]) -> Group:
        """Ranks given as ``(first, last, stride)`` triples (inclusive)."""
        ranks = self._ranges(ranges, "Range_incl")
        self._check(ranks, "Range_incl", distinct=True)
        return Group([self.members[r] for r in ranks])

    def Translate_ranks(self, ranks: Sequence[int] | None = None,
                        group: Group | None = None) -> list[int]:
        """Ranks in *group* of the given ranks of this group (``UNDEFINED`` if absent)."""
        if ranks is None:
            ranks = range(len(self.members))
        self._check(ranks, "Translate_ranks", proc_null=True)
        if group is not None:
            group._not_null("Translate_ranks")
        if group is None:
            return [self.members[r] if r != PROC_NULL else PROC_NULL for r in ranks]
        return [group._index.get(self.members[r], UNDEFINED) if r != PROC_NULL else PROC_NULL
                for r in ranks]

    def Range_excl(self, ranges: Sequence[tuple[int, int, int]]) -> Group:
        """The group without the ranks given as ``(first, last, stride)`` triples."""
        ranks = self._ranges(ranges, "Range_excl")
        self._check(ranks, "Range_excl", distinct=True)
        drop = set(ranks)
        return Group([w for i, w in enumerate(self.members) if i not in drop])

    def Compare(self, group: Group) -> int:
        """``IDENT`` (same order), ``SIMILAR`` (same members) or ``UNEQUAL``."""
        self._not_null("Compare")
        group._not_null("Compare")
        if self.members == group.members:
            return IDENT
        if set(self.members) == set(group.members):
            return SIMILAR
        return UNEQUAL

    @classmethod
    def Union(cls, group1: Group, group2: Group) -> Group:
        """Members of *group1*, then those of *group2* not in it."""
        group1._not_null("Union")
        group2._not_null("Union")
        seen = set(group1.members)
        return cls(list(group1.members) + [w for w in group2.members if w not in seen])

    @classmethod
    def Intersection(cls, group1: Group, group2: Group) -> Group:
        """Members of *group1* that are also in *group2*, in *group1*'s order."""
        group1._not_null("Intersection")
        group2._not_null("Intersection")
        other = set(group2.members)
        return cls([w for w in group1.members if w in other])

    @classmethod
    def Difference(cls, group1: Group, group2: Group) -> Group:
        """Members of *group1* not in *group2*."""
        group1._not_null("Difference")
        group2._not_null("Difference")
        other = set(group2.members)
        return cls([w for w in group1.members if w not in other])

    Intersect = Intersection

    def Dup(self) -> Group:
        """A copy of the group."""
        self._not_null("Dup")
        return Group(self.members)

    def Free(self) -> None:
        """Free the group: this object becomes equal to ``GROUP_NULL`` (``GROUP_EMPTY``
        stays itself, as mpi4py keeps its predefined handles)."""
        self._not_null("Free")
        if self is not GROUP_EMPTY:
            self._null, self.members, self._index = True, (), {}

    def free(self) -> None:
        """mpi4py's ``free``: ``Free`` unless null or a predefined constant."""
        if not self._null and self is not GROUP_EMPTY:
            self.Free()

    def __bool__(self) -> bool:
        return not self._null

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Group):
            return NotImplemented
        if self._null or other._null:
            return self._null and other._null
        return self.members == other.members

    def __hash__(self) -> int:
        """mpi4py's handles are unhashable."""
        raise TypeError(f"unhashable type: '{type(self).__name__}'")

    def __reduce__(self) -> Any:
        if self is GROUP_NULL or self is GROUP_EMPTY:
            return "GROUP_NULL" if self is GROUP_NULL else "GROUP_EMPTY"
        if self._null or not self.members:
            return (type(self), (GROUP_NULL if self._null else GROUP_EMPTY,))
        raise ValueError(f"cannot serialize {self!r}: a group is a handle of its process")

    def __repr__(self) -> str:
        return "<Group GROUP_NULL>" if self._null else f"<Group size={len(self.members)}>"


GROUP_EMPTY = Group(())
GROUP_NULL = Group()
