"""Fat-tree network model: sizes, d-mod-k and adaptive routes, oversubscription, rails."""

from __future__ import annotations

import itertools

import networkx as nx
import pytest

import bsim
from bsim import MPI
from netmodels import FatTree, NetworkSpecError, build_network

DS1 = "fattree:leaf_ports=36,oversubscription=3,leaves=4"


@pytest.mark.parametrize("n, nodes, switches", [
    (1, 4, 1),        # 4^1 nodes, 1*4^0 switches
    (2, 16, 8),       # 4^2, 2*4^1
    (3, 64, 48),      # 4^3, 3*4^2
    (4, 256, 256),    # 4^4, 4*4^3
])
def test_quaternary_sizes_seed003(n, nodes, switches):
    """Quadrics quaternary fat-tree of dimension n: 4^n nodes, n*4^(n-1) switches."""
    t = build_network(f"fattree:quaternary={n}")
    assert t.num_nodes() == nodes
    assert t.num_switches() == switches
    assert t.switches_per_level() == [4 ** (n - 1)] * n


def test_kary_equals_quaternary():
    """fattree:k=4,n=3 is the same tree as quaternary=3."""
    a, b = build_network("fattree:k=4,n=3"), build_network("fattree:quaternary=3")
    assert (a.m, a.w) == (b.m, b.w) == ((4, 4, 4), (1, 4, 4))


def test_route_binary_3_tree():
    """2-ary 3-tree, 0 -> 6: up ports 0, (6//1)%2=0, (6//2)%2=1; top replica 2; down to 6."""
    t = FatTree(k=2, n=3)
    assert t.route_nodes(0, 6) == (
        (0, "up", 0, 0, 0), (0, "up", 1, 0, 0), (0, "up", 2, 0, 1),
        (0, "down", 2, 2, 1), (0, "down", 1, 3, 0), (0, "down", 0, 6, 0))
    assert t.switches_crossed(0, 6) == 5


def test_route_same_leaf():
    """4-ary 2-tree, 0 -> 3 share leaf 0: node->leaf->node, one switch."""
    t = FatTree(k=4, n=2)
    assert t.route_nodes(0, 3) == ((0, "up", 0, 0, 0), (0, "down", 0, 3, 0))
    assert t.switches_crossed(0, 3) == 1


def test_dmodk_route_to_13():
    """4-ary 2-tree, 0 -> 13: leaf 0 up port 13%4 = 1 to top switch 1, down to leaf 3 port 1."""
    t = FatTree(k=4, n=2)
    assert t.route_nodes(0, 13) == ((0, "up", 0, 0, 0), (0, "up", 1, 0, 1),
                                    (0, "down", 1, 3, 1), (0, "down", 0, 13, 0))
    # every other leaf also goes through top switch 1 towards 13
    for src in (4, 9):
        assert t.route_nodes(src, 13)[2:] == ((0, "down", 1, 3, 1), (0, "down", 0, 13, 0))


def test_dmodk_down_links_carry_one_destination():
    """4-ary 3-tree: 16 top switches x 4 down ports = 64 links, one per destination."""
    t = FatTree(k=4, n=3)
    dests: dict = {}
    for a, b in itertools.product(range(64), repeat=2):
        if t.nca_level(a, b) == 3:
            top_down = t.route_nodes(a, b)[3]
            assert top_down[1:3] == ("down", 2)
            dests.setdefault(top_down, set()).add(b)
    assert len(dests) == 64
    assert all(len(s) == 1 for s in dests.values())


def test_routes_match_networkx():
    """Route length is 2*L and equals the networkx shortest path in the built graph."""
    t = FatTree(k=4, n=3)
    g = t.to_networkx()
    # 64 + 16*4 + 16*4 = 192 cables, 64 nodes + 48 switches
    assert g.number_of_edges() == 192 and g.number_of_nodes() == 112
    for a, b in [(0, 1), (0, 5), (0, 63), (17, 42), (63, 0)]:
        route = t.route_nodes(a, b)
        assert len(route) == 2 * t.nca_level(a, b)
        assert len(route) == nx.shortest_path_length(g, ("node", a), ("node", b))


def test_cost_formula():
    """4-ary 3-tree, 0 -> 63: 5 switches: 1e-6 + 5*1e-7 + 1e6/1e10."""
    t = build_network("fattree:k=4,n=3,latency=1e-6,hop_latency=1e-7,link_bandwidth=1e10")
    assert t.cost(0, 63, 10**6) == pytest.approx(1e-6 + 5e-7 + 1e-4, rel=1e-12)
    assert t.cost(0, 1, 0) == pytest.approx(1e-6 + 1e-7, rel=1e-12)
    assert t.min_cost() == pytest.approx(1.1e-6)


def test_ds1_oversubscribed_leaves_seed000():
    """36-port leaves at 3:1: 27 nodes down, 9 up; 4 leaves -> 108 nodes, 4+9 switches."""
    t = build_network(DS1)
    assert (t.m, t.w) == ((27, 4), (1, 9))
    assert t.num_nodes() == 108 and t.num_switches() == 13
    # 0 -> 27 (leaf 1, port 0): up port 27 % 9 = 0 to spine 0, down to leaf 1
    assert t.route_nodes(0, 27) == ((0, "up", 0, 0, 0), (0, "up", 1, 0, 0),
                                    (0, "down", 1, 1, 0), (0, "down", 0, 27, 0))


def test_bad_leaf_split():
    """36 ports cannot be split 4:1 into whole ports (36 % 5 != 0); mixed topologies refused."""
    with pytest.raises(NetworkSpecError, match="4:1"):
        build_network("fattree:leaf_ports=36,oversubscription=4,leaves=2")
    with pytest.raises(NetworkSpecError, match="only one"):
        build_network("fattree:k=4,quaternary=2")
    with pytest.raises(NetworkSpecError):
        build_network("fattree:leaf_ports=36")
    with pytest.raises(NetworkSpecError):
        build_network("fattree:routing=random")


def test_rails_assign_and_stripe():
    """Two rails: assign puts core 0 on rail 0 and core 1 on rail 1; stripe halves s/bw."""
    t = build_network("fattree:k=4,n=2,rails=2,cores=2")
    assert t.num_switches() == 2 * 8
    assert {link[0] for link in t.route(0, 8)} == {0}    # rank 0: core 0 of node 0
    assert {link[0] for link in t.route(1, 8)} == {1}    # rank 1: core 1 of node 0
    s = build_network("fattree:k=4,n=2,rails=2,rail_policy=stripe,latency=0,hop_latency=0,"
                      "link_bandwidth=1e9")
    assert s.cost(0, 15, 10**9) == pytest.approx(0.5)
    assert len(s.rail_routes(0, 15)) == 2
    assert len(s.route(0, 15)) == 8


def test_adaptive_avoids_loaded_port():
    """Adaptive: with d-mod-k port 1 loaded, 0 -> 13 takes port 2 (next cyclically) instead."""
    t = build_network("fattree:k=4,n=2,routing=adaptive")
    route = t.route_nodes_adaptive(0, 13, {(0, "up", 1, 0, 1): 5})
    assert route == ((0, "up", 0, 0, 0), (0, "up", 1, 0, 2),
                     (0, "down", 1, 3, 2), (0, "down", 0, 13, 0))
    # no load: same as d-mod-k
    assert t.route_nodes_adaptive(0, 13, {}) == t.route_nodes(0, 13)


def test_links_cover_routes():
    """Every link of every route is in links() (2-level ds1 tree, all pairs from node 0)."""
    t = build_network(DS1)
    links = t.links()
    # (108 node cables + 4 leaves * 9 uplinks) * 2 directions
    assert len(links) == 2 * (108 + 36)
    for b in range(108):
        assert set(t.route_nodes(0, b)) <= set(links)


def test_spec_round_trip():
    """spec() rebuilds an equal model."""
    t = build_network(DS1 + ",rails=2,routing=adaptive")
    assert build_network(t.spec()) == t


@pytest.mark.parametrize("value", [0, -2, 1.5, "x"])
def test_oversubscription_below_one_is_refused(value):
    """A leaf's down:up ratio is at least 1:1 and whole: 0 was silently read as 1:1 and
    -2 built 72 down and -36 up ports (a KeyError under fluid); both are refused in
    one line naming the option and the value."""
    with pytest.raises(NetworkSpecError) as err:
        build_network(f"fattree:leaf_ports=36,oversubscription={value},leaves=2")
    assert str(err.value) == (f"fattree: oversubscription must be an int >= 1 "
                              f"(down:up ports per leaf), got {value!r}")
    # 1:1 is the smallest: 18 down and 18 up ports per 36-port leaf
    assert build_network("fattree:leaf_ports=36,oversubscription=1,leaves=2").m == (18, 2)


def _two_sends():
    """Ranks 0 and 1 each send 1 MB, to ranks 8 and 12."""
    comm = MPI.COMM_WORLD
    pairs = [(0, 8), (1, 12)]
    for src, dst in pairs:
        if comm.Get_rank() == src:
            comm.Send(bsim.Buffer(10**6), dest=dst)
        elif comm.Get_rank() == dst:
            comm.Recv(bsim.Buffer(10**6), source=src)


TREE = "fattree:k=2,n=4,link_bandwidth=1e9,latency=0,hop_latency=0"


@pytest.mark.parametrize("extra, contention, inert, plain, arrival_us", [
    # cores=1: nodes 0, 1 (one leaf) -> nodes 8, 12; d-mod-k sends both up port 0 at levels
    # 1 and 2 (8 % 2 = 12 % 2 = 0, 4 % 2 = 6 % 2 = 0): under fluid they share 1 GB/s
    (",routing=adaptive", None, "routing=adaptive", "", 1000),
    (",routing=adaptive", "fluid", None, "", 1000),      # the second takes port 1: 1 ms
    ("", "fluid", None, None, 2000),                     # d-mod-k: 2 x 1 MB / 1 GB/s
    # rails, assign: rank r on rail core % 2; with cores=1 every rank is core 0
    (",rails=2", None, "rails=2", "", 1000),
    (",rails=2", "fluid", "rails=2", "", 2000),
    # cores=2: ranks 0, 1 share node 0 (cores 0, 1), so rails=2 puts them on rails 0, 1
    (",rails=2,cores=2", None, "rails=2", ",cores=2", 1000),
    (",rails=2,cores=2", "fluid", None, ",cores=2", 1000),
    (",cores=2", "fluid", None, None, 2000),             # one rail: node 0's uplink shared
    (",rail_policy=stripe", None, "rail_policy=stripe", "", 1000),
    (",rails=2,rail_policy=stripe", None, None, "", 500),   # S / (2 x 1 GB/s)
])
def test_a_setting_is_warned_of_exactly_when_it_cannot_act(extra, contention, inert, plain,
                                                           arrival_us):
    """routing=adaptive acts only under --contention fluid (it routes by link load);
    rails=R under rail_policy=assign only under fluid and when the placed ranks use more
    than one rail (core % R); stripe only with rails > 1.  An inert setting is reported
    (Result.inert, the JSON) and the prediction equals the run without it (*plain*);
    arrival times by hand (1 MB over 1 GB/s links, latencies 0)."""
    res = bsim.simulate(_two_sends, 16, TREE + extra, contention=contention, protocol="bsim")
    assert res.finish[8] == res.finish[12] == pytest.approx(arrival_us * 1e-6, rel=1e-9)
    if inert is None:
        assert res.inert == [] and "inert_settings" not in res.to_dict()
        return
    assert len(res.inert) == 1 and res.inert[0].startswith(inert + " (")
    assert res.to_dict()["inert_settings"] == res.inert
    without = bsim.simulate(_two_sends, 16, TREE + plain, contention=contention, protocol="bsim")
    assert without.finish.tolist() == res.finish.tolist()


def test_adaptive_with_one_up_port_everywhere_is_inert():
    """A one-level tree (k=5, n=1) has no up port to choose, even under fluid; a k-ary
    2-tree has (k parents per leaf)."""
    assert build_network("fattree:k=5,n=1,routing=adaptive").inert(True, "bsim") == [
        "routing=adaptive (every element has one up port: no choice)"]
    assert build_network("fattree:k=2,n=2,routing=adaptive").inert(True, "bsim") == []
