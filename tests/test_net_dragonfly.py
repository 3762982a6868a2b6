"""Dragonfly network model: numbering, minimal/Valiant/UGAL routes, costs, links, runs.

Every expected route below is derived by hand from the numbering (terminal t on router
t // N, router r in group r // (C R), chassis (r mod C R) // R, blade r mod R) and the
arrangement (simgrid: router of local index h of a group holds the link to group h).
"""

from __future__ import annotations

import itertools

import pytest

import bsim
from bsim import MPI
from netmodels import Dragonfly, NetworkSpecError, build_network

H, G, LAT = 1e-7, 3e-7, 1e-6          # hop, global and end-point latency of the cases
TB, LB, GB = 4e9, 2e9, 1e9            # terminal, local, global bandwidth


def small(**kw) -> Dragonfly:
    """The docstring's machine: G=2, C=1, R=3, N=2 (12 nodes)."""
    args = dict(groups=2, chassis=1, routers=3, terminals=2, hop_latency=H, global_latency=G,
                latency=LAT, terminal_bandwidth=TB, local_bandwidth=LB, global_bandwidth=GB)
    args.update(kw)
    return Dragonfly(**args)


def test_coords_are_simgrids_numbering():
    """G=3, C=2, R=3, N=2: node 29 is router 14 = group 2 (14 // 6), local 2: chassis 0,
    blade 2, terminal 1; node 21 is router 10 = group 1, local 4: chassis 1, blade 1."""
    d = Dragonfly(groups=3, chassis=2, routers=3, terminals=2)
    assert d.num_nodes() == 36 and d.num_routers() == 18
    assert d.coords(29) == (2, 0, 2, 1)
    assert d.coords(21) == (1, 1, 1, 1)


def test_route_of_the_docstring():
    """Terminal 1 (router 0, group 0) to terminal 10 (router 5, group 1): to router 1
    (holds group 1's link), global to router 3 (local 0 of group 1 holds group 0's link),
    across to router 5, down: 5 links, 3 router-to-router hops."""
    d = small()
    assert d.route_nodes(1, 10) == (("up", 1, 0), ("router", 0, 1), ("global", 1, 3),
                                    ("router", 3, 5), ("down", 5, 10))
    assert d.hops(1, 10) == 3
    # 4 terminal/local links at H, one global at G; bottleneck the global link
    assert d.cost(1, 10, 10**6) == pytest.approx(LAT + 4 * H + G + 1e6 / GB, rel=1e-12)


def test_same_router_and_same_group():
    """Nodes 0 and 1 share router 0: up and down only, at terminal bandwidth; nodes 0 and 4
    (router 2) add one router link, the bottleneck at local bandwidth."""
    d = small()
    assert d.route_nodes(0, 1) == (("up", 0, 0), ("down", 0, 1))
    assert d.cost(0, 1, 8000) == pytest.approx(LAT + 2 * H + 8000 / TB, rel=1e-12)
    assert d.route_nodes(0, 4) == (("up", 0, 0), ("router", 0, 2), ("down", 2, 4))
    assert d.cost(0, 4, 8000) == pytest.approx(LAT + 3 * H + 8000 / LB, rel=1e-12)


def test_gateway_router_skips_the_local_hop():
    """Node 2 sits on router 1, group 0's gateway to group 1; node 6 on router 3, group 1's
    gateway to group 0: up, global, down."""
    d = small()
    assert d.route_nodes(2, 6) == (("up", 2, 1), ("global", 1, 3), ("down", 3, 6))
    assert d.route_nodes(6, 2) == (("up", 6, 3), ("global", 3, 1), ("down", 1, 2))


def test_flattened_butterfly_route():
    """G=3, C=2, R=3, N=1.  Node 5 = router 5 (group 0, chassis 1, blade 2) to node 16 =
    router 16 (group 2, local 4: chassis 1, blade 1).  Group 0's link to group 2 is on
    local 2 = router 2 (chassis 0, blade 2): same blade, so one chassis link 5 -> 2; the
    global link lands on group 2's local 0 = router 12 (chassis 0, blade 0); router link to
    blade 1 (router 13), chassis link to chassis 1 (router 16)."""
    d = Dragonfly(groups=3, chassis=2, routers=3, terminals=1, hop_latency=H,
                  global_latency=G, latency=LAT, local_bandwidth=LB, chassis_links=2)
    assert d.route_nodes(5, 16) == (("up", 5, 5), ("chassis", 5, 2), ("global", 2, 12),
                                    ("router", 12, 13), ("chassis", 13, 16), ("down", 16, 16))
    assert d.hops(5, 16) == 4
    # intra-group, blade then chassis: router 0 (c0, b0) -> router 4 (c1, b1)
    assert d.route_nodes(0, 4) == (("up", 0, 0), ("router", 0, 1), ("chassis", 1, 4),
                                   ("down", 4, 4))
    # router links carry LB, chassis links 2 LB (chassis_links=2): the router link limits
    assert d.cost(0, 4, 10**6) == pytest.approx(LAT + 4 * H + 1e6 / LB, rel=1e-12)


def test_consecutive_arrangement():
    """G=5, C=1, R=2: 4 global ports per group, 2 per router.  Group 3 numbers its ports
    for groups 0, 1, 2, 4 as 0..3: ports 0, 1 on router 6, 2, 3 on router 7.  Group 0's
    ports for 1, 2 are on router 0, for 3, 4 on router 1."""
    d = Dragonfly(groups=5, chassis=1, routers=2, terminals=1, arrangement="consecutive")
    assert [d.gateway(3, h) for h in (0, 1, 2, 4)] == [6, 6, 7, 7]
    assert [d.gateway(0, h) for h in (1, 2, 3, 4)] == [0, 0, 1, 1]
    # node 0 (router 0) to node 7 (router 7, group 3): router 0 -> 1, global 1 -> 6, 6 -> 7
    assert d.route_nodes(0, 7) == (("up", 0, 0), ("router", 0, 1), ("global", 1, 6),
                                   ("router", 6, 7), ("down", 7, 7))
    with pytest.raises(NetworkSpecError, match="arrangement=consecutive"):
        Dragonfly(groups=5, chassis=1, routers=2, terminals=1)


@pytest.mark.parametrize("shape", [(2, 1, 3, 2), (3, 2, 3, 1), (4, 2, 2, 2), (5, 1, 5, 1)])
@pytest.mark.parametrize("routing", ["minimal", "valiant"])
def test_every_route_is_a_walk_over_real_links(shape, routing):
    """Each route starts at its terminal, each link starts where the previous ended, ends at
    the destination; minimal: at most one global link, at most 2 local links per group;
    Valiant: exactly 2 global links between distinct groups of 3 or more."""
    g, c, r, n = shape
    d = Dragonfly(groups=g, chassis=c, routers=r, terminals=n, routing=routing)
    graph = d.to_networkx()
    links = d.links()
    for a, b in itertools.permutations(range(d.num_nodes()), 2):
        route = d.route_nodes(a, b)
        here = ("t", a)
        for link in route:
            assert link in links
            nxt = [v for _, v, k in graph.out_edges(here, keys=True) if k == link]
            assert len(nxt) == 1, (a, b, link)
            here = nxt[0]
        assert here == ("t", b)
        kinds = [lk[0] for lk in route]
        same_group = d.coords(a)[0] == d.coords(b)[0]
        if routing == "valiant" and not same_group and g >= 3:
            assert kinds.count("global") == 2
        else:
            assert kinds.count("global") == (0 if same_group else 1)
            assert len(route) <= 2 + 2 + 1 + 2


def test_link_counts():
    """G=3, C=2, R=3, N=2: 2*36 terminal links, 18 routers * 2 router links, 18 * 1
    chassis link, 3 * 2 global links (each a direction)."""
    d = Dragonfly(groups=3, chassis=2, routers=3, terminals=2, group_links=2, router_links=3,
                  local_bandwidth=LB, global_bandwidth=GB)
    links = d.links()
    kinds = [lk[0] for lk in links]
    assert [kinds.count(k) for k in ("up", "down", "router", "chassis", "global")] == \
        [36, 36, 36, 18, 6]
    assert links[("global", 1, 6)] == (2 * GB, 3e-7)     # group_links=2 bundle
    assert links[("router", 0, 1)] == (3 * LB, 1e-7)     # router_links=3 bundle


def test_valiant_goes_through_the_drawn_group():
    """G=4, C=1, R=4, N=1.  Node 1 (router 1, group 0) to node 10 (router 10, group 2,
    local 2): the middle group is 1 or 3; both routes derived by hand.  Via 1: group 0's
    link to group 1 is on router 1 (no local hop), lands on router 4 (group 1, local 0),
    across to router 6 (local 2: link to group 2), lands on router 9 (group 2, local 1),
    across to 10.  Via 3: router 1 -> 3, global to 12 (group 3, local 0), 12 -> 14, global
    to 11 (group 2, local 3), 11 -> 10."""
    d = Dragonfly(groups=4, chassis=1, routers=4, terminals=1, routing="valiant")
    expected = {
        1: (("up", 1, 1), ("global", 1, 4), ("router", 4, 6), ("global", 6, 9),
            ("router", 9, 10), ("down", 10, 10)),
        3: (("up", 1, 1), ("router", 1, 3), ("global", 3, 12), ("router", 12, 14),
            ("global", 14, 11), ("router", 11, 10), ("down", 10, 10)),
    }
    middle = d.intermediate_group(1, 10)
    assert d.route_nodes(1, 10) == expected[middle]
    # intra-group pairs go minimal
    assert d.intermediate_group(1, 2) is None
    assert d.route_nodes(1, 2) == (("up", 1, 1), ("router", 1, 2), ("down", 2, 2))


def test_valiant_draw_is_seeded_and_spread():
    """The middle group is never an end, is the same for the same seed (a new model), uses
    every candidate over many pairs, and changes with the seed."""
    d = Dragonfly(groups=6, chassis=1, routers=6, terminals=2, routing="valiant", seed=7)
    again = Dragonfly(groups=6, chassis=1, routers=6, terminals=2, routing="valiant", seed=7)
    other = Dragonfly(groups=6, chassis=1, routers=6, terminals=2, routing="valiant", seed=8)
    pairs = [(a, b) for a in range(12) for b in range(12, 72)]
    draws = [d.intermediate_group(a, b) for a, b in pairs]
    for (a, b), m in zip(pairs, draws):
        assert m not in (None, d.coords(a)[0], d.coords(b)[0])
    assert draws == [again.intermediate_group(a, b) for a, b in pairs]
    assert draws != [other.intermediate_group(a, b) for a, b in pairs]
    assert set(draws) == {1, 2, 3, 4, 5}     # sources in group 0: middles 1..5 but b's


def test_valiant_cost_counts_its_route():
    """Valiant's cost is its own route's: via group 1 above, 4 terminal/local links, 2
    global links."""
    d = Dragonfly(groups=4, chassis=1, routers=4, terminals=1, routing="valiant",
                  hop_latency=H, global_latency=G, latency=LAT, global_bandwidth=GB)
    hops = len(d.route_nodes(1, 10))
    globals_ = 2
    assert d.cost(1, 10, 10**6) == pytest.approx(
        LAT + (hops - globals_) * H + globals_ * G + 1e6 / GB, rel=1e-12)


def test_ugal_choice_from_loads():
    """G=3, C=1, R=3, N=1, node 0 -> node 3.  Minimal: up, router 0 -> 1, global 1 -> 3,
    down (H = 4).  Valiant via group 2: up, 0 -> 2, global 2 -> 6, 6 -> 7, global 7 -> 5,
    5 -> 3, down (H = 7).  No load: 7 > 4, minimal; one flow on the minimal global link:
    (1+0)*7 < (1+1)*4, Valiant; the same flow on the shared terminal link: minimal."""
    d = Dragonfly(groups=3, chassis=1, routers=3, terminals=1, routing="ugal")
    minimal = (("up", 0, 0), ("router", 0, 1), ("global", 1, 3), ("down", 3, 3))
    valiant = (("up", 0, 0), ("router", 0, 2), ("global", 2, 6), ("router", 6, 7),
               ("global", 7, 5), ("router", 5, 3), ("down", 3, 3))
    assert d.route_nodes(0, 3) == minimal                  # the cost's route
    assert d.route_nodes_adaptive(0, 3, {}) == minimal
    assert d.route_nodes_adaptive(0, 3, {("global", 1, 3): 1}) == valiant
    assert d.route_nodes_adaptive(0, 3, {("up", 0, 0): 3}) == minimal
    # Valiant loaded as much as minimal: (1+1)*7 > (1+1)*4
    assert d.route_nodes_adaptive(0, 3, {("global", 1, 3): 1, ("global", 7, 5): 1}) == minimal


def _two_senders(network, contention, protocol="bsim"):
    def main():
        comm = MPI.COMM_WORLD
        buf = bsim.buffer(10**6)
        rank = comm.Get_rank()
        if rank in (0, 1):
            comm.Send(buf, dest=rank + 3)
        elif rank in (3, 4):
            comm.Recv(buf, source=rank - 3)
    res = bsim.simulate(main, ranks=9, network=network, protocol=protocol,
                        contention=contention)
    return sorted(res.finish[[3, 4]])


@pytest.mark.parametrize("protocol", ["bsim", "loggp"])
def test_ugal_in_the_fluid_layer(protocol):
    """G=3, C=1, R=3, N=1, 1 MB from nodes 0 and 1 to 3 and 4 at once, all links 1 GB/s.
    Minimal: both cross global link 1 -> 3 (0: up, 0->1, global, down; 1: up, global,
    3->4, down: 3 hops of H and one of G each), 2 ms each.  UGAL: the second message finds
    one flow on it and takes the Valiant way through group 2 (2 global links and 5 of H),
    at full speed, charged its longer route."""
    spec = ("dragonfly:groups=3,chassis=1,routers=3,terminals=1,terminal_bandwidth=1e9,"
            "local_bandwidth=1e9,global_bandwidth=1e9,hop_latency=1e-7,global_latency=3e-7,"
            "latency=1e-6")
    s = 1e6 / 1e9
    # loggp: 1 MB is a rendezvous; request- and clear-to-send are 0-byte messages on the
    # minimal routes (both ways 3 of H and one of G), not flows
    hand = 2 * (LAT + 3 * H + G) if protocol == "loggp" else 0.0
    minimal = _two_senders(spec, "fluid", protocol)
    assert minimal == pytest.approx([hand + LAT + 3 * H + G + 2 * s] * 2, rel=1e-9)
    ugal = _two_senders(spec + ",routing=ugal", "fluid", protocol)
    assert ugal == pytest.approx([hand + LAT + 3 * H + G + s,
                                  hand + LAT + 5 * H + 2 * G + s], rel=1e-9)
    # without contention ugal is minimal: no sharing, the lone cost
    assert _two_senders(spec + ",routing=ugal", "none", protocol) == \
        pytest.approx([hand + LAT + 3 * H + G + s] * 2, rel=1e-9)


def test_min_cost_is_a_lower_bound():
    """Every pair of distinct ranks costs at least min_cost (several cores: intra_latency)."""
    for d in (small(), Dragonfly(groups=3, chassis=2, routers=3, terminals=1),
              Dragonfly(groups=4, chassis=1, routers=4, terminals=1, routing="valiant")):
        n = d.num_nodes()
        low = d.min_cost()
        assert all(d.cost(a, b, 0) >= low - 1e-18
                   for a, b in itertools.permutations(range(n), 2))
    assert small().min_cost() == pytest.approx(LAT + 2 * H)


def test_spec_round_trip_and_errors():
    """spec() rebuilds the model; bad values are refused with the key named."""
    d = build_network("dragonfly:groups=4,chassis=2,routers=2,terminals=3,routing=valiant,"
                      "seed=5,cores=2")
    assert build_network(d.spec()) == d
    for bad, word in [("groups=0", "groups"), ("routing=adaptive", "routing"),
                      ("arrangement=circ", "arrangement"), ("global_bandwidth=0", "global"),
                      ("seed=-1", "seed"), ("groups=20", "chassis\\*routers")]:
        with pytest.raises(NetworkSpecError, match=word):
            build_network(f"dragonfly:{bad}")


def test_inert_settings():
    """ugal without fluid contention, and Valiant with 2 groups, are named as inert."""
    assert any("ugal" in s for s in Dragonfly(routing="ugal").inert(False, "bsim"))
    assert Dragonfly(routing="ugal").inert(True, "bsim") == []
    assert any("3 groups" in s for s in small(routing="valiant").inert(True, "bsim"))


def test_default_machine_runs_a_halo_under_every_protocol():
    """The default dragonfly (16 groups x 16 routers x 16 terminals) places 64 ranks and runs
    halo2d under both protocols, with and without fluid contention, finish = calc+wait+comm."""
    from skeletons.halo2d import main
    for protocol, contention in itertools.product(["bsim", "loggp"], ["none", "fluid"]):
        res = bsim.simulate(main, ranks=64, network="dragonfly:cores=4", protocol=protocol,
                            contention=contention,
                            kwargs=dict(px=8, py=8, nx=256, ny=256, iterations=2))
        total = res.calc + res.wait + res.comm
        assert res.finish == pytest.approx(total, rel=1e-9)
        assert res.elapsed > 0
