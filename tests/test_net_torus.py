"""Torus network model: closed-form hops, dimension-order routes, costs, mapping."""

from __future__ import annotations

import itertools

import networkx as nx
import pytest

from netmodels import NetworkSpecError, Torus, build_network

PETASCALE = "torus:dims=16x16x16,link_bandwidth=1e10,cores=8,mapping=block"


def test_hops_2x2x2_opposite_corner():
    """On a 2x2x2 torus (0,0,0) -> (1,1,1) is 3 hops: distance 1 in each ring of 2."""
    t = Torus(dims="2x2x2")
    assert t.hops(0, 7) == 3
    assert t.hops(0, 1) == 1 and t.hops(0, 6) == 2   # node 6 = (0,1,1)


def test_route_2x2x2_takes_plus_links():
    """Distance 1 on a ring of 2 is a k/2 tie, so every hop goes +: 0 -> 1 -> 3 -> 7."""
    t = Torus(dims="2x2x2")
    assert t.route_nodes(0, 7) == ((0, 0, 1), (1, 1, 1), (3, 2, 1))


def test_hops_4x4x4_wraparound():
    """4x4x4: (0,0,0)->(3,3,3) is 3 hops (wrap in each dim); ->(2,2,2) is 6 (2+2+2)."""
    t = Torus(dims="4x4x4")
    far = t.node_at((3, 3, 3))
    assert far == 63
    assert t.hops(0, far) == 3
    assert t.hops(0, t.node_at((2, 2, 2))) == 6
    # the wrap route goes - in x, then y, then z: 0 -> 3 -> 15 -> 63
    assert t.route_nodes(0, far) == ((0, 0, -1), (3, 1, -1), (15, 2, -1))


def test_route_tie_goes_plus_on_4_ring():
    """Distance exactly k/2 = 2 goes the + way: (0,0) -> (2,2) on 4x4 crosses 0,1,2,6."""
    t = Torus(dims="4x4")
    assert t.route_nodes(0, 10) == ((0, 0, 1), (1, 0, 1), (2, 1, 1), (6, 1, 1))


def test_mean_hops_4x4x4():
    """Mean hops over all ordered pairs (self included) of 4x4x4 is 3: per ring (0+1+2+1)/4."""
    t = Torus(dims="4x4x4")
    n = t.num_nodes()
    total = sum(t.hops(a, b) for a in range(n) for b in range(n))
    assert total == 3 * n * n


def test_diameter_petascale():
    """16x16x16 diameter is 8+8+8 = 24 hops, reached at (8,8,8)."""
    t = build_network(PETASCALE)
    assert t.diameter() == 24
    assert t.hops(0, t.node_at((8, 8, 8))) == 24


def test_petascale_spec_seed004():
    """The BSIM paper's design: 4096 nodes x 8 cores = 32768 ranks at 10 GB/s per direction."""
    t = build_network(PETASCALE)
    assert isinstance(t, Torus)
    assert t.num_nodes() == 4096 and t.cores == 8 and t.link_bandwidth == 1e10
    t.prepare(32768)
    with pytest.raises(NetworkSpecError):
        t.prepare(32769)


def test_cost_formula():
    """Ranks 0 and 8 sit on neighbouring nodes 0,1: 1e-6 + 1*1e-7 + 1e6/1e10 seconds."""
    t = build_network(PETASCALE + ",latency=1e-6,hop_latency=1e-7")
    t.prepare(32768)
    assert t.cost(0, 8, 10**6) == pytest.approx(1e-6 + 1e-7 + 1e-4, rel=1e-12)
    # rank 8*(8+16*8+256*8) is node (8,8,8): 24 hops
    far = 8 * t.node_at((8, 8, 8))
    assert t.cost(0, far, 0) == pytest.approx(1e-6 + 24e-7, rel=1e-12)


def test_intra_node_and_self_cost():
    """Ranks 0 and 7 share node 0: intra_latency + s/intra_bandwidth; a rank to itself is free."""
    t = build_network(PETASCALE + ",intra_latency=2e-7,intra_bandwidth=4e10")
    assert t.cost(0, 7, 4 * 10**6) == pytest.approx(2e-7 + 1e-4, rel=1e-12)
    assert t.cost(3, 3, 10**6) == 0.0
    assert t.route(0, 7) == ()


def test_min_cost_is_lower_bound():
    """min_cost is the smaller of intra_latency and latency + one hop."""
    t = Torus(dims="4x4", latency=1e-6, hop_latency=1e-7, intra_latency=3e-7, cores=2)
    assert t.min_cost() == pytest.approx(3e-7)
    t1 = Torus(dims="4x4", latency=1e-6, hop_latency=1e-7, cores=1)
    assert t1.min_cost() == pytest.approx(1.1e-6)


@pytest.mark.parametrize("dims", ["3x4x5", "2x2x2", "5", "4x4x4", "2x3x2x3"])
def test_routes_match_networkx(dims):
    """Route length equals hops and networkx shortest path; each link starts where we are."""
    t = Torus(dims=dims)
    g = t.to_networkx()
    lengths = dict(nx.all_pairs_shortest_path_length(g))
    for a, b in itertools.product(range(t.num_nodes()), repeat=2):
        route = t.route_nodes(a, b)
        assert len(route) == t.hops(a, b) == lengths[a][b]
        here = a
        for node, d, step in route:
            assert node == here
            c = list(t.coords(here))
            c[d] += step
            here = t.node_at(tuple(c))
        assert here == b


def test_links_count():
    """4x4x4 has 64 nodes x 3 dims x 2 directions = 384 directed links."""
    links = Torus(dims="4x4x4", link_bandwidth=5e9, hop_latency=2e-8).links()
    assert len(links) == 384
    assert links[(0, 2, -1)] == (5e9, 2e-8)


def test_roundrobin_mapping():
    """2x2x2, cores=2, roundrobin over 8 nodes: ranks 1 and 9 share node 1."""
    t = build_network("torus:dims=2x2x2,cores=2,mapping=roundrobin")
    t.prepare(16)
    assert t.node_of(9) == 1 and t.node_of(1) == 1
    assert t.route(1, 9) == ()
    assert t.route(0, 7) == t.route_nodes(0, 7)


def test_oversubscribed_mapping_rejected():
    """roundrobin:nodes=2 puts 2 ranks per node: refused when nodes have 1 core."""
    t = build_network("torus:dims=2x2,cores=1,mapping=roundrobin:nodes=2")
    with pytest.raises(NetworkSpecError, match="cores=1"):
        t.prepare(4)


def test_bad_specs():
    """Bad dims, bandwidth and mapping raise NetworkSpecError."""
    for spec in ("torus:dims=4x0", "torus:dims=axb", "torus:link_bandwidth=0",
                 "torus:mapping=zigzag", "torus:cores=0", "torus:bogus=1"):
        with pytest.raises(NetworkSpecError):
            build_network(spec)


def test_spec_round_trip():
    """spec() rebuilds an equal model."""
    t = build_network(PETASCALE)
    assert build_network(t.spec()) == t


def test_tie_rule_at_half_a_ring():
    """Ring of 4, distance 2 both ways: ``plus`` always goes +; ``simgrid`` goes + except
    from coordinate k/2 = 2 (SimGrid TorusZone: 'target right without wrap-around, or
    source beyond k/2 and target within k/2 of it after wrapping')."""
    from netmodels import build_network
    plus = build_network("torus:dims=4x3")
    sg = build_network("torus:dims=4x3,tie=simgrid")
    assert plus.node_route(2, 0) == ((2, 0, 1), (3, 0, 1))
    assert sg.node_route(2, 0) == ((2, 0, -1), (1, 0, -1))
    for a, b in [(0, 2), (1, 3), (3, 1)]:          # the other ties go + in both
        assert sg.node_route(a, b) == plus.node_route(a, b)
        assert sg.node_route(a, b)[0][2] == 1
    # everywhere else they agree (the ring of 3 has no ties)
    assert all(sg.node_route(a, b) == plus.node_route(a, b)
               for a in range(12) for b in range(12) if a != b and (a % 4 != 2 or b % 4 != 0))
    with pytest.raises(Exception, match="tie must be plus or simgrid"):
        build_network("torus:dims=4,tie=minus")


@pytest.mark.parametrize("spec", ["torus:dims=4x4x8,hop_latency=1e-7,latency=1e-6,cores=2",
                                  "fattree:k=4,n=3,cores=2", "bluewaters:supernodes=2"])
def test_cached_prices_are_the_model_s_own(spec, monkeypatch):
    """cost() keeps node_cost's answers by (node pair, size): every answer, cached, re-asked
    or after the cache was emptied, equals node_cost's (or the intra-node price), and sizes
    it does not cache (floats, huge) are priced directly."""
    import random

    import netmodels.topology as topology
    monkeypatch.setattr(topology, "COST_CACHE_LIMIT", 50)   # empties itself during the test
    net = build_network(spec)
    n = 64
    net.prepare(n)
    rnd = random.Random(7)
    for _ in range(3000):
        a, b = rnd.randrange(n), rnd.randrange(n)
        size = rnd.choice([0, 8, 4096, 65536, 1 << 41, 1000.5])
        na, nb = net.node_of(a), net.node_of(b)
        if a == b:
            want = 0.0
        elif na == nb:
            want = net.intra_latency + size / net.intra_bandwidth
        else:
            want = net.node_cost(na, nb, size)
        assert net.cost(a, b, size) == want
    assert 0 < len(net._cost_cache) <= 50
