"""The point-to-point and collective methods of a communicator, bound from the modules
that implement them (``Comm.Isend = p2p.Isend``), the way mpi4py's ``pkl5`` communicator
delegates.  :class:`~bsim.mpi.comms.comm.Comm` inherits :class:`CommCalls` and
:class:`CommManagement`, :class:`~bsim.mpi.comms.comm.Intracomm` also :class:`IntracommCalls`
(the scans, ``Create_group``, ``Create_cart``: mpi4py's ``Intracomm`` has them, its
``Comm`` and ``Intercomm`` do not); this module only names them, so the communicator
classes stay about identity.

Modules: :mod:`~bsim.mpi.p2p.calls`, :mod:`~bsim.mpi.p2p.bsend`, :mod:`~bsim.mpi.p2p.sendrecv`,
:mod:`~bsim.mpi.p2p.partitioned`, :mod:`~bsim.mpi.collectives.calls`,
:mod:`~bsim.mpi.collectives.exchanges` and :mod:`~bsim.mpi.collectives.persistent`.
"""

from __future__ import annotations

from ..collectives import calls as collective_calls
from ..collectives import exchanges as collective_exchanges
from ..collectives.persistent import persistent
from ..dynamic import connect as dynamic
from ..dynamic import spawn
from ..management import communicators as management
from ..management import intercomm
from ..p2p import bsend as buffered
from ..p2p import calls as p2p
from ..p2p import partitioned
from ..p2p import persistent as persistent_p2p
from ..p2p import sendrecv as joined_p2p
from ..topologies import cartesian
from ..topologies import graphs as topologies

__all__ = ["CommCalls", "CommManagement", "IntracommCalls"]


class CommCalls:
    """Point-to-point and collective calls of a communicator (mixin of ``Comm``)."""

    __slots__ = ()

    # -- point-to-point (bsim/mpi/p2p/calls.py) -------------------------------------------------
    Send_init = persistent_p2p.Send_init
    Ssend_init = persistent_p2p.Ssend_init
    Recv_init = persistent_p2p.Recv_init
    send = p2p.send
    bsend = buffered.bsend
    ssend = p2p.ssend
    isend = p2p.isend
    ibsend = buffered.ibsend
    issend = p2p.issend
    recv = p2p.recv
    irecv = p2p.irecv
    sendrecv = p2p.sendrecv
    probe = p2p.probe
    iprobe = p2p.iprobe
    Send = p2p.Send
    Bsend = buffered.Bsend
    Rsend = p2p.Rsend
    Ssend = p2p.Ssend
    Isend = p2p.Isend
    Ibsend = buffered.Ibsend
    Irsend = p2p.Irsend
    Issend = p2p.Issend
    Recv = p2p.Recv
    Irecv = p2p.Irecv
    Sendrecv = p2p.Sendrecv
    Sendrecv_replace = p2p.Sendrecv_replace
    Probe = p2p.Probe
    Iprobe = p2p.Iprobe
    Mprobe = p2p.Mprobe
    Improbe = p2p.Improbe
    Isendrecv = joined_p2p.Isendrecv
    Bsend_init = buffered.Bsend_init
    Psend_init = partitioned.Psend_init
    Precv_init = partitioned.Precv_init
    Rsend_init = persistent_p2p.Rsend_init
    Attach_buffer = buffered.comm_attach_buffer
    Detach_buffer = buffered.comm_detach_buffer
    Flush_buffer = buffered.comm_flush_buffer
    Iflush_buffer = buffered.comm_iflush_buffer
    Isendrecv_replace = joined_p2p.Isendrecv_replace
    mprobe = p2p.Mprobe
    improbe = p2p.Improbe

    # -- collectives (bsim/mpi/collectives/calls.py, exchanges.py) ----------------------
    barrier = collective_calls.barrier
    Barrier = collective_calls.Barrier
    Ibarrier = collective_calls.Ibarrier
    bcast = collective_calls.bcast
    Bcast = collective_calls.Bcast
    Ibcast = collective_calls.Ibcast
    reduce = collective_calls.reduce
    allreduce = collective_calls.allreduce
    Reduce = collective_calls.Reduce
    Ireduce = collective_calls.Ireduce
    Allreduce = collective_calls.Allreduce
    Iallreduce = collective_calls.Iallreduce
    Reduce_scatter_block = collective_calls.Reduce_scatter_block
    Reduce_scatter = collective_calls.Reduce_scatter
    Ireduce_scatter_block = collective_calls.Ireduce_scatter_block
    Ireduce_scatter = collective_calls.Ireduce_scatter
    gather = collective_exchanges.gather
    scatter = collective_exchanges.scatter
    allgather = collective_exchanges.allgather
    alltoall = collective_exchanges.alltoall
    Gather = collective_exchanges.Gather
    Gatherv = collective_exchanges.Gatherv
    Igather = collective_exchanges.Igather
    Scatter = collective_exchanges.Scatter
    Scatterv = collective_exchanges.Scatterv
    Allgather = collective_exchanges.Allgather
    Allgatherv = collective_exchanges.Allgatherv
    Iallgather = collective_exchanges.Iallgather
    Alltoall = collective_exchanges.Alltoall
    Alltoallv = collective_exchanges.Alltoallv
    Alltoallw = collective_exchanges.Alltoallw
    Ialltoall = collective_exchanges.Ialltoall
    Igatherv = collective_exchanges.Igatherv
    Iscatter = collective_exchanges.Iscatter
    Iscatterv = collective_exchanges.Iscatterv
    Iallgatherv = collective_exchanges.Iallgatherv
    Ialltoallv = collective_exchanges.Ialltoallv
    Ialltoallw = collective_exchanges.Ialltoallw
    Barrier_init = persistent("Barrier_init")
    Bcast_init = persistent("Bcast_init")
    Gather_init = persistent("Gather_init")
    Gatherv_init = persistent("Gatherv_init")
    Scatter_init = persistent("Scatter_init")
    Scatterv_init = persistent("Scatterv_init")
    Allgather_init = persistent("Allgather_init")
    Allgatherv_init = persistent("Allgatherv_init")
    Alltoall_init = persistent("Alltoall_init")
    Alltoallv_init = persistent("Alltoallv_init")
    Alltoallw_init = persistent("Alltoallw_init")
    Reduce_init = persistent("Reduce_init")
    Allreduce_init = persistent("Allreduce_init")
    Reduce_scatter_block_init = persistent("Reduce_scatter_block_init")
    Reduce_scatter_init = persistent("Reduce_scatter_init")


class CommManagement:
    """Communicator management calls (mixin of ``Comm``):
    :mod:`~bsim.mpi.management.communicators`, ``Compare`` from
    :mod:`~bsim.mpi.management.intercomm` (either kind)."""

    __slots__ = ()

    # -- communicator management (bsim/mpi/management/communicators.py) ---------------------
    Get_group = management.Get_group
    Dup = management.Dup
    Dup_with_info = management.Dup_with_info
    Idup = management.Idup
    Idup_with_info = management.Idup_with_info
    Get_info = management.Get_info
    Set_info = management.Set_info
    Clone = management.Clone
    Split = management.Split
    Split_type = management.Split_type
    Create = management.Create
    Compare = intercomm.Compare
    Free = management.Free
    Abort = management.Abort
    Get_topology = management.Get_topology
    group = property(management.Get_group, doc="The group of the communicator.")


class IntracommCalls:
    """The calls of intracommunicators only (mixin of ``Intracomm``), where mpi4py has them:
    an ``Intercomm`` (and the ``Comm`` base class) has none of them, so using one there is
    an ``AttributeError``, as with mpi4py on MPICH.

    * the scans: MPI 4.1 Sec. 6.2.2 does not list them among the collectives defined on
      intercommunicators, and Sec. 6.11 defines them over the ranks of one group;
    * ``Create_group`` (MPI 4.1 Sec. 7.4.2: its *comm* is an intracommunicator);
    * ``Create_cart`` (MPI 4.1 Sec. 8.5.1; topologies are attached to intracommunicators),
      the graph topologies' constructors and ``Cart_map``/``Graph_map`` (Sec. 8.5);
    * ``Create_intercomm`` (Sec. 7.6.2), ``Accept``/``Connect`` and ``Spawn`` (Chapter 11),
      whose *comm* is an intracommunicator.
    """

    __slots__ = ()

    scan = collective_calls.scan
    exscan = collective_calls.exscan
    Scan = collective_calls.Scan
    Exscan = collective_calls.Exscan
    Iscan = collective_calls.Iscan
    Iexscan = collective_calls.Iexscan
    Scan_init = persistent("Scan_init")
    Exscan_init = persistent("Exscan_init")
    Create_group = management.Create_group
    Create_cart = cartesian.Create_cart
    Create_graph = topologies.Create_graph
    Create_dist_graph_adjacent = topologies.Create_dist_graph_adjacent
    Create_dist_graph = topologies.Create_dist_graph
    Cart_map = topologies.Cart_map
    Graph_map = topologies.Graph_map
    Create_intercomm = intercomm.Create_intercomm
    Accept = dynamic.Accept
    Connect = dynamic.Connect
    Spawn = spawn.Spawn
    Spawn_multiple = spawn.Spawn_multiple
