"""Nodes with several devices and NICs (netmodels/nodes.py): placement, prices, routes.

Expected values are derived by hand from the module's rules: a node of ``nics = k`` owns
endpoints ``node*k .. node*k + k - 1``; ``device = core * devices // cores``; ``nic =
device * nics // devices`` (``nic_policy=device``) or ``core % nics`` (``roundrobin``).
Powers of two keep the float arithmetic exact.
"""

from __future__ import annotations

import math

import pytest

import bsim
from bsim import MPI
from netmodels import build_network
from netmodels.base import NetworkSpecError

LAT, HOP, BW = 2.0**-20, 2.0**-23, 2.0**33          # network latency, hop, link bytes/s
DLAT, DBW = 2.0**-21, 2.0**35                        # between devices of one node
ILAT, IBW = 2.0**-22, 2.0**36                        # on one device
S = 2**20

# Frontier-like: 8 devices, 4 NICs, one rank a device; a 4x2 torus = 8 endpoints = 2 nodes
GPU = (f"torus:dims=4x2,link_bandwidth={BW},hop_latency={HOP},latency={LAT},"
       f"intra_latency={ILAT},intra_bandwidth={IBW},cores=8,devices=8,nics=4,"
       f"device_latency={DLAT},device_bandwidth={DBW}")


def test_ranks_are_placed_on_devices_and_bound_to_their_device_nic():
    """Rank r: node r // 8, device r % 8, NIC (r % 8) // 2, endpoint node*4 + NIC."""
    net = build_network(GPU)
    net.prepare(16)
    assert net.placement() == [r // 8 for r in range(16)]
    layout = net.rank_layout()
    assert layout == {"node": [r // 8 for r in range(16)],
                      "device": [r % 8 for r in range(16)],
                      "nic": [(r % 8) // 2 for r in range(16)]}
    assert [net.node_of(r) for r in range(16)] == [(r // 8) * 4 + (r % 8) // 2
                                                   for r in range(16)]
    assert net.num_hosts() == 2


def test_prices_on_one_device_between_devices_and_between_nodes():
    """Same node, other device: DLAT + s/DBW; the network: LAT + hops*HOP + s/BW from the
    sender's NIC endpoint to the receiver's (4x2 torus: endpoint 0 = (0,0), 1 = (1,0),
    4 = (0,1); 0 -> 4 is one hop, 1 -> 4 two)."""
    net = build_network(GPU)
    net.prepare(16)
    assert net.cost(0, 1, S) == DLAT + S / DBW          # GCDs 0 and 1 share NIC 0
    assert net.cost(0, 7, S) == DLAT + S / DBW          # other NIC, same node: no network
    assert net.cost(0, 8, S) == LAT + 1 * HOP + S / BW  # endpoints 0 -> 4
    assert net.cost(2, 8, S) == LAT + 2 * HOP + S / BW  # endpoints 1 -> 4
    assert net.cost(5, 5, S) == 0.0
    assert net.route(0, 7) == () and net.route(0, 1) == ()
    assert net.route(0, 8) == ((0, 1, 1),)              # (node 0, dim 1, +)
    assert net.min_cost() == DLAT                       # the cheapest message: GCD to GCD


def test_two_ranks_on_one_device_pay_the_intra_figures():
    """cores=8 over devices=2: slots 0-3 on device 0, 4-7 on device 1."""
    net = build_network(f"torus:dims=2,cores=8,devices=2,intra_latency={ILAT},"
                        f"intra_bandwidth={IBW},device_latency={DLAT},device_bandwidth={DBW}")
    net.prepare(16)
    assert net.rank_layout()["device"][:8] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert net.cost(0, 3, S) == ILAT + S / IBW
    assert net.cost(0, 4, S) == DLAT + S / DBW
    assert net.rank_layout()["nic"][:8] == [0] * 8


def test_roundrobin_policy_deals_slots_to_nics():
    """nic_policy=roundrobin: NIC = core % nics, whatever the device."""
    net = build_network("torus:dims=4,cores=4,devices=1,nics=2,nic_policy=roundrobin")
    net.prepare(8)
    assert net.rank_layout()["nic"] == [0, 1, 0, 1, 0, 1, 0, 1]
    assert [net.node_of(r) for r in range(8)] == [0, 1, 0, 1, 2, 3, 2, 3]


def test_no_node_keys_leave_a_model_as_it_was():
    """Without node keys the spec, placement and prices are the one-NIC model's."""
    spec = "torus:dims=4x2,cores=2"
    net = build_network(spec)
    net.prepare(16)
    assert net.rank_layout() is None
    assert "nics" not in net.spec() and "devices" not in net.spec()
    assert net.placement() == [r // 2 for r in range(16)]
    assert net.cost(0, 2, S) == net.latency + net.hop_latency + S / net.link_bandwidth


def test_fattree_nics_are_leaf_ports_and_one_node_has_no_route():
    """A 4-port one-switch tree with nics=2: node 0 owns ports 0, 1; node 1 ports 2, 3.
    Ranks of one node on different NICs still talk on the node (no route)."""
    net = build_network(f"fattree:k=4,n=1,link_bandwidth={BW},hop_latency={HOP},"
                        f"latency={LAT},cores=2,devices=2,nics=2,device_latency={DLAT},"
                        f"device_bandwidth={DBW}")
    net.prepare(4)
    assert [net.node_of(r) for r in range(4)] == [0, 1, 2, 3]
    assert net.route(0, 1) == () and net.rail_routes(0, 1) == [()]
    assert net.cost(0, 1, S) == DLAT + S / DBW
    assert net.cost(1, 3, S) == LAT + HOP + S / BW      # ports 1 -> 3 through one switch
    assert net.route(1, 3) == ((0, "up", 0, 1, 0), (0, "down", 0, 3, 0))


@pytest.mark.parametrize("spec, match", [
    ("torus:dims=8,nics=3", "8 endpoints are not a whole number of nodes of nics=3"),
    ("torus:dims=8,nics=0", "nics must be an int >= 1"),
    ("torus:dims=8,devices=1.5", "devices must be an int >= 1"),
    ("torus:dims=8,nics=2,nic_policy=random", "nic_policy must be device or roundrobin"),
    ("torus:dims=8,device_bandwidth=0", "device_bandwidth must be a finite number > 0"),
])
def test_bad_node_keys_are_one_line_errors(spec, match):
    """Each bad key is refused naming the key and the value."""
    with pytest.raises(NetworkSpecError, match=match):
        build_network(spec)


def _pairs(pairs):
    def main():
        comm = MPI.COMM_WORLD
        r = comm.Get_rank()
        reqs = [comm.Irecv(bsim.Buffer(S), source=s, tag=i)
                for i, (s, d) in enumerate(pairs) if d == r]
        reqs += [comm.Isend(bsim.Buffer(S), dest=d, tag=i)
                 for i, (s, d) in enumerate(pairs) if s == r]
        MPI.Request.Waitall(reqs)
    return main


@pytest.mark.parametrize("protocol", ["bsim", "loggp:eager_limit=0"])
def test_ranks_bound_to_one_nic_share_it_and_two_nics_do_not(protocol):
    """Two ranks of node 0 each send S bytes to a rank of node 1 at once.  With one NIC a
    node both flows cross that NIC's leaf link: each moves at BW/2, S/BW later than with
    two NICs, where the flows use disjoint ports and each moves alone (fluid max-min)."""
    tree = (f"fattree:k=4,n=1,link_bandwidth={BW},hop_latency={HOP},latency={LAT},"
            f"cores=2,devices=2,device_latency={DLAT},device_bandwidth={DBW}")
    pairs = [(0, 2), (1, 3)]
    shared = bsim.simulate(_pairs(pairs), 4, network=tree + ",nics=1", protocol=protocol,
                           contention="fluid")
    apart = bsim.simulate(_pairs(pairs), 4, network=tree + ",nics=2", protocol=protocol,
                          contention="fluid")
    assert math.isclose(shared.elapsed - apart.elapsed, S / BW, rel_tol=1e-9)
    assert apart.layout["nic"] == [0, 1, 0, 1] and shared.layout["nic"] == [0, 0, 0, 0]


def test_adaptive_routing_keeps_a_node_s_own_messages_off_the_network():
    """fattree routing=adaptive picks routes per message from loads: two NICs of one node
    (endpoints 0 and 1 of a nics=2 node) get no route, two nodes' NICs the tree's."""
    net = build_network(f"fattree:k=4,n=1,routing=adaptive,cores=2,devices=2,nics=2")
    net.prepare(4)
    assert net.route_nodes_adaptive(0, 1, {}) == ()
    assert net.route_nodes_adaptive(1, 3, {}) == ((0, "up", 0, 1, 0), (0, "down", 0, 3, 0))
    shared = bsim.simulate(_pairs([(0, 1)]), 4, network=net.spec(), protocol="bsim",
                           contention="fluid")
    assert shared.elapsed == pytest.approx(net.intra_latency + S / net.intra_bandwidth,
                                           rel=1e-12)
