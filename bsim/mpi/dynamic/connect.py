"""Dynamic process management between ranks of one run (MPI 4.1, Ch. 11): ports, the
name service, ``Accept``/``Connect``, ``Join``, ``Disconnect`` (``Spawn``: ``spawn.py``).

Every process of a bsim run is a virtual rank of the same simulation, so "connecting
two applications" connects two groups of its ranks: ``Accept`` on one communicator and
``Connect`` on another give the same intercommunicator as ``Create_intercomm`` would.
The port and name tables belong to the run (``engine.user_state``): a port opened by
a rank can be accepted on by that rank only (bsim addresses the connection request
to it).

Timing (``docs/collectives.md``, "Intercommunicators"): ``Open_port``,
``Close_port`` and the name service are local and free.  ``Connect``'s root sends its
group (a pickled message) to the port's owner; ``Accept``'s root, the owner, receives
the first such request and replies with its own group; then each root broadcasts
what it got over its communicator: ``T = p2p + p2p + T_bcast(P_local)``, through the
run's protocol and network.  ``Join`` swaps world ranks through the socket (host I/O,
no simulated time; a rank waiting for its peer polls, as ``Test`` does), then one
barrier on the new intercommunicator prices the connection.  ``Disconnect`` is a
barrier on the communicator, then ``Free``.
"""

from __future__ import annotations

import operator
import os
import socket
import struct
from typing import TYPE_CHECKING, Any

from ...constants import ANY_SOURCE, ERR_COMM
from ...engine.matching import Message, post_receive
from ...engine.rank import VirtualRank, current
from ...errors import MPIUsageError
from ..collectives.intercomm import exchange
from ..common.info import check_info
from ..requests.request import RECV, SEND, Request

if TYPE_CHECKING:
    from ..comms.comm import Comm, Intercomm

__all__ = ["Open_port", "Close_port", "Publish_name", "Unpublish_name", "Lookup_name",
           "Accept", "Connect", "Join", "Disconnect"]

ERR_NAME, ERR_PORT, ERR_SERVICE = 33, 38, 41   # MPICH's values (bsim/mpi/common/namespace.py)
_PORTS, _NAMES = "bsim.dynamic.ports", "bsim.dynamic.names"


def _table(vr: VirtualRank, key: str, call: str) -> dict[Any, Any]:
    if vr.engine.host_of is not None:
        raise MPIUsageError(f"rank {vr.rank}: {call}: dynamic process management is not "
                            f"simulated over several host processes (hosts=)")
    return vr.engine.user_state.setdefault(key, {})


def _info(info: Any, call: str) -> None:
    if info is not None:
        check_info(info, call)


def Open_port(info: Any = None) -> str:
    """A new port name, owned by the calling rank (local; no simulated time)."""
    vr = current()
    _info(info, "Open_port")
    ports = _table(vr, _PORTS, "Open_port")
    name = f"bsim-port:{vr.rank}:{len(ports)}"
    ports[name] = vr.rank
    return name


def _port_owner(vr: VirtualRank, port_name: Any, call: str) -> int:
    ports = _table(vr, _PORTS, call)
    if not isinstance(port_name, str) or port_name not in ports:
        raise MPIUsageError(f"rank {vr.rank}: {call}: {port_name!r} is not an open port",
                            error_class=ERR_PORT)
    return ports[port_name]


def Close_port(port_name: str) -> None:
    """Release a port opened by :func:`Open_port`."""
    vr = current()
    _port_owner(vr, port_name, "Close_port")
    del _table(vr, _PORTS, "Close_port")[port_name]


def Publish_name(service_name: str, port_name: str, info: Any = None) -> None:
    """Publish *port_name* under *service_name* (``ERR_SERVICE`` if already published)."""
    vr = current()
    _info(info, "Publish_name")
    names = _table(vr, _NAMES, "Publish_name")
    if service_name in names:
        raise MPIUsageError(f"rank {vr.rank}: Publish_name: service {service_name!r} is "
                            f"already published", error_class=ERR_SERVICE)
    names[service_name] = port_name


def Unpublish_name(service_name: str, port_name: str, info: Any = None) -> None:
    """Withdraw a published service name."""
    vr = current()
    _info(info, "Unpublish_name")
    names = _table(vr, _NAMES, "Unpublish_name")
    if names.get(service_name) != port_name:
        raise MPIUsageError(f"rank {vr.rank}: Unpublish_name: service {service_name!r} is "
                            f"not published with port {port_name!r}", error_class=ERR_SERVICE)
    del names[service_name]


def Lookup_name(service_name: str, info: Any = None) -> str:
    """The port published under *service_name* (``ERR_NAME`` when none is)."""
    vr = current()
    _info(info, "Lookup_name")
    vr.sync("Lookup_name")   # what other ranks published up to this rank's time
    names = _table(vr, _NAMES, "Lookup_name")
    if service_name not in names:
        raise MPIUsageError(f"rank {vr.rank}: Lookup_name: no service {service_name!r} is "
                            f"published", error_class=ERR_NAME)
    return names[service_name]


def send_group(vr: VirtualRank, world: int, ctx: Any, payload: Any, call: str) -> Request:
    req = Request(vr, SEND, call)
    nbytes = 8 * (len(payload[0]) + 4)   # the group's world ranks and a key
    msg = Message(ctx, vr.rank, world, 0, 0, nbytes, payload, True)
    vr.ops += 1
    vr.msgs += 1
    vr.nbytes += nbytes
    vr.engine.protocol.send(vr, vr.engine.ranks[world], msg, req, False)
    return req


def receive_group(vr: VirtualRank, ctx: Any, source: int, call: str) -> Any:
    req = Request(vr, RECV, call)
    req.lower = True
    req.ctx, req.src, req.tag = ctx, source, 0
    if source == ANY_SOURCE:
        vr.sync(call)   # which request matches depends on what arrived by now
    req.t_post = vr.clock
    vr.ops += 1
    post_receive(vr, req)
    vr.settle([req], call)
    return req.payload


def checked_root(comm: Comm, vr: VirtualRank, root: Any, call: str) -> tuple[int, int]:
    size, me = comm.size_of(vr), comm.rank_of(vr)
    try:
        root = operator.index(root)
    except TypeError:
        root = -1
    if not 0 <= root < size:
        raise MPIUsageError(f"rank {vr.rank}: {call}(root={root!r}): invalid root for "
                            f"{comm!r} (valid: 0..{size - 1})", error_class=7)
    return me, root


def call_key(comm: Comm, vr: VirtualRank) -> tuple[str, int]:
    """This call's name on *comm*: its collective context and sequence number."""
    cctx = comm.coll_context(vr)
    return repr(cctx), (vr.coll_seq or {}).get(cctx, 0)


def _begin(comm: Comm, info: Any, root: Any, call: str
           ) -> tuple[VirtualRank, int, int, tuple[tuple[int, ...], tuple[str, int]]]:
    """``(rank, its rank in comm, root, (comm's world ranks, this call's key))``."""
    vr = current()
    _info(info, call)
    me, root = checked_root(comm, vr, root, call)
    return vr, me, root, (tuple(comm.members(vr)), call_key(comm, vr))


def Accept(comm: Comm, port_name: Any = None, info: Any = None, root: int = 0) -> Intercomm:
    """Accept a ``Connect`` on *port_name* (significant at *root*, which must own the
    port): the intercommunicator with the connecting group (collective over *comm*)."""
    vr, me, root, mine = _begin(comm, info, root, "Accept")
    theirs = None
    if me == root:
        owner = _port_owner(vr, port_name, "Accept")
        if owner != vr.rank:
            raise MPIUsageError(f"rank {vr.rank}: Accept: port {port_name!r} was opened by "
                                f"rank {owner}; bsim accepts at the rank that opened it")
        group, key, world = receive_group(vr, ("port", port_name), ANY_SOURCE, "Accept")
        send_group(vr, world, ("port", port_name, "reply", world), mine, "Accept")
        theirs = (group, key, port_name)
    group, key, port = comm.bcast(theirs, root=root)
    sides = (tuple(mine[0]), tuple(group))
    return comm.derive_inter(vr, ("accept", port, mine[1], key), sides, "Accept")


def Connect(comm: Comm, port_name: Any = None, info: Any = None, root: int = 0) -> Intercomm:
    """Connect to the ``Accept`` on *port_name* (significant at *root*): the
    intercommunicator with the accepting group (collective over *comm*)."""
    vr, me, root, mine = _begin(comm, info, root, "Connect")
    theirs = None
    if me == root:
        vr.sync("Connect")   # the port is open at this rank's time
        owner = _port_owner(vr, port_name, "Connect")
        send_group(vr, owner, ("port", port_name), mine + (vr.rank,), "Connect")
        group, key = receive_group(vr, ("port", port_name, "reply", vr.rank), owner, "Connect")
        theirs = (group, key, port_name)
    group, key, port = comm.bcast(theirs, root=root)
    sides = (tuple(group), tuple(mine[0]))
    return comm.derive_inter(vr, ("accept", port, key, mine[1]), sides, "Connect")


def Join(base: Comm, fd: int) -> Intercomm:
    """``Comm.Join(fd)``: the intercommunicator of the calling rank and the rank at the
    other end of the connected socket *fd* (MPI 4.1, Sec. 11.8.4); *base*
    (``COMM_SELF``) derives it."""
    vr = current()
    table = _table(vr, "bsim.dynamic.joins", "Join")
    sock = socket.socket(fileno=os.dup(operator.index(fd)))
    try:
        sock.setblocking(False)
        sock.sendall(struct.pack("!q", vr.rank))
        got = b""
        while len(got) < 8:
            try:
                chunk = sock.recv(8 - len(got))
            except BlockingIOError:
                vr.engine.protocol.poll(vr, "Join")   # let the peer run
                continue
            if not chunk:
                raise MPIUsageError(f"rank {vr.rank}: Join: the socket was closed before "
                                    f"the peer joined", error_class=ERR_COMM)
            got += chunk
    finally:
        sock.close()
    peer = struct.unpack("!q", got)[0]
    pair = (min(vr.rank, peer), max(vr.rank, peer))
    seq = table.setdefault((vr.rank, peer), 0)
    table[(vr.rank, peer)] = seq + 1
    ic = base.derive_inter(vr, ("join", pair, seq), ((pair[0],), (pair[1],)), "Join")
    exchange(ic, vr, None, "Join", 0)
    return ic


def Disconnect(comm: Comm) -> None:
    """Wait for the communicator's pending communication (a barrier), then ``Free``."""
    comm._not_null("Disconnect")
    comm.Barrier()
    comm.Free()
