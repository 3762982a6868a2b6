# cython: annotation_typing=False
"""Communicators (mpi4py's ``Comm``, ``Intracomm``, ``Topocomm`` and its ``Cartcomm``,
``Graphcomm``, ``Distgraphcomm``) and the predefined ones.

A communicator object is shared by all its member ranks: each call looks up
the calling virtual rank (``rank.current()``) and acts for it, so
``MPI.COMM_WORLD`` is one object that means "the world of whoever calls".
Point-to-point messages use the communicator's context id; collectives
(``bsim.engine.collective_rules``) use ``coll_ctx``, so the two never match.

The classes hold identity only.  Their MPI methods are the functions of one
module per concern, bound as methods (``Comm.Isend = p2p.Isend``), the way
mpi4py's ``pkl5`` communicator delegates: the point-to-point, collective and
management ones through the :class:`~bsim.mpi.comms.methods.CommCalls` and
:class:`~bsim.mpi.comms.methods.CommManagement` mixins (those of intracommunicators only, as
mpi4py places them, through :class:`~bsim.mpi.comms.methods.IntracommCalls`), the others here
from :mod:`~bsim.mpi.topologies.cartesian`, :mod:`~bsim.mpi.topologies.graphs` and (the
neighbourhood collectives) :mod:`~bsim.mpi.topologies.neighbor_buffers`.
Those modules make new communicators through :meth:`Comm.derive` and
:meth:`Comm.derive_topo`, so none of them imports this one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from ...constants import CART, DIST_GRAPH, ERR_COMM, GRAPH, SELF_CONTEXT, WORLD_CONTEXT
from ...constants import CommKind as Kind
from ...engine.rank import VirtualRank, current, current_or_none
from ...errors import MPIUsageError
from ..collectives import intercomm as inter
from ..collectives import intercomm_buffers as inter_buffers
from ..common import attributes, errhandlers
from ..common.handles import HandleValues
from ..dynamic import connect as dynamic
from ..dynamic import spawn
from ..management import communicators as management
from ..management import intercomm
from ..p2p import fast_path
from ..topologies import cartesian
from ..topologies import graphs as topologies
from ..topologies.neighbor_buffers import NeighborCalls
from . import fault_tolerance
from .comm_identity import CommIdentity
from .methods import CommCalls, CommManagement, IntracommCalls
from .python_api import PICKLED_BY_NAME, CommPythonAPI

if TYPE_CHECKING:
    from ..management.groups import Group

__all__ = ["Comm", "Intracomm", "Intercomm", "Topocomm", "Cartcomm", "Graphcomm",
           "Distgraphcomm", "COMM_WORLD", "COMM_SELF", "COMM_NULL"]

# hot path: the kinds as module globals (an Enum attribute lookup costs several times a global's)
_WORLD, _SELF, _GROUP, _NULL = Kind.WORLD, Kind.SELF, Kind.GROUP, Kind.NULL


class Comm(CommIdentity, CommPythonAPI, CommCalls, CommManagement, attributes.CommAttributes,
           fault_tolerance.FaultTolerance, HandleValues):
    """A communicator: a context id and an ordered group of world ranks.

    ``Comm`` objects are created by bsim (``COMM_WORLD``, ``COMM_SELF`` and by
    ``Dup``/``Split``/``Create_cart``); programs do not build them directly.

    Methods that act for the calling rank raise :class:`~bsim.errors.MPIUsageError`
    on ``COMM_NULL``, for a rank that is not a member, and after that rank's ``Free``.

    Shared with the engine (not mpi4py API), used by ``bsim.engine`` (matching,
    collective rules, distributed runs) and by the modules whose functions are
    bound here (the fields and the per-rank queries are :class:`CommIdentity`'s):

    * ``context``: the point-to-point context id (an int or a tuple);
    * ``coll_ctx``: the collectives' context id (``coll_context`` is the one to use);
    * ``kind``: a :class:`~bsim.constants.CommKind`;
    * ``freed_by``: world ranks that freed their handle;
    * for a virtual rank *vr*: ``rank_of(vr)`` (its rank here), ``size_of(vr)``,
      ``world_rank(crank, vr)`` (world rank of rank *crank* here),
      ``members(vr)`` (world ranks in rank order), ``coll_context(vr)``
      (the collectives' context; one per rank for ``COMM_SELF``);
    * :meth:`derive` and :meth:`derive_cart`: new communicators, shared by their members.
    """

    __slots__ = ("_name", "_handle", "__weakref__")   # and CommIdentity's fields
    _handle_kind = "Comm"

    def _handle_identity(self) -> object | None:
        """What copies of this communicator share (None where it is null)."""
        return None if self._null_here() else self._handle

    def __new__(cls, *args: Any, **kwargs: Any) -> Comm:
        """mpi4py's ``Comm(comm)`` / ``Comm()``: another object for the same handle (or a
        null one), made here as mpi4py makes it in ``__new__``: a subclass's ``__new__``
        may pass another communicator (its clone) than the one ``__init__`` then gets."""
        self = super().__new__(cls)
        if len(args) < 2 and "kind" not in kwargs:
            other = args[0] if args else kwargs.get("comm", kwargs.get("ctx"))
            if other is not None and not isinstance(other, Comm):
                raise TypeError(f"{cls.__name__}(): expected a communicator, got "
                                f"{type(other).__name__}")
            if other is not None and other.kind != _NULL and (
                    issubclass(cls, Intercomm) != isinstance(other, Intercomm)
                    and issubclass(cls, (Intercomm, Intracomm))):
                raise TypeError(f"{cls.__name__}(): expected an {cls.__name__[:5]}communicator,"
                                f" got {type(other).__name__}")
            self._copy_from(other if other is not None else COMM_NULL)
        return self

    def __init__(self, ctx: Any = None, kind: Kind | None = None,
                 group: tuple[int, ...] | None = None, name: str = "") -> None:
        if kind is None:
            return   # a copy of a handle, made by __new__
        self._handle: object = self   # copies share it: equality and hashing follow it
        self.context = ctx
        self.coll_ctx = ctx + 1 if isinstance(ctx, int) else (ctx, "c")   # collectives' context
        self.kind = Kind(kind)   # the member itself: the per-rank methods compare with `is`
        self._group = group if group is not None else ()
        self._index = {w: i for i, w in enumerate(group)} if group is not None else {}
        self._name = name
        self.freed_by: set[int] = set()   # world ranks that called Free on this handle

    def _copy_from(self, other: Comm) -> None:
        if not isinstance(other, Comm):
            raise TypeError(f"expected a communicator, got {type(other).__name__}")
        for cls in type(other).__mro__:
            for slot in getattr(cls, "__slots__", ()):
                if slot != "__weakref__" and hasattr(other, slot):
                    try:
                        setattr(self, slot, getattr(other, slot))
                    except AttributeError:   # a slot this class does not have
                        pass

    # -- identity: rank_of, size_of, world_rank, coll_context, coll_identity, members
    # are CommIdentity's (compiled, C methods)
    group_p2p, peer_size = True, CommIdentity.size_of   # p2p ranks index _group; valid ones

    def derive(self, vr: VirtualRank, ctx: Any, members: tuple[int, ...] | None,
               name: str) -> Intracomm:
        """The communicator of context *ctx* over world ranks *members*, shared by them.

        Created by the first member that asks (later ones get the same object
        from ``engine.comms``); ``members=None`` gives ``COMM_NULL``.
        """
        if members is None:
            return COMM_NULL
        comm: Intracomm | None = vr.engine.comms.get(ctx)
        if comm is None:
            comm = vr.engine.comms[ctx] = Intracomm(ctx, Kind.GROUP, members, name=name)
        return comm

    def derive_inter(self, vr: VirtualRank, ctx: Any, sides: tuple[tuple[int, ...], ...],
                     name: str) -> Intercomm:
        """The intercommunicator of context *ctx* between the two groups *sides* (world
        ranks), shared by its members, with a hidden intracommunicator per side."""
        ic: Intercomm | None = vr.engine.comms.get(ctx)
        if ic is None:
            ic = vr.engine.comms[ctx] = Intercomm(ctx, Kind.GROUP, sides[0] + sides[1], name)
            ic.sides = (tuple(sides[0]), tuple(sides[1]))
            ic.side_of = {w: s for s, side in enumerate(sides) for w in side}
            ic._index = {w: i for side in sides for i, w in enumerate(side)}
            ic.local_comms = tuple(Intracomm((ctx, "local", s), Kind.GROUP, tuple(side),
                                             name=f"{name}.local{s}")
                                   for s, side in enumerate(sides))
        return ic

    def derive_cart(self, vr: VirtualRank, ctx: Any, members: tuple[int, ...], name: str,
                    dims: list[int], periods: list[bool]) -> Cartcomm:
        """:meth:`derive` for a :class:`Cartcomm` of grid *dims* and *periods*."""
        def setup(cart: Any) -> None:
            cart.cart_dims = tuple(dims)
            cart.cart_periods = tuple(bool(p) for p in periods)
        return cast("Cartcomm", self.derive_topo(vr, ctx, members, name, CART, setup))

    def derive_topo(self, vr: VirtualRank, ctx: Any, members: tuple[int, ...], name: str,
                    topology: int, setup: Callable[[Any], None]) -> Topocomm:
        """:meth:`derive` for a topology communicator (``CART``, ``GRAPH``,
        ``DIST_GRAPH``); *setup* gives the new object its shared attributes, once."""
        comm: Topocomm | None = vr.engine.comms.get(ctx)
        if comm is None:
            new = _TOPOLOGIES[topology](ctx, Kind.GROUP, members, name=name)
            setup(new)
            vr.engine.comms[ctx] = comm = new
        return comm

    def Get_rank(self) -> int:
        """Rank of the calling process in the communicator."""
        return self.rank_of(current())

    def Get_size(self) -> int:
        """Number of processes in the communicator."""
        return self.size_of(current())

    @property
    def rank(self) -> int:
        """Rank of the calling process in the communicator."""
        return self.rank_of(current())

    @property
    def size(self) -> int:
        """Number of processes in the communicator."""
        return self.size_of(current())

    @classmethod
    def Get_parent(cls) -> Intercomm:
        """The intercommunicator with the group that spawned the calling rank
        (``spawn.py``); a null one for the run's own ranks."""
        return spawn.parent_of(current_or_none()) or Intercomm()
    @classmethod
    def Join(cls, fd: int) -> Intercomm:
        """The intercommunicator with the rank at the other end of socket *fd*
        (``bsim/mpi/dynamic/connect.py``)."""
        return dynamic.Join(COMM_SELF, fd)

    Disconnect = dynamic.Disconnect

    def _not_null(self, call: str) -> None:
        """``ERR_COMM`` for a call on ``COMM_NULL``."""
        if self.kind == _NULL:
            vr = current_or_none()
            who = f"rank {vr.rank}: " if vr is not None else ""
            raise MPIUsageError(f"{who}{call} on COMM_NULL", error_class=ERR_COMM)

    # -- error handlers (bsim/mpi/common/errhandlers.py) ------------------------------------
    @classmethod
    def Create_errhandler(cls, errhandler_fn: Any) -> errhandlers.Errhandler:
        """A user error handler ``errhandler_fn(comm, errorcode)``."""
        return errhandlers.create_errhandler(cls.__name__, errhandler_fn)

    def Get_errhandler(self) -> errhandlers.Errhandler:
        """A new handle equal to this communicator's error handler (this rank's)."""
        self._not_null("Get_errhandler")
        return errhandlers.get_errhandler(self)

    def Set_errhandler(self, errhandler: errhandlers.Errhandler) -> None:
        """Set this communicator's error handler (this rank's)."""
        self._not_null("Set_errhandler")
        errhandlers.set_errhandler(self, errhandler)

    def Call_errhandler(self, errorcode: int) -> None:
        """Invoke this communicator's error handler with *errorcode*."""
        errhandlers.call_errhandler(self, errorcode)

    def Is_inter(self) -> bool:
        """Always False: bsim has intracommunicators only."""
        self._not_null("Is_inter")
        return False

    def Is_intra(self) -> bool:
        """Always True."""
        self._not_null("Is_intra")
        return True

    def __bool__(self) -> bool:
        return not self._null_here()

    def _null_here(self) -> bool:
        """COMM_NULL, or a handle the calling rank has freed (mpi4py sets it to COMM_NULL)."""
        if self.kind == _NULL:
            return True
        if not self.freed_by:
            return False
        vr = current_or_none()
        return vr is not None and vr.rank in self.freed_by

    def __eq__(self, other: object) -> bool:
        """Handles are equal when they are the same communicator, or both null for the
        calling rank: after ``comm.Free()`` that rank sees ``comm == MPI.COMM_NULL``."""
        if self is other:
            return True
        if isinstance(other, Comm):
            if self._handle is other._handle:
                return True
            return self._null_here() and other._null_here()
        return NotImplemented

    def __hash__(self) -> int:
        """mpi4py's handles are unhashable."""
        raise TypeError(f"unhashable type: '{type(self).__name__}'")

    def __repr__(self) -> str:
        if self.kind == Kind.NULL:
            return "<Intracomm COMM_NULL>"
        label = self._name or f"ctx={self.context}"
        try:
            size = f" size={self.Get_size()}"
        except Exception:  # outside a simulation the world's size is not known
            size = ""
        return f"<Intracomm {label}{size}>"


class Intracomm(IntracommCalls, Comm):
    """An intracommunicator: one group (MPI 4.1 Sec. 7.1); with the calls an
    intercommunicator lacks (scans, ``Create_group``, ``Create_cart``, ...)."""

    __slots__ = ()

    @classmethod
    def Create_from_group(cls, group: Group, stringtag: str = "org.mpi4py",
                          info: Any = None, errhandler: Any = None) -> Intracomm:
        """A communicator of *group* without a parent (MPI 4;
        ``bsim/mpi/management/communicators.py``)."""
        return management.Create_from_group(COMM_WORLD, group, stringtag, info, errhandler)



class Intercomm(Comm):
    """An intercommunicator: two disjoint groups (``bsim/mpi/management/intercomm.py``); its
    collectives move data between them (``bsim/mpi/collectives/intercomm.py``,
``intercomm_buffers.py``).
    ``MPI.Intercomm()`` and ``Comm.Get_parent()`` outside a spawned rank are null ones."""

    __slots__ = ("sides", "side_of", "local_comms")
    sides: tuple[tuple[int, ...], tuple[int, ...]]
    side_of: dict[int, int]
    local_comms: tuple[Intracomm, ...]

    group_p2p, rank_of = False, intercomm.rank_of   # the peers: the remote group
    size_of = intercomm.size_of
    coll_identity = intercomm.coll_identity
    peer_size = intercomm.peer_size
    world_rank = intercomm.world_rank
    members = intercomm.members
    Is_inter = intercomm.Is_inter
    Is_intra = intercomm.Is_intra
    Get_remote_size = intercomm.Get_remote_size
    Get_remote_group = intercomm.Get_remote_group
    remote_size = property(intercomm.Get_remote_size, doc="The size of the remote group.")
    remote_group = property(intercomm.Get_remote_group, doc="The remote group.")
    Merge = intercomm.Merge
    Dup = cast(Any, intercomm.Dup)   # they return Intercomms, Comm's return Intracomms
    Clone = cast(Any, intercomm.Dup)
    Split = cast(Any, intercomm.Split)
    Split_type = intercomm.Split_type
    Create = intercomm.Create

    def Dup_with_info(self, info: Any) -> Any:
        """Duplicate with the hints of *info* (MPI 4.1 Sec. 7.4.2,
        ``bsim/mpi/management/hints.py``)."""
        return intercomm.Dup(self, info)

    def Idup(self, info: Any = None) -> Any:
        """Nonblocking duplicate: made at the call (its cost charged there), the request
        complete."""
        return intercomm.Dup(self, info), inter.done_request(current(), "Idup")

    Idup_with_info = Idup

    @classmethod
    def Create_from_groups(cls, local_group: Group, local_leader: int, remote_group: Group,
                           remote_leader: int, stringtag: str = "org.mpi4py",
                           info: Any = None, errhandler: Any = None) -> Intercomm:
        """An intercommunicator of two groups without a parent (MPI 4; ``intercomm.py``)."""
        return intercomm.create_from_groups(COMM_WORLD, local_group, local_leader,
                                            remote_group, remote_leader, stringtag, info,
                                            errhandler)

    def __repr__(self) -> str:
        if self.kind == Kind.NULL:
            return "<Intercomm COMM_NULL>"
        return f"<Intercomm {self._name or ''} ctx={self.context}>"

    barrier = Barrier = inter.barrier
    bcast, gather, scatter = inter.bcast, inter.gather, inter.scatter
    allgather, alltoall = inter.allgather, inter.alltoall
    reduce, allreduce = inter.reduce, inter.allreduce   # no scans (MPI 4.1 Sec. 6.2.2)


for _name, _method in inter_buffers.METHODS.items():   # Bcast, Ibcast, Bcast_init, ...
    setattr(Intercomm, _name, _method)


class Topocomm(topologies.TopoInquiry, NeighborCalls, Intracomm):
    """A communicator with a virtual topology: mpi4py's base of :class:`Cartcomm`,
    :class:`Graphcomm` and :class:`Distgraphcomm` (degrees, neighbours and the
    neighbourhood collectives: ``bsim/mpi/topologies/``).
    """

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        """``Cartcomm(comm)`` ...: a ``TypeError`` unless *comm* has that topology (or is null)."""
        other = args[0] if len(args) == 1 else kwargs.get("comm")
        own = next(c for c in cls.__mro__ if c.__module__ == __name__)   # a program's subclass
        if isinstance(other, Comm) and other.kind != _NULL and not isinstance(other, own):
            raise TypeError(f"expecting a {own.__name__} communicator, got {other!r}")
        return super().__new__(cls, *args, **kwargs)

    def derive_copy(self, vr: VirtualRank, ctx: Any, name: str) -> Topocomm:
        """:meth:`derive` for ``Dup``: the same topology over the same group."""
        def setup(new: Any) -> None:
            slots: tuple[str, ...] = type(self).__slots__   # the topology's own attributes
            for slot in slots:
                setattr(new, slot, getattr(self, slot))
        return self.derive_topo(vr, ctx, self.members(vr), name, self.Get_topology(), setup)


class Cartcomm(Topocomm):
    """A communicator with a Cartesian process grid (``bsim/mpi/topologies/cartesian.py``)."""

    __slots__ = ("cart_dims", "cart_periods")
    cart_dims: tuple[int, ...]
    cart_periods: tuple[bool, ...]

    Get_coords, Get_cart_rank = cartesian.Get_coords, cartesian.Get_cart_rank
    Shift, Sub, Get_topo = cartesian.Shift, cartesian.Sub, cartesian.Get_topo
    Get_dim, Get_topology = cartesian.Get_dim, cartesian.Get_topology
    dims = property(cartesian.dims, doc=cartesian.dims.__doc__)
    periods = property(cartesian.periods, doc=cartesian.periods.__doc__)
    coords = property(cartesian.coords, doc=cartesian.coords.__doc__)
    ndim = property(cartesian.ndim, doc=cartesian.ndim.__doc__)
    topo = property(cartesian.topo, doc=cartesian.topo.__doc__)
    dim = ndim


class Graphcomm(topologies.GraphCalls, Topocomm):
    """A communicator with a general graph topology (``Create_graph``;
    ``bsim/mpi/topologies/graphs.py``)."""

    __slots__ = ("graph_index", "graph_edges")


class Distgraphcomm(topologies.DistGraphCalls, Topocomm):
    """A communicator with a distributed graph topology (``Create_dist_graph[_adjacent]``;
    ``bsim/mpi/topologies/graphs.py``): ``dist_adj`` holds each member's neighbours under its
    rank."""

    __slots__ = ("dist_adj",)


_TOPOLOGIES: dict[int, type[Topocomm]] = {CART: Cartcomm, GRAPH: Graphcomm,
                                          DIST_GRAPH: Distgraphcomm}

COMM_WORLD = Intracomm(WORLD_CONTEXT, Kind.WORLD, name="WORLD")
fast_path.know_world(COMM_WORLD)   # recognised there by identity (p2p's flattened path)
COMM_SELF = Intracomm(SELF_CONTEXT, Kind.SELF, name="SELF")
COMM_NULL = Intracomm(-1, Kind.NULL, name="MPI_COMM_NULL")
PICKLED_BY_NAME.update(COMM_NULL=COMM_NULL, COMM_SELF=COMM_SELF, COMM_WORLD=COMM_WORLD)
