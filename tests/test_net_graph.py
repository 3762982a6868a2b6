"""Graph network model: user networkx graphs, latency-shortest routes, cached routes."""

from __future__ import annotations

import itertools

import networkx as nx
import pytest

import bsim
from bsim import MPI
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


def _fan_out_1mb():
    """Rank 0 sends 1 MB to each other rank at once (Isend all, then Waitall)."""
    comm = MPI.COMM_WORLD
    if comm.Get_rank() == 0:
        MPI.Request.Waitall([comm.Isend(bsim.Buffer(10**6), dest=d)
                             for d in range(1, comm.Get_size())])
    else:
        comm.Recv(bsim.Buffer(10**6), source=0)


def test_loggp_gap_serialises_a_senders_messages_as_the_same_fat_tree_star():
    """Four 1 MB sends from the hub-side host of a star of 1 GB/s edges leave one after
    another, each 1 ms behind the last (gap = S / 1 GB/s), as on the same star built as
    fattree:k=5,n=1: arrivals 1 + 2 x 0.05 + 1000 k us = 1001.1, 2001.1, 3001.1, 4001.1 us
    (latency 1 us, two edges of 0.05 us against one switch of 0.1 us).  Before, the graph
    had no gap and all four arrived at 1001.1 us."""
    g = nx.Graph()
    g.add_node("sw")
    for i in range(5):
        g.add_node(f"h{i}", host=True)
        g.add_edge(f"h{i}", "sw", bandwidth=1e9, latency=0.5e-7)
    proto = "loggp:eager_limit=100000000"
    star = bsim.simulate(_fan_out_1mb, 5, GraphNetwork(g), proto).finish[1:]
    tree = bsim.simulate(_fan_out_1mb, 5, "fattree:k=5,n=1,link_bandwidth=1e9", proto).finish[1:]
    assert star.tolist() == pytest.approx([1001.1e-6, 2001.1e-6, 3001.1e-6, 4001.1e-6],
                                          rel=1e-9)
    assert star.tolist() == pytest.approx(tree.tolist(), rel=1e-12)


def test_gap_is_the_fastest_outgoing_edge():
    """A node with a 1 GB/s and a 10 GB/s edge injects at 10 GB/s: 1 MB takes 100 us of
    gap; h2 of the star (one 0.5 GB/s edge) 2 ms; in a DiGraph only outgoing edges count."""
    g = nx.Graph()
    g.add_edge("a", "b", bandwidth=1e9)
    g.add_edge("a", "c", bandwidth=1e10)
    assert GraphNetwork(g).gap(0, 10**6) == pytest.approx(1e-4, rel=1e-12)
    assert GraphNetwork(g).gap(1, 10**6) == pytest.approx(1e-3, rel=1e-12)
    assert GraphNetwork(_star()).gap(2, 10**6) == pytest.approx(2e-3, rel=1e-12)
    d = nx.DiGraph()
    d.add_edge("a", "b", bandwidth=1e9)
    d.add_edge("b", "a", bandwidth=4e9)
    d.add_edge("c", "a", bandwidth=1e10)
    net = GraphNetwork(d)
    assert [net.gap(r, 10**6) for r in range(3)] == pytest.approx([1e-3, 2.5e-4, 1e-4])
