"""Intercommunicators: identity, creation and management (MPI 4.1, Sec. 7.6).

An intercommunicator joins two disjoint groups of world ranks, its two *sides*
(side 0 and side 1, the same order for every member).  For the calling rank, its
own side is the *local* group (``Get_rank``, ``Get_size``, ``Get_group``) and the
other is the *remote* group: point-to-point ``dest``/``source`` are remote ranks,
and a message's status reports the sender's rank in its own (local) group.

The functions are bound as methods of :class:`bsim.mpi.comms.comm.Intercomm`
(``rank_of``, ``size_of``, ``peer_size``, ``world_rank``, ``members``: the shared
identity that :mod:`bsim.mpi.p2p.calls` uses, with ``peer_size``/``world_rank`` on the
remote group) and of :class:`~bsim.mpi.comms.comm.Intracomm` (``Create_intercomm``).
New intercommunicators are made through :meth:`Comm.derive_inter`, so this module
does not import ``comm.py``.

Timing (``docs/collectives.md``, "Intercommunicators"): creating one is priced as
MPICH does it, from messages and collectives already in the model:

* ``Create_intercomm``: the two leaders swap their group (a pickled point-to-point
  message each way on *peer_comm*, with *tag*), then each leader broadcasts what it
  got over its local communicator: ``T = p2p(group) + T_bcast(P_local, group)``;
* ``Dup``, ``Split``, ``Create``, ``Merge``, ``Create_from_groups``: one exchange
  among all members of both groups (:func:`bsim.mpi.collectives.intercomm.exchange`):
  a gather to each local leader, the leaders' swap, a broadcast from each leader.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any, cast

from ...constants import (
    CONGRUENT,
    ERR_ARG,
    ERR_COMM,
    IDENT,
    SIMILAR,
    UNDEFINED,
    UNEQUAL,
    CommKind,
)
from ...engine.rank import VirtualRank, current
from ...errors import MPIUsageError
from ..collectives.intercomm import exchange
from ..common.attributes import copy_attrs
from ..common.errhandlers import inherit_errhandler
from ..common.info import check_info
from .communicators import Compare as intra_compare
from .communicators import c_int
from .groups import Group
from .hints import set_hints

if TYPE_CHECKING:
    from ..comms.comm import Comm, Intercomm

__all__ = ["rank_of", "size_of", "peer_size", "world_rank", "members", "remote_members",
           "Create_intercomm", "create_from_groups", "Get_remote_size", "Get_remote_group",
           "Merge", "Dup", "Split", "Split_type", "Create", "Compare", "Is_inter", "Is_intra"]

_NULL = CommKind.NULL
ERR_RANK = 6   # MPICH's value (bsim/mpi/common/namespace.py)


def _side(ic: Intercomm, vr: VirtualRank) -> int:
    """The calling rank's side of *ic* (errors for COMM_NULL, a non-member, after Free)."""
    if ic.kind == _NULL:
        raise MPIUsageError(f"rank {vr.rank}: operation on the null intercommunicator",
                            error_class=ERR_COMM)
    if ic.freed_by and vr.rank in ic.freed_by:
        raise MPIUsageError(f"rank {vr.rank}: operation on {ic!r} after its Free()",
                            error_class=ERR_COMM)   # a null handle now, in mpi4py
    try:
        return ic.side_of[vr.rank]
    except KeyError:
        raise MPIUsageError(f"rank {vr.rank} is not a member of {ic!r}") from None


def rank_of(ic: Intercomm, vr: VirtualRank) -> int:
    """The rank of *vr* in its local group."""
    _side(ic, vr)
    return ic._index[vr.rank]


def size_of(ic: Intercomm, vr: VirtualRank) -> int:
    """The size of the local group of *vr*."""
    side = _side(ic, vr)
    return len(ic.sides[side])


def coll_identity(ic: Intercomm, vr: VirtualRank) -> tuple[Any, int, int]:
    """``(collective context, rank, size)`` of *vr*'s local group (``Comm.coll_identity``)."""
    side = _side(ic, vr)
    return ic.coll_context(vr), ic._index[vr.rank], len(ic.sides[side])


def peer_size(ic: Intercomm, vr: VirtualRank) -> int:
    """The size of the remote group: the valid point-to-point ranks."""
    side = _side(ic, vr)
    return len(ic.sides[1 - side])


def world_rank(ic: Intercomm, crank: int, vr: VirtualRank) -> int:
    """World rank of rank *crank* of the remote group (point-to-point's peer)."""
    return ic.sides[1 - ic.side_of[vr.rank]][crank]


def members(ic: Intercomm, vr: VirtualRank) -> tuple[int, ...]:
    """World ranks of the local group, in rank order."""
    side = _side(ic, vr)
    return ic.sides[side]


def remote_members(ic: Intercomm, vr: VirtualRank) -> tuple[int, ...]:
    """World ranks of the remote group, in rank order."""
    side = _side(ic, vr)
    return ic.sides[1 - side]


def Is_inter(ic: Comm) -> bool:
    """True (``ERR_COMM`` on the null intercommunicator)."""
    ic._not_null("Is_inter")
    return True


def Is_intra(ic: Comm) -> bool:
    """False (``ERR_COMM`` on the null intercommunicator)."""
    ic._not_null("Is_intra")
    return False


def Get_remote_size(ic: Intercomm) -> int:
    """The size of the remote group."""
    return peer_size(ic, current())


def Get_remote_group(ic: Intercomm) -> Group:
    """The remote group."""
    return Group(remote_members(ic, current()))


def _int(vr: VirtualRank, value: Any, call: str, what: str) -> int:
    """*value* as a C int: ``OverflowError`` outside its range, as mpi4py converts it."""
    try:
        value = operator.index(value)
    except TypeError:
        raise MPIUsageError(f"rank {vr.rank}: {call}: {what} must be an int, got "
                            f"{value!r}") from None
    return c_int(value, f"{call}: {what}")


def Create_intercomm(local: Comm, local_leader: int, peer_comm: Comm, remote_leader: int,
                     tag: int = 0) -> Intercomm:
    """The intercommunicator between *local*'s group and the group whose leader is rank
    *remote_leader* of *peer_comm* (collective over both groups; MPI 4.1, Sec. 7.6.2).

    Only the leaders use *peer_comm*: they swap their groups there with *tag*."""
    vr = current()
    call = "Create_intercomm"
    size = local.size_of(vr)
    me = local.rank_of(vr)
    local_leader = _int(vr, local_leader, call, "local_leader")
    if not 0 <= local_leader < size:
        raise MPIUsageError(f"rank {vr.rank}: {call}(local_leader={local_leader}): not a "
                            f"rank of {local!r} (valid: 0..{size - 1})", error_class=ERR_RANK)
    seq = (vr.coll_seq or {}).get(local.coll_context(vr), 0)
    mine = (local.members(vr), (repr(local.coll_context(vr)), seq))
    theirs = None
    if me == local_leader:
        remote_leader = _int(vr, remote_leader, call, "remote_leader")
        psize = peer_comm.peer_size(vr)
        if not 0 <= remote_leader < psize:
            raise MPIUsageError(f"rank {vr.rank}: {call}(remote_leader={remote_leader}): not "
                                f"a rank of {peer_comm!r} (valid: 0..{psize - 1})",
                                error_class=ERR_RANK)
        if not peer_comm.Is_inter() and remote_leader == peer_comm.rank_of(vr):
            raise MPIUsageError(f"rank {vr.rank}: {call}(remote_leader={remote_leader}): "
                                f"the remote leader is the calling process (a rank of the "
                                f"local group)", error_class=ERR_RANK)   # as MPICH
        theirs = peer_comm.sendrecv(mine, remote_leader, tag, None, remote_leader, tag)
    theirs = local.bcast(theirs, root=local_leader)
    remote_group = tuple(theirs[0])
    overlap = set(remote_group) & set(mine[0])
    if overlap:
        raise MPIUsageError(f"rank {vr.rank}: {call}: the local and remote groups overlap "
                            f"(world ranks {sorted(overlap)})", error_class=ERR_COMM)
    pair = sorted([mine, (remote_group, theirs[1])], key=lambda g: min(g[0]))
    ctx = ("inter", pair[0][1], pair[1][1])
    return local.derive_inter(vr, ctx, (pair[0][0], pair[1][0]), "Intercomm")


def create_from_groups(world: Comm, local_group: Group, local_leader: int,
                       remote_group: Group, remote_leader: int, stringtag: str,
                       info: Any, errhandler: Any) -> Intercomm:
    """:func:`Create_from_groups`, with *world* to derive from (``comm.py`` passes it)."""
    vr = current()
    call = "Create_from_groups"
    if info is not None:
        check_info(info, call)
    if not isinstance(stringtag, str):
        raise TypeError(f"{call}: stringtag must be a str, got {type(stringtag).__name__}")
    mine, theirs = tuple(local_group.members), tuple(remote_group.members)
    if vr.rank not in mine:
        raise MPIUsageError(f"rank {vr.rank}: {call}: the caller is not in the local group")
    for leader, grp, what in ((local_leader, mine, "local"), (remote_leader, theirs, "remote")):
        if not 0 <= _int(vr, leader, call, f"{what}_leader") < len(grp):
            raise MPIUsageError(f"rank {vr.rank}: {call}: {what}_leader={leader!r} is not a "
                                f"rank of the {what} group (size {len(grp)})",
                                error_class=ERR_RANK)
    if set(mine) & set(theirs):
        raise MPIUsageError(f"rank {vr.rank}: {call}: the groups overlap", error_class=ERR_ARG)
    sides = tuple(sorted((mine, theirs), key=min))   # side 0 holds the lowest world rank
    scratch = world.derive_inter(vr, ("cfgroups", stringtag, sides), sides, call)
    new = _same_groups(scratch, vr, "cfg", call)
    if errhandler is not None:
        new.Set_errhandler(errhandler)
    return new


def _exchanged(ic: Intercomm, vr: VirtualRank, value: Any, what: str, call: str
               ) -> tuple[list[Any], list[Any], Any]:
    """One creation exchange on *ic*: ``(local values, remote values, context)``; the
    context names this call on *ic*."""
    _side(ic, vr)   # ERR_COMM on the null intercommunicator, a non-member, after Free
    seqs = vr.coll_seq
    if seqs is None:
        seqs = vr.coll_seq = {}
    key = (ic.context, "create")
    seq = seqs.get(key, 0)
    seqs[key] = seq + 1
    mine, theirs = exchange(ic, vr, value, call)
    return mine, theirs, (what, ic.context, seq)


def _same_groups(ic: Intercomm, vr: VirtualRank, what: str, call: str) -> Intercomm:
    """A new intercommunicator of *ic*'s groups (one creation exchange)."""
    base = _exchanged(ic, vr, None, what, call)[2]
    return ic.derive_inter(vr, base, ic.sides, f"{ic.label}.{call}")


def Dup(ic: Intercomm, info: Any = None) -> Intercomm:
    """Duplicate: same groups, new context (collective over both groups); the hints of
    *info* (MPI 4.1 Sec. 7.4.2, ``hints.py``), none without it."""
    ic._not_null("Dup")
    vr = current()
    if info is not None:
        check_info(info, "Dup")
    new = _same_groups(ic, vr, "idup", "Dup")
    copy_attrs(ic, new)
    inherit_errhandler(ic, new)
    if info is not None:
        set_hints(new, info, "Dup")
    if not type(ic).__module__.startswith("bsim."):
        return type(ic)(new)   # a subclass (pkl5) stays one
    return new


def Split(ic: Intercomm, color: int = 0, key: int = 0) -> Intercomm | Comm:
    """Split both groups by *color* (ordered by *key*, then old rank); a part whose
    color has no member in the other group gets ``COMM_NULL`` (MPI 4.1, Sec. 7.6.2)."""
    ic._not_null("Split")
    vr = current()
    color = _int(vr, color, "Split", "color")
    key = _int(vr, key, "Split", "key")
    if color < 0 and color != UNDEFINED:
        raise MPIUsageError(f"rank {vr.rank}: Split(color={color!r}): color must be an "
                            f"int >= 0 or UNDEFINED")
    mine, theirs, base = _exchanged(ic, vr, (color, key), "isplit", "Split")
    if color == UNDEFINED:
        return ic.derive(vr, None, None, "")
    side = ic.side_of[vr.rank]

    def part(values: list[Any], group: tuple[int, ...]) -> tuple[int, ...]:
        chosen = sorted((k, r) for r, (c, k) in enumerate(values) if c == color)
        return tuple(group[r] for _, r in chosen)

    local, remote = part(mine, ic.sides[side]), part(theirs, ic.sides[1 - side])
    if not remote:
        return ic.derive(vr, None, None, "")
    sides = (local, remote) if side == 0 else (remote, local)
    return ic.derive_inter(vr, (base, color), sides, f"{ic.label}.Split({color})")


def Split_type(ic: Intercomm, split_type: int, key: int = 0, info: Any = None) -> Any:
    """Split by hardware: ``COMM_TYPE_SHARED`` by simulated node, else ``COMM_NULL``."""
    vr = current()
    if info is not None:
        check_info(info, "Split_type")
    if split_type == UNDEFINED:
        return Split(ic, UNDEFINED, key)
    node_of = getattr(vr.engine.network, "node_of", None)
    node = int(node_of(vr.rank)) if node_of is not None else vr.rank
    return Split(ic, node if split_type == 1 else UNDEFINED, key)


def Create(ic: Intercomm, group: Group) -> Any:
    """The intercommunicator of each side's *group* (a subgroup of the local group);
    ``COMM_NULL`` for a rank outside its side's group (MPI 4.1, Sec. 7.4.2)."""
    vr = current()
    local = tuple(group.members)
    if not set(local) <= set(members(ic, vr)):
        raise MPIUsageError(f"rank {vr.rank}: Create: the group is not a subgroup of the "
                            f"local group of {ic!r}", error_class=ERR_ARG)
    _, theirs, base = _exchanged(ic, vr, local, "icreate", "Create")
    remote = tuple(theirs[0]) if theirs else ()
    if vr.rank not in local or not remote:
        return ic.derive(vr, None, None, "")
    sides = (local, remote) if ic.side_of[vr.rank] == 0 else (remote, local)
    return ic.derive_inter(vr, base, sides, f"{ic.label}.Create")


def Merge(ic: Intercomm, high: bool = False) -> Comm:
    """The intracommunicator of both groups: the group that passed ``high=False`` first
    (both the same: side 0 first), each in its rank order (collective over both)."""
    ic._not_null("Merge")
    vr = current()
    mine, theirs, base = _exchanged(ic, vr, bool(high), "merge", "Merge")
    side = ic.side_of[vr.rank]
    local, remote = ic.sides[side], ic.sides[1 - side]
    mine_high, theirs_high = mine[0], theirs[0]
    if mine_high == theirs_high:
        first = side == 0
    else:
        first = not mine_high
    group = local + remote if first else remote + local
    return ic.derive(vr, base, group, f"{ic.label}.Merge")


def Compare(this: Comm, comm: Comm) -> int:
    """``IDENT``, ``CONGRUENT``, ``SIMILAR`` or ``UNEQUAL``; an intercommunicator and an
    intracommunicator are ``UNEQUAL``; two intercommunicators compare both groups."""
    vr = current()
    this._not_null("Compare")
    comm._not_null("Compare")
    a, b = getattr(this, "side_of", None), getattr(comm, "side_of", None)
    if a is None and b is None:
        return intra_compare(this, comm)
    if comm is this or comm._handle is this._handle:
        return IDENT
    if a is None or b is None:
        return UNEQUAL
    local = intra_compare(this, comm)   # by the local groups
    ra = remote_members(cast("Intercomm", this), vr)
    rb = remote_members(cast("Intercomm", comm), vr)
    remote = CONGRUENT if ra == rb else (SIMILAR if set(ra) == set(rb) else UNEQUAL)
    return max(local, remote)

