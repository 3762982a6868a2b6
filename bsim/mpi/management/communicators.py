"""Communicator management: Dup, Split, Split_type, Create, Create_group, Compare, Abort.

Creating a communicator is a collective on the parent (all-to-all dependency
rule) priced as MPICH implements it: ``Dup``/``Create`` as an allreduce of one
8-byte context id, ``Split`` as an allgather of the (color, key) pairs.  The
new communicator object is shared by its members; its context is derived
from the parent's context and the call's sequence number, so it is the same
in every run and on every partition.  The functions are bound as methods of
:class:`bsim.mpi.comms.comm.Comm`.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any, cast

from ...constants import (
    COMM_TYPE_SHARED,
    CONGRUENT,
    ERR_ARG,
    ERR_COMM,
    ERR_TAG,
    IDENT,
    SIMILAR,
    TAG_UB,
    UNDEFINED,
    UNEQUAL,
    CommKind,
)
from ...engine.collective_rules import ALL, CollInstance, arrive, finalize
from ...engine.rank import VirtualRank, current
from ...errors import MPIUsageError, SimulationError
from ..common.attributes import copy_attrs, drop_attrs
from ..common.errhandlers import inherit_errhandler
from ..common.info import Info, check_info
from ..common.integers import integral
from ..requests.request import SEND, Request, hand_out
from .groups import Group
from .hints import get_info, set_hints

if TYPE_CHECKING:
    from ..comms.comm import Comm, Intracomm

__all__ = ["Get_group", "Dup", "Clone", "Split", "Split_type", "Create", "Create_group",
           "Create_from_group", "Idup", "Idup_with_info", "Dup_with_info", "Get_info",
           "Set_info",
           "Compare", "Free", "Abort", "Get_topology"]


def _collective_create(comm: Comm, vr: VirtualRank, call: str, value: Any, cost_op: str,
                       nbytes: int, extra: tuple[Any, ...] = ()
                       ) -> tuple[CollInstance, int, int]:
    """Arrive at the creating collective on *comm*; ``(instance, my rank, sequence)``."""
    seq = (vr.coll_seq or {}).get(comm.coll_context(vr), 0)
    inst, me, req = arrive(vr, comm, call, ALL, -1, nbytes, value, extra, cost_op=cost_op)
    if req is not None:
        vr.settle([req], call)
    return inst, me, seq


def Get_group(comm: Comm) -> Group:
    """The group of the communicator."""
    return Group(comm.members(current()))


def Dup(comm: Comm, info: Any = None) -> Intracomm:
    """Duplicate: same group, new context (collective; MPI 4.1 Sec. 7.4.2); the hints of
    *info* (``hints.py``), none without it."""
    vr = current()
    inst, me, seq = _collective_create(comm, vr, "Dup", None, "allreduce", 8)
    ctx = ("dup", comm.coll_context(vr), seq)
    name = f"{comm.label}.Dup"
    copy_topology = getattr(comm, "derive_copy", None)   # a topology keeps it (MPI 4.1, 7.4.2)
    new = (copy_topology(vr, ctx, name) if copy_topology is not None
           else comm.derive(vr, ctx, comm.members(vr), name))
    finalize(vr, comm, inst)
    copy_attrs(comm, new)
    inherit_errhandler(comm, new)
    if info is not None:
        set_hints(new, info, "Dup")
    if not type(comm).__module__.startswith("bsim."):
        return cast("Intracomm", type(comm)(new))   # a subclass (pkl5.Intracomm) stays one
    return new


def Dup_with_info(comm: Comm, info: Info) -> Intracomm:
    """Duplicate with the hints of *info* (MPI 4.1 Sec. 7.4.2; kept as MPICH keeps them,
    ``hints.py``; they change no simulated time)."""
    check_info(info, "Dup_with_info")
    return Dup(comm, info)


def Get_info(comm: Comm) -> Info:
    """The hints in use: a new info with MPICH's communicator hints (MPI 4.1 Sec. 7.4.4,
    ``hints.py``; the caller frees it)."""
    return get_info(comm)


def Set_info(comm: Comm, info: Info) -> None:
    """Set the hints of *info* that MPICH knows (MPI 4.1 Sec. 7.4.4, ``hints.py``;
    they change no simulated time)."""
    set_hints(comm, info, "Set_info")


def Clone(comm: Comm) -> Intracomm:
    """Same as Dup."""
    return Dup(comm)


def c_int(value: int, what: str) -> int:
    """*value* if a C ``int`` holds it; else ``OverflowError``, as mpi4py raises it when
    it converts an argument (e.g. ``Split(0, 2**31)``)."""
    if not -2**31 <= value < 2**31:
        raise OverflowError(f"{what}: value {value} too large to convert to a C int")
    return value


def Split(comm: Comm, color: int = 0, key: int = 0) -> Intracomm:
    """Split by *color*, ordering each part by (*key*, old rank) (collective)."""
    vr = current()
    try:   # numpy integers are ints here, as in mpi4py
        color, key = operator.index(integral(color)), operator.index(integral(key))
    except TypeError:
        raise MPIUsageError(f"rank {vr.rank}: Split(color={color!r}, key={key!r}): color and "
                            f"key must be integers") from None
    c_int(color, "Split: color"), c_int(key, "Split: key")   # OverflowError, as mpi4py
    if color < 0 and color != UNDEFINED:
        raise MPIUsageError(f"rank {vr.rank}: Split(color={color!r}): color must be an "
                            f"int >= 0 or UNDEFINED")
    size = comm.size_of(vr)
    inst, me, seq = _collective_create(comm, vr, "Split", (color, key), "allgather", 8 * size)
    if color == UNDEFINED:
        finalize(vr, comm, inst)
        return comm.derive(vr, None, None, "")   # COMM_NULL
    if inst.result is None:   # computed once per instance: color -> ordered members
        members = comm.members(vr)
        parts: dict[int, list[tuple[int, int]]] = {}
        for r, (c, k) in enumerate(inst.values):
            parts.setdefault(c, []).append((k, r))
        inst.result = {c: tuple(members[r] for _, r in sorted(v)) for c, v in parts.items()}
    group = inst.result[color]
    ctx = ("split", comm.coll_context(vr), seq, color)
    new = comm.derive(vr, ctx, group, f"{comm.label}.Split({color})")
    finalize(vr, comm, inst)
    return new


HW_RESOURCE = "mpi_hw_resource_type"   # the info key of the guided splits (MPI 4.1, 7.4.2)
SHARED_MEMORY = "mpi_shared_memory"    # its value for a simulated node
SPLIT_TYPES = {"shared": 1, "hw_guided": 2, "hw_unguided": 3, "resource_guided": 4}


def Split_type(comm: Comm, split_type: int, key: int = 0, info: Any = None) -> Intracomm:
    """Split by hardware (MPI 4.1 Sec. 7.4.2); bsim's hardware is nodes of cores.

    ``COMM_TYPE_SHARED``: one communicator per simulated node.  ``COMM_TYPE_HW_GUIDED``
    and ``COMM_TYPE_RESOURCE_GUIDED``: by the resource the info's ``mpi_hw_resource_type``
    names (``mpi_shared_memory``: the node; no key or another value: ``COMM_NULL``).
    ``COMM_TYPE_HW_UNGUIDED``: the next level down that splits *comm* into smaller
    communicators (nodes, then single cores; ``COMM_NULL`` for one process), named in
    *info* (``mpi_shared_memory``, ``core``).
    """
    vr = current()
    if info is not None:
        check_info(info, "Split_type")
    if split_type == UNDEFINED:
        return Split(comm, UNDEFINED, key)
    node_of = getattr(vr.engine.network, "node_of", None)

    def node(world: int) -> int:
        return int(node_of(world)) if node_of is not None else world

    if split_type == COMM_TYPE_SHARED:
        return Split(comm, node(vr.rank), key)
    wanted = info.Get(HW_RESOURCE) if info else None
    if split_type in (SPLIT_TYPES["hw_guided"], SPLIT_TYPES["resource_guided"]):
        return Split(comm, node(vr.rank) if wanted == SHARED_MEMORY else UNDEFINED, key)
    if split_type == SPLIT_TYPES["hw_unguided"]:
        members = comm.members(vr)
        if len({node(w) for w in members}) > 1:
            level, color = SHARED_MEMORY, node(vr.rank)
        elif len(members) > 1:
            level, color = "core", vr.rank
        else:
            level, color = "", UNDEFINED
        new = Split(comm, color, key)
        if new and info:
            info.Set(HW_RESOURCE, level)
        return new
    raise MPIUsageError(f"rank {vr.rank}: Split_type({split_type!r}): not a split type "
                        f"(COMM_TYPE_SHARED, _HW_GUIDED, _HW_UNGUIDED, _RESOURCE_GUIDED)",
                        error_class=ERR_ARG)


def Create(comm: Comm, group: Group) -> Intracomm:
    """A communicator of *group*'s members (collective over this communicator).  As
    since MPI 2.2, ranks may pass different (disjoint) groups: each gets its group's."""
    vr = current()
    inst, me, seq = _collective_create(comm, vr, "Create", None, "allreduce", 8)
    ctx = ("create", comm.coll_context(vr), seq, group.members)
    finalize(vr, comm, inst)
    if group.Get_rank() == UNDEFINED:   # the caller is not in the group
        return comm.derive(vr, None, None, "")   # COMM_NULL
    return comm.derive(vr, ctx, group.members, f"{comm.label}.Create")


def Create_group(comm: Comm, group: Group, tag: int = 0) -> Intracomm:
    """A communicator of *group*, collective over the group's members only (MPI 4.1 Sec.
    7.4.2, ``MPI_COMM_CREATE_GROUP``): for a caller outside *group* (``GROUP_EMPTY``, say)
    "the call is a local operation and ``MPI_COMM_NULL`` is returned", as MPICH returns it;
    a *tag* outside ``0..TAG_UB`` is ``ERR_TAG``, as MPICH checks it."""
    vr = current()
    comm._not_null("Create_group")
    tag = operator.index(tag)   # mpi4py: a TypeError for a non-integer tag
    if not 0 <= tag <= TAG_UB:
        raise MPIUsageError(f"rank {vr.rank}: Create_group(tag={tag}): invalid tag (valid: "
                            f"0..{TAG_UB})", error_class=ERR_TAG)
    if group.Get_rank() == UNDEFINED:
        return comm.derive(vr, None, None, "")   # COMM_NULL
    return _from_group(comm, vr, group, ("cgroup", comm.coll_context(vr), group.members, tag),
                       "Create_group")


def _from_group(comm: Comm, vr: VirtualRank, group: Group, base: Any, call: str) -> Intracomm:
    """The communicator of *group* made by its members only: an allreduce among them
    over a scratch context named *base* (the same for every member), then a new one."""
    if group.Get_rank() == UNDEFINED:
        raise MPIUsageError(f"rank {vr.rank}: {call}: the caller is not in the group")
    scratch = comm.derive(vr, base, group.members, call)   # the group's collective
    inst, me, seq = _collective_create(scratch, vr, call, None, "allreduce", 8)
    new = comm.derive(vr, ("cg", base, seq), group.members, f"{comm.label}.{call}")
    finalize(vr, scratch, inst)
    return new


def Create_from_group(world: Comm, group: Group, stringtag: str = "org.mpi4py",
                      info: Info | None = None, errhandler: Any = None) -> Intracomm:
    """MPI 4's ``MPI_Comm_create_from_group``: a communicator of *group* with no parent,
    collective over the group's members, told apart by *stringtag* (as ``Create_group``
    of *world*, ``COMM_WORLD``, with the tag in the context)."""
    if info is not None:
        check_info(info, "Create_from_group")
    if not isinstance(stringtag, str):
        raise TypeError(f"Create_from_group: stringtag must be a str, got "
                        f"{type(stringtag).__name__}")
    vr = current()
    new = _from_group(world, vr, group, ("cfgroup", stringtag, group.members),
                      "Create_from_group")
    if errhandler is not None:
        new.Set_errhandler(errhandler)
    return new


def Idup(comm: Comm, info: Info | None = None) -> tuple[Intracomm, Request]:
    """Nonblocking duplicate: ``(new communicator, request)``.  The duplicate is made at
    the call (its collective cost charged there) and the request is complete."""
    vr = current()
    if info is not None:
        check_info(info, "Idup")
    new = Dup(comm, info)
    req = Request(vr, SEND, "Idup")
    req.resolve(vr.clock, 0.0, vr.clock)
    return new, hand_out(req)


def Idup_with_info(comm: Comm, info: Info) -> tuple[Intracomm, Request]:
    """:func:`Idup` with the hints of *info* (MPI 4.1 Sec. 7.4.2, ``hints.py``)."""
    check_info(info, "Idup_with_info")
    return Idup(comm, info)


def Compare(this: Comm, comm: Comm) -> int:
    """``IDENT``, ``CONGRUENT``, ``SIMILAR`` or ``UNEQUAL``."""
    vr = current()
    this._not_null("Compare")
    comm._not_null("Compare")
    if comm is this or comm._handle is this._handle:
        return IDENT
    a, b = this.members(vr), comm.members(vr)
    if a == b:
        return CONGRUENT
    if set(a) == set(b):
        return SIMILAR
    return UNEQUAL


def Free(comm: Comm) -> None:
    """Release the calling rank's handle: its later use by that rank is an error.

    Freeing ``COMM_WORLD``, ``COMM_SELF`` or ``COMM_NULL`` is erroneous (MPI 4.0, 7.4.3).
    """
    vr = current()
    if comm.kind != CommKind.GROUP:
        raise MPIUsageError(f"rank {vr.rank}: {comm!r}.Free(): predefined communicators "
                            f"cannot be freed", error_class=ERR_COMM)
    comm.rank_of(vr)   # a member, and not freed twice
    drop_attrs(comm)
    comm.freed_by.add(vr.rank)


def Abort(comm: Comm, errorcode: int = 0) -> None:
    """Abort the whole simulation."""
    from ...engine.failures import called_from
    raise SimulationError(f"rank {current().rank} called Abort({errorcode}) at "
                          f"{called_from()[1]}")


def Get_topology(comm: Comm) -> int:
    """``UNDEFINED`` for a plain intracommunicator."""
    comm._not_null("Get_topology")
    return UNDEFINED
