"""Process groups (mpi4py's ``MPI.Group``): ordered sets of world ranks."""

from __future__ import annotations

from collections.abc import Sequence

from ..constants import IDENT, SIMILAR, UNDEFINED, UNEQUAL
from ..engine.rank import current

__all__ = ["Group", "GROUP_EMPTY"]


class Group:
    """An ordered group of world ranks; rank *i* of the group is ``members[i]``."""

    __slots__ = ("members", "_index")

    def __init__(self, members: Sequence[int]) -> None:
        self.members = tuple(members)
        if len(set(self.members)) != len(self.members):
            raise ValueError(f"group has repeated ranks: {list(self.members)}")
        self._index = {w: i for i, w in enumerate(self.members)}

    def Get_size(self) -> int:
        """Number of processes in the group."""
        return len(self.members)

    def Get_rank(self) -> int:
        """Rank of the calling process in the group, or ``UNDEFINED``."""
        return self._index.get(current().rank, UNDEFINED)

    @property
    def size(self) -> int:
        """Number of processes in the group."""
        return len(self.members)

    @property
    def rank(self) -> int:
        """Rank of the calling process in the group, or ``UNDEFINED``."""
        return self.Get_rank()

    def _check(self, ranks: Sequence[int], call: str) -> None:
        for r in ranks:
            if not 0 <= r < len(self.members):
                raise ValueError(f"Group.{call}: rank {r} out of range 0..{len(self.members) - 1}")

    def Incl(self, ranks: Sequence[int]) -> Group:
        """The group of the listed ranks, in that order."""
        self._check(ranks, "Incl")
        return Group([self.members[r] for r in ranks])

    def Excl(self, ranks: Sequence[int]) -> Group:
        """The group without the listed ranks."""
        self._check(ranks, "Excl")
        drop = set(ranks)
        return Group([w for i, w in enumerate(self.members) if i not in drop])

    def Range_incl(self, ranges: Sequence[tuple[int, int, int]]) -> Group:
        """Ranks given as ``(first, last, stride)`` triples (inclusive)."""
        ranks = [r for first, last, stride in ranges
                 for r in range(first, last + (1 if stride > 0 else -1), stride)]
        return self.Incl(ranks)

    def Translate_ranks(self, ranks: Sequence[int] | None = None,
                        group: Group | None = None) -> list[int]:
        """Ranks in *group* of the given ranks of this group (``UNDEFINED`` if absent)."""
        if ranks is None:
            ranks = range(len(self.members))
        self._check(ranks, "Translate_ranks")
        if group is None:
            return [self.members[r] for r in ranks]
        return [group._index.get(self.members[r], UNDEFINED) for r in ranks]

    def Compare(self, group: Group) -> int:
        """``IDENT`` (same order), ``SIMILAR`` (same members) or ``UNEQUAL``."""
        if self.members == group.members:
            return IDENT
        if set(self.members) == set(group.members):
            return SIMILAR
        return UNEQUAL

    @classmethod
    def Union(cls, group1: Group, group2: Group) -> Group:
        """Members of *group1*, then those of *group2* not in it."""
        seen = set(group1.members)
        return cls(list(group1.members) + [w for w in group2.members if w not in seen])

    @classmethod
    def Intersection(cls, group1: Group, group2: Group) -> Group:
        """Members of *group1* that are also in *group2*, in *group1*'s order."""
        other = set(group2.members)
        return cls([w for w in group1.members if w in other])

    @classmethod
    def Difference(cls, group1: Group, group2: Group) -> Group:
        """Members of *group1* not in *group2*."""
        other = set(group2.members)
        return cls([w for w in group1.members if w not in other])

    def Dup(self) -> Group:
        """A copy of the group."""
        return Group(self.members)

    def Free(self) -> None:
        """Free the group (a no-op)."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Group) and self.members == other.members

    def __hash__(self) -> int:
        return hash(self.members)

    def __repr__(self) -> str:
        return f"<Group size={len(self.members)}>"


GROUP_EMPTY = Group(())
