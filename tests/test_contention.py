"""Fluid max-min contention solver: exact hand-computed finish times."""

from __future__ import annotations

import pytest

from netmodels import build_network
from netmodels.maxmin import FluidNetwork, max_min_rates, simulate_flows


def test_two_flows_share_one_link():
    """1e9 B over a 1e9 B/s link takes 1 s alone, 2 s each when two share it."""
    cap = {"l": 1e9}
    assert simulate_flows([("a", ["l"], 1e9, 0.0)], cap) == {"a": 1.0}
    assert simulate_flows([("a", ["l"], 1e9, 0.0), ("b", ["l"], 1e9, 0.0)], cap) == \
        {"a": 2.0, "b": 2.0}


def test_disjoint_paths_do_not_interfere():
    """Flows on disjoint links keep full rate: 1 s each."""
    cap = {"x": 1e9, "y": 1e9, "z": 1e9}
    out = simulate_flows([("a", ["x", "y"], 1e9, 0.0), ("b", ["z"], 1e9, 0.0)], cap)
    assert out == {"a": 1.0, "b": 1.0}


def test_staggered_start():
    """Cap 1 B/s; A=10 B at t=0, B=10 B at t=2: A has 8 left, shares at 0.5 -> A ends 18, B 20."""
    out = simulate_flows([("A", ["l"], 10, 0.0), ("B", ["l"], 10, 2.0)], {"l": 1.0})
    assert out["A"] == pytest.approx(18.0, rel=1e-12)
    assert out["B"] == pytest.approx(20.0, rel=1e-12)


def test_max_min_rates_hand_case():
    """f1 on a,b; f2 on a; f3 on b; cap a=1, b=2: a is the bottleneck (1/2), f3 gets 2-1/2."""
    rates = max_min_rates({"f1": ("a", "b"), "f2": ("a",), "f3": ("b",)}, {"a": 1.0, "b": 2.0})
    assert rates == {"f1": 0.5, "f2": 0.5, "f3": 1.5}


def test_max_min_release_after_finish():
    """Same three flows, f1,f2 of 1 B end at 2 s; then f3 (4 B) speeds up and ends at 2.5 s."""
    # f3 carries 4 B: 0..2 s at 1.5 B/s = 3 B, last 1 B alone on b at 2 B/s = 0.5 s
    out = simulate_flows([("f1", ["a", "b"], 1, 0.0), ("f2", ["a"], 1, 0.0),
                          ("f3", ["b"], 4, 0.0)], {"a": 1.0, "b": 2.0})
    assert out == pytest.approx({"f1": 2.0, "f2": 2.0, "f3": 2.5}, rel=1e-12)


def test_oversubscribed_uplink_three_times_slower():
    """ds1 3:1 leaves: 27 cross-leaf flows share 9 uplinks 3 by 3 (d-mod-k): 3x the lone time."""
    tree = build_network("fattree:leaf_ports=36,oversubscription=3,leaves=2,link_bandwidth=1e9")
    cap = {link: bw for link, (bw, _) in tree.links().items()}
    alone = simulate_flows([(0, tree.route_nodes(0, 27), 1e9, 0.0)], cap)
    assert alone == {0: 1.0}
    flows = [(i, tree.route_nodes(i, 27 + i), 1e9, 0.0) for i in range(27)]
    out = simulate_flows(flows, cap)
    assert all(t == pytest.approx(3.0, rel=1e-12) for t in out.values())
    # within a leaf there is no oversubscription: 27 flows 0..26 -> 26..0 are not slowed
    local = [(i, tree.route_nodes(i, 26 - i), 1e9, 0.0) for i in range(27) if i != 13]
    assert all(t == pytest.approx(1.0) for t in simulate_flows(local, cap).values())


def test_torus_ring_contention():
    """On a ring of 4, flows 0->2 and 1->2 share link (1,0,+1): both take 2 s."""
    ring = build_network("torus:dims=4,link_bandwidth=1")
    cap = {link: bw for link, (bw, _) in ring.links().items()}
    out = simulate_flows([("a", ring.route_nodes(0, 2), 1, 0.0),
                          ("b", ring.route_nodes(1, 2), 1, 0.0)], cap)
    assert out == {"a": 2.0, "b": 2.0}


def test_local_and_empty_flows_finish_at_start():
    """A flow with no links or no bytes completes when it starts."""
    out = simulate_flows([("local", [], 100, 1.5), ("empty", ["l"], 0, 2.0)], {"l": 1.0})
    assert out == {"local": 1.5, "empty": 2.0}


def test_incremental_api():
    """add_flow / next_completion / advance_to / remove drive the same answer as the batch."""
    net = FluidNetwork({"l": 2.0})
    net.add_flow(0.0, "a", ["l"], 4)
    assert net.next_completion() == (2.0, "a")
    net.add_flow(1.0, "b", ["l"], 1)          # a has 2 B left; both at 1 B/s
    assert net.remaining("a") == 2.0 and net.rate("b") == 1.0
    assert net.next_completion() == (2.0, "b")
    with pytest.raises(ValueError, match="skip"):
        net.advance_to(2.5)
    net.advance_to(2.0)
    net.remove("b")
    assert net.next_completion() == (2.5, "a")  # 1 B left at 2 B/s
    net.advance_to(2.5)
    net.remove("a")
    assert net.next_completion() is None and len(net) == 0


def test_incremental_errors():
    """Duplicate ids, unknown links, negative sizes, time travel and unknown removals fail."""
    net = FluidNetwork({"l": 1.0})
    net.add_flow(1.0, "a", ["l"], 1)
    with pytest.raises(ValueError, match="already"):
        net.add_flow(1.0, "a", ["l"], 1)
    with pytest.raises(KeyError):
        net.add_flow(1.0, "b", ["nope"], 1)
    with pytest.raises(ValueError):
        net.add_flow(1.0, "c", ["l"], -1)
    with pytest.raises(ValueError, match="back in time"):
        net.advance_to(0.5)
    with pytest.raises(KeyError):
        net.remove("zzz")
    with pytest.raises(ValueError):
        FluidNetwork({"l": 0})


def test_tie_order_is_insertion_order():
    """Two flows finishing together complete in the order they were added."""
    net = FluidNetwork({"x": 1.0, "y": 1.0})
    net.add_flow(0.0, "second", ["y"], 1)
    net.add_flow(0.0, "first", ["x"], 1)
    assert net.next_completion() == (1.0, "second")


def test_weighted_max_min_rates_by_hand():
    """Link of 3 B/s shared by weights 2 and 1: rates 2 and 1.  A second link of 1.5 B/s
    under the weight-1 flow alone leaves it its 1 (the 3-link level is lower)."""
    rates = max_min_rates({"a": ("l",), "b": ("l", "m")}, {"l": 3.0, "m": 1.5},
                          {"a": 2.0, "b": 1.0})
    assert rates == pytest.approx({"a": 2.0, "b": 1.0})
    # m at 0.5: b frozen at 0.5 there, a takes the rest of l (2.5)
    rates = max_min_rates({"a": ("l",), "b": ("l", "m")}, {"l": 3.0, "m": 0.5},
                          {"a": 2.0, "b": 1.0})
    assert rates == pytest.approx({"a": 2.5, "b": 0.5})
    # equal weights are plain max-min
    assert max_min_rates({"a": ("l",), "b": ("l",)}, {"l": 3.0}, {"a": 5.0, "b": 5.0}) == \
        pytest.approx({"a": 1.5, "b": 1.5})
