"""Nodes as they are built now: several devices and several NICs per node.

A topology model's *endpoints* (its ``num_nodes()``: torus routers, fat-tree leaves'
ports, dragonfly terminals) are **NICs**.  A compute node with ``nics = k`` owns ``k``
consecutive endpoints: node ``n`` holds endpoints ``n*k .. n*k + k - 1``, so a network
of ``E`` endpoints has ``E // k`` nodes (``E`` must be a multiple of ``k``).  The
mapping (:mod:`netmodels.mapping`) places ranks on nodes and cores (rank slots,
``cores`` a node) as before; the node layer then puts each rank on a device and binds
it to a NIC::

    device(core) = core * devices // cores          (the slots split evenly over devices)
    nic(core)    = device(core) * nics // devices   (nic_policy=device: a device's own NIC)
                 = core % nics                      (nic_policy=roundrobin)
    endpoint     = node * nics + nic

A Frontier-class node (8 GPU dies, 4 NICs, one rank a die: ``cores=8,devices=8,nics=4``)
binds ranks 0,1 to NIC 0, 2,3 to NIC 1, ...::

    node 0:  [GCD0 GCD1] [GCD2 GCD3] [GCD4 GCD5] [GCD6 GCD7]    devices (ranks 0..7)
                 |            |           |           |
               NIC 0        NIC 1       NIC 2       NIC 3        endpoints 0..3
                 |            |           |           |
               ======================= network =============     endpoints 4..7: node 1

Message prices (:meth:`netmodels.topology.TopologyModel.cost`): on one device
``intra_latency + s / intra_bandwidth`` (shared memory); between devices of one node
``device_latency + s / device_bandwidth`` (the node's own links, e.g. GPU-to-GPU
Infinity Fabric or NVLink; default: the intra figures); between nodes the topology's
price from the sender's NIC endpoint to the receiver's.  Under ``--contention fluid``
the ranks bound to one NIC share its endpoint's links (a dragonfly terminal link, a
fat-tree leaf link, a torus router's links): the NIC is shared as the hardware shares it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .base import NetworkSpecError, check_nonnegative, check_positive

__all__ = ["NODE_PARAMETERS", "NodeLayer", "POLICIES"]

NODE_PARAMETERS = {
    "nics": "NICs per node, each one network endpoint (default 1)",
    "devices": "devices per node (GPUs or CPU sockets); a node's cores split evenly "
               "over them (default 1)",
    "nic_policy": "the NIC a rank sends through: device (its device's; default) or "
                  "roundrobin (core % nics)",
    "device_latency": "seconds per message between devices of one node (default "
                      "intra_latency)",
    "device_bandwidth": "bytes/second between devices of one node (default intra_bandwidth)",
}
"""The keys every topology model takes for its node layer (``None``: not given)."""

POLICIES = ("device", "roundrobin")


def _count(model: str, key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise NetworkSpecError(f"{model}: {key} must be an int >= 1, got {value!r}")
    return value


@dataclass(frozen=True)
class NodeLayer:
    """Devices and NICs of one node, and each core's device and NIC (module docstring)."""

    nics: int = 1
    devices: int = 1
    nic_policy: str = "device"
    device_latency: float = 0.0
    device_bandwidth: float = 1.0

    @classmethod
    def build(cls, model: str, endpoints: int, intra_latency: float, intra_bandwidth: float,
              nics: Any = None, devices: Any = None, nic_policy: Any = None,
              device_latency: Any = None, device_bandwidth: Any = None) -> NodeLayer:
        """Check the given keys of *model* (a network of *endpoints* endpoints); the
        device link defaults to the intra-node figures.  Raises
        :class:`~netmodels.base.NetworkSpecError`, one line naming the key."""
        k = 1 if nics is None else _count(model, "nics", nics)
        d = 1 if devices is None else _count(model, "devices", devices)
        policy = "device" if nic_policy is None else nic_policy
        if policy not in POLICIES:
            raise NetworkSpecError(f"{model}: nic_policy must be device or roundrobin, "
                                   f"got {policy!r}")
        if endpoints % k:
            raise NetworkSpecError(f"{model}: {endpoints} endpoints are not a whole number "
                                   f"of nodes of nics={k} NICs each")
        lat = intra_latency if device_latency is None else device_latency
        bw = intra_bandwidth if device_bandwidth is None else device_bandwidth
        check_nonnegative(model, device_latency=lat)
        check_positive(model, device_bandwidth=bw)
        return cls(k, d, policy, float(lat), float(bw))

    def device(self, core: int, cores: int) -> int:
        """Device of rank slot *core* of a node of *cores* slots."""
        return core * self.devices // cores

    def nic(self, core: int, cores: int) -> int:
        """NIC (0 .. nics-1) that rank slot *core* sends through."""
        if self.nic_policy == "roundrobin":
            return core % self.nics
        return self.device(core, cores) * self.nics // self.devices
