"""Graph network model: user networkx graphs, latency-shortest routes, cached routes."""

from __future__ import annotations

import itertools

import networkx as nx
import pytest

from netmodels import GraphNetwork, NetworkSpecError, Torus, build_network


def _star():
    g = nx.Graph()
    for h in ("h0", "h1", "h2"):
        g.add_node(h, host=True)
    g.add_node("sw")
    g.add_edge("h0", "sw", bandwidth=1e9, latency=1e-7)
    g.add_edge("h1", "sw", bandwidth=1e9, latency=1e-7)
    g.add_edge("h2", "sw", bandwidth=5e8, latency=2e-7)
    return g


def test_hosts_and_route():
    """Hosts are the host=True nodes in order; h0 -> h2 crosses (h0,sw), (sw,h2)."""
    net = GraphNetwork(_star())
    assert net.hosts == ["h0", "h1", "h2"] and net.num_nodes() == 3
    assert net.route(0, 2) == (("h0", "sw"), ("sw", "h2"))


def test_cost_sum_latency_min_bandwidth():
    """h0 -> h2: 1e-6 + (1e-7 + 2e-7) + 1e6 / 5e8 (the slower edge)."""
    net = GraphNetwork(_star(), latency=1e-6)
    assert net.cost(0, 2, 10**6) == pytest.approx(1e-6 + 3e-7 + 2e-3, rel=1e-12)
    assert net.min_cost() == pytest.approx(1.1e-6)


def test_shortest_path_by_latency():
    """Triangle: a-c direct 5 us is longer than a-b-c at 1+1 us, so the route goes via b."""
    g = nx.Graph()
    g.add_edge("a", "b", latency=1e-6)
    g.add_edge("b", "c", latency=1e-6)
    g.add_edge("a", "c", latency=5e-6)
    net = GraphNetwork(g, latency=0.0)
    assert net.hosts == ["a", "b", "c"]         # no host attribute: every node
    assert net.route(0, 2) == (("a", "b"), ("b", "c"))
    assert net.cost(0, 2, 0) == pytest.approx(2e-6)


def test_routes_cached():
    """A node pair's route is computed once and reused."""
    net = GraphNetwork(_star())
    assert net.route_nodes(0, 1) is net.route_nodes(0, 1)


def test_matches_torus_hops():
    """networkx's periodic 4x4 grid as a graph gives the Torus model's hop counts."""
    g = nx.grid_2d_graph(4, 4, periodic=True)
    net = GraphNetwork(g)
    torus = Torus(dims="4x4")
    for a, b in itertools.product(range(16), repeat=2):
        if a != b:
            (xa, ya), (xb, yb) = net.hosts[a], net.hosts[b]
            assert len(net.route_nodes(a, b)) == torus.hops(torus.node_at((xa, ya)),
                                                            torus.node_at((xb, yb)))


def test_from_file(tmp_path):
    """graph:file=PATH.graphml builds the same network as the object."""
    path = tmp_path / "star.graphml"
    nx.write_graphml(_star(), path)
    net = build_network(f"graph:file={path}")
    assert net.num_nodes() == 3 and net.route(0, 2) == (("h0", "sw"), ("sw", "h2"))


def test_links_both_directions():
    """An undirected edge is two directed links with its bandwidth and latency."""
    links = GraphNetwork(_star()).links()
    assert len(links) == 6 and links[("sw", "h2")] == (5e8, 2e-7)


def test_errors():
    """No graph, a multigraph, or a disconnected pair raise NetworkSpecError."""
    with pytest.raises(NetworkSpecError):
        GraphNetwork()
    with pytest.raises(NetworkSpecError):
        GraphNetwork(nx.MultiGraph([(0, 1)]))
    g = nx.Graph()
    g.add_nodes_from([0, 1])
    with pytest.raises(NetworkSpecError, match="no path"):
        GraphNetwork(g).cost(0, 1, 10)
