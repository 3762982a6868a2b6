"""Fluid contention inside the engine: messages in flight share link bandwidth.

Times are derived by hand: a message of ``S`` bytes alone on a path of
bandwidth ``B`` moves its bytes in ``S/B``; ``k`` equal messages sharing one
link from the same instant each take ``k*S/B``.  Latency terms are added as
the model's own formula says (``latency + hops*hop_latency``).  Powers of two
keep the float arithmetic exact.
"""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bsim
from bsim import MPI
from netmodels import build_network, simulate_flows

S = 2**20                    # bytes per message
B = 2.0**30                  # link bandwidth, bytes/second: S/B = 2**-10 s
LAT = 2.0**-20               # end-point latency, seconds
PROTOCOLS = ["bsim", f"loggp:eager_limit={2 * S}", "loggp:eager_limit=0"]   # eager, rendezvous


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-18)


def exchange(pairs, nbytes=S, starts=None):
    """Each (src, dst) pair sends one message; receivers post first, all wait at once."""
    def main():
        comm = MPI.COMM_WORLD
        r = comm.Get_rank()
        reqs = [comm.Irecv(bsim.Buffer(nbytes), source=s, tag=i)
                for i, (s, d) in enumerate(pairs) if d == r]
        if starts is not None:
            bsim.add_time(starts[r])
        reqs += [comm.Isend(bsim.Buffer(nbytes), dest=d, tag=i)
                 for i, (s, d) in enumerate(pairs) if s == r]
        MPI.Request.Waitall(reqs)
    return main


def ring(hop_latency: float = 0.0) -> str:
    return (f"torus:dims=8,link_bandwidth={B},latency={LAT},hop_latency={hop_latency},"
            f"cores=1")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_two_messages_sharing_a_torus_link_take_twice_as_long(protocol):
    """Ring of 8: 0->2 and 1->3 share link (1,+): each moves its bytes in 2*S/B."""
    net = ring()
    model = build_network(net)
    assert set(model.route(0, 2)) & set(model.route(1, 3)) == {(1, 0, 1)}
    alone = bsim.simulate(exchange([(0, 2)]), ranks=8, network=net, protocol=protocol,
                          contention="fluid")
    both = bsim.simulate(exchange([(0, 2), (1, 3)]), ranks=8, network=net, protocol=protocol,
                         contention="fluid")
    rdv = 2 * LAT if protocol.endswith("=0") else 0.0   # request-to-send + clear-to-send
    assert close(alone.finish[2], rdv + LAT + S / B)
    assert close(both.finish[2], rdv + LAT + 2 * S / B)
    assert close(both.finish[3], rdv + LAT + 2 * S / B)
    # the transfer itself (finish minus latencies) takes exactly twice as long
    assert close((both.finish[2] - rdv - LAT) / (alone.finish[2] - rdv - LAT), 2.0)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_without_contention_sharing_costs_nothing(protocol):
    """The stateless model (no fabric) charges the lone time to both messages."""
    res = bsim.simulate(exchange([(0, 2), (1, 3)]), ranks=8, network=ring(), protocol=protocol)
    rdv = 2 * LAT if protocol.endswith("=0") else 0.0
    assert close(res.finish[2], rdv + LAT + S / B) and close(res.finish[3], rdv + LAT + S / B)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("pairs", [[(0, 2), (4, 6)], [(0, 2), (2, 0)], [(0, 3), (3, 0), (4, 7)]])
def test_disjoint_paths_do_not_interfere(protocol, pairs):
    """Messages on disjoint links (other ring segment, opposite direction) keep S/B."""
    net = ring(hop_latency=2.0**-22)
    model = build_network(net)
    routes = [set(model.route(s, d)) for s, d in pairs]
    assert all(not (a & b) for i, a in enumerate(routes) for b in routes[i + 1:])
    res = bsim.simulate(exchange(pairs), ranks=8, network=net, protocol=protocol,
                        contention="fluid")
    rdv = 2 * LAT if protocol.endswith("=0") else 0.0
    for s, d in pairs:
        hops = model.hops(s, d)
        # rendezvous control messages travel the same route: 2 * (LAT + hops*h)
        ctrl = (2 * (LAT + hops * 2.0**-22)) if rdv else 0.0
        assert close(res.finish[d], ctrl + LAT + hops * 2.0**-22 + S / B)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_oversubscribed_fattree_uplink_slows_cross_leaf_traffic_3x(protocol):
    """ds1-style leaves (36 ports, 3:1): 27 nodes -> other leaf, 3 flows per uplink."""
    net = (f"fattree:leaf_ports=36,oversubscription=3,leaves=2,link_bandwidth={B},"
           f"latency={LAT},hop_latency=0")
    model = build_network(net)
    pairs = [(i, 27 + i) for i in range(27)]
    uplinks = [lk for s, d in pairs for lk in model.route(s, d) if lk[1:3] == ("up", 1)]
    assert len(set(uplinks)) == 9                     # d-mod-k spreads over the 9 uplinks
    rdv = 2 * LAT if protocol.endswith("=0") else 0.0
    cross = bsim.simulate(exchange(pairs), ranks=54, network=net, protocol=protocol,
                          contention="fluid")
    for _, d in pairs:
        assert close(cross.finish[d], rdv + LAT + 3 * S / B)
    # the same traffic inside one leaf crosses no shared link: S/B each
    local = [(i, (i + 1) % 27) for i in range(27)]
    inside = bsim.simulate(exchange(local), ranks=54, network=net, protocol=protocol,
                           contention="fluid")
    for _, d in local:
        assert close(inside.finish[d], rdv + LAT + S / B)


def test_staggered_start_matches_fluid_hand_derivation():
    """Link of B: A (S bytes) at 0, B (S bytes) at S/(2B): A ends 1.5 S/B, B ends 2 S/B."""
    net = ring()
    half = S / B / 2
    res = bsim.simulate(exchange([(0, 2), (1, 3)], starts=[0.0, half] + [0.0] * 6), ranks=8,
                        network=net, contention="fluid", protocol="bsim")
    # A: S/2 alone, then S/2 at B/2 -> done at half + S/B; B: S/2 shared, S/2 alone
    assert close(res.finish[2], LAT + half + S / B)
    assert close(res.finish[3], LAT + 2 * S / B)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_latency_weighted_shares_split_a_link_by_route_latency(protocol):
    """Ring of 8 with hop latency H: 0->1 (1 hop) and 7->1 (2 hops) share link (0,+).

    ``share=latency`` weighs them 1/H and 1/(2H): 0->1 moves at 2B/3 and ends
    at 1.5 S/B; 7->1 has moved S/2 by then and ends S/(2B) later, at 2 S/B.
    ``share=equal`` gives both B/2: both end at 2 S/B.
    """
    H = 2.0**-22
    net = ring(H)
    model = build_network(net)
    assert set(model.route(0, 1)) & set(model.route(7, 1)) == {(0, 0, 1)}
    pairs = [(0, 1), (7, 1)]
    weighted = bsim.simulate(exchange(pairs), ranks=8, network=net, protocol=protocol,
                             contention="fluid:share=latency")
    assert weighted.contention == "fluid:share=latency"
    equal = bsim.simulate(exchange(pairs), ranks=8, network=net, protocol=protocol,
                          contention="fluid")
    lone = LAT + 2 * H + S / B   # 7->1 alone; 0->1 alone is H less
    # the receiver's finish is its last message: 2 S/B in both modes (weights move bytes
    # between flows, not the total); the first message's end shows the weighting
    assert close(equal.finish[1], weighted.finish[1])
    assert weighted.finish[1] >= lone + S / B * (1 - 1e-12)

    def first_done():
        comm = MPI.COMM_WORLD
        r = comm.Get_rank()
        if r == 1:
            a = comm.Irecv(bsim.Buffer(S), source=0, tag=0)
            b = comm.Irecv(bsim.Buffer(S), source=7, tag=1)
            a.Wait()
            t = MPI.Wtime()
            b.Wait()
            return t
        if r in (0, 7):
            comm.Send(bsim.Buffer(S), dest=1, tag=0 if r == 0 else 1)
        return None

    got = bsim.simulate(first_done, ranks=8, network=net, protocol="loggp:injection=parallel,"
                        "data=match", contention="fluid:share=latency")
    assert close(got.returns[1], LAT + H + 1.5 * S / B)
    got = bsim.simulate(first_done, ranks=8, network=net, protocol="loggp:injection=parallel,"
                        "data=match", contention="fluid")
    assert close(got.returns[1], LAT + H + 2 * S / B)


def test_flows_that_start_after_their_latency_share_later():
    """Ring of 8, hop latency H, equal shares: 0->1 (latency H) and 7->1 (2H) share (0,+).

    ``start=after_latency``: 0->1 enters at H and is alone until 7->1 enters at 2H,
    so it has moved B*H by then; both then move at B/2: 0->1 ends at
    2H + 2(S - BH)/B = 2S/B, 7->1 has BH left and ends H later.  Arrivals add the
    end-point latency LAT: LAT + 2S/B and LAT + H + 2S/B -- each H earlier than with
    ``start=send`` (LAT + H + 2S/B and LAT + 2H + 2S/B).  ``loggp`` with data moving
    at the send (its overheads, the same in both runs, cancel in the differences).
    """
    H = 2.0**-22
    net = ring(H)

    def arrivals():
        comm = MPI.COMM_WORLD
        r = comm.Get_rank()
        if r == 1:
            reqs = [comm.Irecv(bsim.Buffer(S), source=src, tag=0) for src in (0, 7)]
            times = []
            for req in reqs:
                req.Wait()
                times.append(MPI.Wtime())
            return times
        if r in (0, 7):
            comm.Send(bsim.Buffer(S), dest=1, tag=0)
        return None

    proto = "loggp:injection=parallel"
    late = bsim.simulate(arrivals, ranks=8, network=net, protocol=proto,
                         contention="fluid:start=after_latency")
    assert late.contention == "fluid:start=after_latency"
    now = bsim.simulate(arrivals, ranks=8, network=net, protocol=proto, contention="fluid")
    (a0, a1), (b0, b1) = now.returns[1], late.returns[1]
    assert close(a0 - b0, H) and close(a1 - b1, H)      # each H earlier
    assert b0 > 2 * S / B                                # and both still shared the link


@pytest.mark.parametrize("share", ["equal", "latency"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_incremental_solver_matches_reference_fluid(seed, share):
    """Random sizes and starts on a 4x4 torus: every receive ends at the exact fluid finish.

    Senders 0..15 sit on nodes 0..15 (core 0), receivers 16..31 on core 1; under
    ``bsim`` the receive ends at ``fluid finish + latency + hops*hop_latency``.  The
    reference is ``simulate_flows``, with weights ``1 / route latency`` for
    ``share=latency`` (weighted max-min).
    """
    rng = random.Random(seed)
    H = 2.0**-22
    net = (f"torus:dims=4x4,link_bandwidth={B},latency={LAT},hop_latency={H},cores=2,"
           f"mapping=roundrobin:nodes=16")
    model = build_network(net)
    model.prepare(32)
    perm = list(range(16))
    rng.shuffle(perm)
    sizes = [rng.choice([2**16, 2**18, 2**20, 3 * 2**19]) for _ in range(16)]
    starts = [rng.choice([0.0, 2.0**-12, 2.0**-11, 3 * 2.0**-12]) for _ in range(16)]

    def main():
        comm = MPI.COMM_WORLD
        r = comm.Get_rank()
        if r < 16:
            bsim.add_time(starts[r])
            comm.Send(bsim.Buffer(sizes[r]), dest=16 + perm[r])
        else:
            src = perm.index(r - 16)
            comm.Recv(bsim.Buffer(sizes[src]), source=src)

    res = bsim.simulate(main, ranks=32, network=net, contention=f"fluid:share={share}",
                        protocol="bsim")
    cap = {lk: bw for lk, (bw, _) in model.links().items()}
    flows = [(r, model.route(r, 16 + perm[r]), float(sizes[r]), starts[r]) for r in range(16)]
    weights = None
    if share == "latency":
        weights = {r: 1.0 / (len(links) * H) for r, links, _, _ in flows if links}
        assert len(set(weights.values())) > 1, "the draw must mix route lengths"
    fluid = simulate_flows([f for f in flows if f[1]], cap, weights)
    for r in range(16):
        dst = 16 + perm[r]
        if flows[r][1]:
            expected = fluid[r] + LAT + len(flows[r][1]) * H
        else:   # same node: intra-node model, no fluid
            expected = starts[r] + model.cost(r, dst, sizes[r])
        assert math.isclose(res.finish[dst], expected, rel_tol=1e-9), (r, dst)


def test_contention_spec_is_checked():
    with pytest.raises(ValueError, match="share=equal|latency,start=send|after_latency"):
        bsim.simulate(exchange([(0, 1)]), ranks=8, network=ring(), contention="fluid:share=rtt",
                      protocol="bsim")
    with pytest.raises(ValueError, match="unknown contention model 'static'"):
        bsim.simulate(exchange([(0, 1)]), ranks=8, network=ring(), contention="static",
                      protocol="bsim")


def test_twolevel_nic_shared_by_the_cores_of_a_node():
    """4 cores, 1 NIC: 4 simultaneous inter-node messages each take 4*S/B; 2 NICs: 2*S/B."""
    inter = f"hockney:latency={LAT};bandwidth={B}"
    pairs = [(i, 4 + i) for i in range(4)]
    for nics, factor in [(1, 4), (2, 2), (4, 1)]:
        net = f"twolevel:cores=4,nics={nics},inter={inter},intra=hockney:latency=0;bandwidth=1e12"
        res = bsim.simulate(exchange(pairs), ranks=8, network=net, contention="fluid",
                            protocol="bsim")
        for _, d in pairs:
            assert close(res.finish[d], LAT + factor * S / B)
        flat = bsim.simulate(exchange(pairs), ranks=8, network=net, protocol="bsim")
        assert all(close(flat.finish[d], LAT + S / B) for _, d in pairs)


def test_twolevel_intra_node_messages_do_not_use_the_nic():
    """Messages between cores of one node bypass the NIC: no sharing with inter-node traffic."""
    net = (f"twolevel:cores=4,nics=1,inter=hockney:latency={LAT};bandwidth={B},"
           f"intra=hockney:latency=0;bandwidth={4 * B}")
    res = bsim.simulate(exchange([(0, 4), (1, 2), (3, 2)]), ranks=8, network=net,
                        contention="fluid", protocol="bsim")
    assert close(res.finish[4], LAT + S / B)          # alone on node 0's NIC
    # rank 2 receives two intra-node messages, paid one after the other (bsim rule)
    assert close(res.finish[2], 2 * S / (4 * B))


def test_loggp_pair_order_kept_when_a_later_message_would_finish_first():
    """0 sends S then 1 byte to 2 while 1->3 shares a link: the small one never overtakes."""
    def main():
        comm = MPI.COMM_WORLD
        r = comm.Get_rank()
        if r == 0:
            comm.Isend(bsim.Buffer(S), dest=2, tag=1)
            comm.Isend(bsim.Buffer(1), dest=2, tag=2)
        elif r == 1:
            comm.Send(bsim.Buffer(S), dest=3)
        elif r == 2:
            st = MPI.Status()
            comm.Recv(bsim.Buffer(S), source=0, tag=MPI.ANY_TAG, status=st)
            first = (st.Get_tag(), MPI.Wtime())
            comm.Recv(bsim.Buffer(S), source=0, tag=MPI.ANY_TAG, status=st)
            return first, (st.Get_tag(), MPI.Wtime())
        elif r == 3:
            comm.Recv(bsim.Buffer(S), source=1)

    res = bsim.simulate(main, ranks=8, network=ring(), protocol=f"loggp:eager_limit={2 * S}",
                        contention="fluid")
    (tag1, t1), (tag2, t2) = res.returns[2]
    assert (tag1, tag2) == (1, 2)
    # big 0->2 and 1->3 share link (1,+) at B/2 each.  The 1-byte message is injected
    # after the big one's gap, at S/B, and shares the link at B/3 for 3/B seconds: its
    # bytes are through at S/B + 3/B.  The big one moved S/2, then 1 byte, then the rest
    # at B/2: done at 2S/B + 1/B.  The small one is held back to the big one's arrival.
    assert close(t1, LAT + 2 * S / B + 1 / B)
    assert t2 == t1


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_flat_model_shares_each_ranks_nic(protocol):
    """Hockney has no links: each rank's NIC is one sending and one receiving link.

    Three messages out of rank 0 share its sending NIC (each ``3 S/B``); three
    disjoint pairs share nothing (``S/B``); three into rank 3 share its receiving
    NIC (``3 S/B``).  The latency is added once, as Hockney's formula says.
    """
    net = f"hockney:latency={LAT},bandwidth={B}"

    def finish(pairs, rank):
        res = bsim.simulate(exchange(pairs), ranks=6, network=net, protocol=protocol,
                            contention="fluid")
        return res.finish[rank]

    rdv = 2 * LAT if protocol.endswith("=0") else 0.0   # request-to-send + clear-to-send
    assert close(finish([(0, 1)], 1), rdv + LAT + S / B)
    assert close(finish([(0, 1), (0, 2), (0, 3)], 3), rdv + LAT + 3 * S / B)
    assert close(finish([(0, 1), (2, 3), (4, 5)], 5), rdv + LAT + S / B)
    # bsim: the receiver handles one message at a time, each alone on its NIC
    incast = 3 * (LAT + S / B) if protocol == "bsim" else rdv + LAT + 3 * S / B
    assert close(finish([(0, 3), (1, 3), (2, 3)], 3), incast)


def test_contention_needs_a_known_mode():
    """Unknown contention modes raise, naming the valid ones."""
    with pytest.raises(ValueError, match="unknown contention model 'static'; valid: none, fluid"):
        bsim.simulate(exchange([(0, 1)]), ranks=8, network=ring(), contention="static",
                      protocol="bsim")


def test_contention_runs_are_deterministic():
    """Two runs on a fat-tree (string link ids) give bit-identical per-rank times."""
    net = f"fattree:k=2,n=3,link_bandwidth={B},latency={LAT}"
    pairs = [(i, 7 - i) for i in range(8)] + [(i, (i + 3) % 8) for i in range(8)]
    runs = [bsim.simulate(exchange(pairs), ranks=8, network=net, protocol="loggp",
                          contention="fluid") for _ in range(2)]
    assert runs[0].finish.tolist() == runs[1].finish.tolist()
    assert runs[0].comm.tolist() == runs[1].comm.tolist()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_accounting_invariant_holds_under_contention(protocol):
    """finish == calc + wait + comm for every rank of a contended halo exchange."""
    from skeletons.halo2d import main as halo
    res = bsim.simulate(halo, ranks=16, network=f"torus:dims=2x2x2,link_bandwidth={B},cores=2",
                        protocol=protocol, contention="fluid",
                        kwargs=dict(px=4, py=4, nx=4096, ny=4096, iterations=3))
    total = res.calc + res.wait + res.comm
    assert all(math.isclose(f, t, rel_tol=1e-9) for f, t in zip(res.finish, total, strict=True))


def test_adaptive_fat_tree_routing_spreads_flows_over_up_ports():
    """Two messages from one leaf whose d-mod-k routes share an up link (and no down link)
    take 2 S/B each with static routing; adaptive routing sends the second one through the
    idle up port, so both take S/B.  The pair is found from the model's own routes.
    """
    import netmodels

    S, B = 1_000_000, 1e9
    static = netmodels.build_network(f"fattree:k=2,n=3,link_bandwidth={B},latency=0,"
                                     f"hop_latency=0")
    static.prepare(8)
    # find two sources on one leaf and two destinations whose static routes share an up
    # link but no down link: then only the up port is contended
    pair = None
    for s1, s2 in ((0, 1),):
        for d1 in range(2, 8):
            for d2 in range(2, 8):
                if d1 == d2:
                    continue
                r1, r2 = set(static.route(s1, d1)), set(static.route(s2, d2))
                shared = r1 & r2
                if shared and all(link[1] == "up" for link in shared):
                    pair = (s1, d1, s2, d2)
    assert pair is not None
    s1, d1, s2, d2 = pair

    def main():
        comm = MPI.COMM_WORLD
        r = comm.rank
        if r in (s1, s2):
            comm.Send(bsim.Buffer(S), dest=d1 if r == s1 else d2)
        elif r in (d1, d2):
            comm.Recv(bsim.Buffer(S), source=s1 if r == d1 else s2)

    spec = f"fattree:k=2,n=3,link_bandwidth={B},latency=0,hop_latency=0"
    shared = bsim.simulate(main, ranks=8, network=spec, contention="fluid", protocol="bsim")
    spread = bsim.simulate(main, ranks=8, network=spec + ",routing=adaptive",
                           contention="fluid", protocol="bsim")
    assert shared.finish[d1] == pytest.approx(2 * S / B, rel=1e-12)
    assert spread.finish[d1] == pytest.approx(S / B, rel=1e-12)
    assert spread.finish[d2] == pytest.approx(S / B, rel=1e-12)


def test_paths_from_a_contention_flows_hook_are_kept_per_links_tuple() -> None:
    """A model's ``contention_flows`` is asked per message; what its links imply (ids,
    1 / bottleneck capacity, weight, latency) is kept per links tuple, and links given as
    a list (unhashable) are taken without being kept: the same paths either way."""
    from bsim.engine.fabric_routes import LinkTable

    net = build_network("twolevel:cores=2,nics=1,intra=hockney:latency=1e-7;bandwidth=1e10,"
                        "inter=hockney:latency=2e-6;bandwidth=2e9")
    net.prepare(8)
    table = LinkTable(net, 8, share="latency")
    first = table.hook_paths(0, 5, 4096)
    again = table.hook_paths(0, 5, 8192)   # other size, same links: kept
    assert len(table.hook_cache) == 1
    assert again[0][0] == first[0][0] and again[0][2:] == first[0][2:]
    assert again[0][1] == pytest.approx(2 * first[0][1], rel=1e-6)   # the size part
    fresh = LinkTable(net, 8, share="latency")
    hook = fresh.hook
    fresh.hook = lambda s, d, n: [(list(links), size) for links, size in hook(s, d, n)]
    assert fresh.hook_paths(0, 5, 4096) == first and not fresh.hook_cache
    (ids, _, inverse, weight, latency), = first
    assert inverse == 1.0 / min(fresh.cap[i] for i in ids)
    assert latency == sum(fresh.lat[i] for i in ids)
    assert weight == 1.0 / (latency if latency > 0 else fresh._floor)


def test_weighted_shares_follow_a_flow_that_joins_later() -> None:
    """``share=latency`` keeps each link's weight sum between settles: a flow that joins a
    link after it was summed must change the sum.  On an 8-ring, 0->3 (3 hops) runs alone,
    then 1->2 (1 hop, 3 times the weight) joins their shared link; the finishes are the
    weighted fluid reference's (``simulate_flows``)."""
    H = 2.0**-22
    net = f"torus:dims=8,link_bandwidth={B},latency={LAT},hop_latency={H}"
    model = build_network(net)
    model.prepare(8)
    size, join = float(2**20), 2.0**-12

    def main():
        r = MPI.COMM_WORLD.Get_rank()
        if r == 0:
            MPI.COMM_WORLD.Send(bsim.Buffer(int(size)), dest=3)
        elif r == 1:
            bsim.add_time(join)
            MPI.COMM_WORLD.Send(bsim.Buffer(int(size)), dest=2)
        elif r in (2, 3):
            MPI.COMM_WORLD.Recv(bsim.Buffer(int(size)), source=r - 1 if r == 2 else 0)

    res = bsim.simulate(main, ranks=8, network=net, contention="fluid:share=latency",
                        protocol="bsim")
    cap = {lk: bw for lk, (bw, _) in model.links().items()}
    flows = [(0, model.route(0, 3), size, 0.0), (1, model.route(1, 2), size, join)]
    assert set(flows[1][1]) < set(flows[0][1])   # the later flow's link is the first's too
    fluid = simulate_flows(flows, cap, {r: 1.0 / (len(links) * H) for r, links, _, _ in flows})
    assert fluid[0] > join   # they do share the link for a while
    for src, dst in ((0, 3), (1, 2)):
        hops = len(flows[src][1])
        assert math.isclose(res.finish[dst], fluid[src] + LAT + hops * H, rel_tol=1e-9)


def _solver(caps, weighted):
    """A bare max-min solver over links of capacities *caps* (the layer's per-link state)."""
    from bsim.engine.fabric_solver import MaxMinSolver
    s = MaxMinSolver()
    s._init_solver(list(caps), weighted)
    return s


@settings(max_examples=300, deadline=None)
@given(caps=st.lists(st.floats(1e6, 1e12, allow_nan=False), min_size=1, max_size=12),
       pick=st.lists(st.integers(0, 11), min_size=1, max_size=8),
       w=st.floats(1e3, 1e7, allow_nan=False), weighted=st.booleans())
def test_a_lone_flow_gets_the_rate_progressive_filling_gives_bit_for_bit(caps, pick, w,
                                                                         weighted):
    """The lone-flow shortcut (smallest capacity of its route, (min cap / n) * w) gives the
    same float as the general progressive filling, for any capacities and weight; and
    that rate is the route's smallest capacity to within rounding (max-min with one
    flow: it fills its narrowest link)."""
    links = tuple(dict.fromkeys(i % len(caps) for i in pick))
    weight = w if weighted else 1.0
    rates = []
    for alone in (True, False):
        s = _solver(caps, weighted)
        slot = s._open(links, weight, 1.0, 0.0, 1)
        for i, lk in enumerate(links):   # the links a settle's search would have found
            s._seen[i] = lk
        if alone:
            s._fill_alone(len(links), slot)
        else:
            s._fill_shared(len(links))
        rates.append(s._fnew[slot])
    assert rates[0] == rates[1]
    assert rates[0] == pytest.approx(min(caps[lk] for lk in links), rel=1e-15)


def test_collectives_priced_by_formulas_under_contention_are_counted_and_warned():
    """A formula prices a collective contention-free and without network noise
    (docs/collectives.md): a run that models either says how many calls it priced so
    (Result.formula_collectives, the JSON, a summary warning).  Two blocking collectives
    and one nonblocking: 3 under fluid with formulas, 1 (the Ibarrier, a formula in
    every mode) with --collectives algorithmic, 0 (nothing to warn about) without
    contention or noise."""
    def main():
        comm = MPI.COMM_WORLD
        n = 1024 * comm.size
        comm.Alltoall(bsim.Buffer(n), bsim.Buffer(n))
        comm.Barrier()
        comm.Ibarrier().Wait()

    net = "torus:dims=4x2x2"
    fluid = bsim.simulate(main, ranks=16, network=net, contention="fluid", protocol="bsim")
    assert fluid.formula_collectives == 3
    assert "3 collective calls were priced by formulas, without the contention" in \
        fluid.summary()
    assert fluid.to_dict()["formula_collectives"] == 3
    noisy = bsim.simulate(main, ranks=16, network=net, noise="net:mean=2e-6", protocol="bsim")
    assert "without the network noise" in noisy.summary()
    expanded = bsim.simulate(main, ranks=16, network=net, contention="fluid",
                             collectives="algorithmic", protocol="bsim")
    assert expanded.formula_collectives == 1
    plain = bsim.simulate(main, ranks=16, network=net, protocol="bsim")
    assert plain.formula_collectives == 0 and "formula_collectives" not in plain.to_dict()
    assert "priced by formulas" not in plain.summary()


def test_contention_spec_names_are_case_insensitive_and_options_given_once():
    """FLUID is fluid, as network and protocol names ignore case; an option given twice
    is refused (it silently took the last value), as network specs refuse it."""
    from bsim.engine.fabric_options import parse_contention
    assert parse_contention("FLUID:share=latency") == ("fluid", {"share": "latency"})
    assert parse_contention("None") == ("none", {})
    with pytest.raises(ValueError, match="share given twice"):
        parse_contention("fluid:share=equal,share=latency")


def test_a_flat_models_path_is_its_nic_pair_kept_per_rank_pair() -> None:
    """Hockney 1 us, 1 GB/s on 8 ranks: a message from 0 to 5 is one path over rank 0's
    sending and rank 5's receiving NIC (links of 1 s/s, each half the 1 us latency), its
    size the lone transfer time ``(1e-6 + s/1e9) - 1e-6``; what the pair implies is kept per
    rank pair; a message to oneself and a 0-byte message make no path."""
    from bsim.engine.fabric_routes import LinkTable

    net = build_network("hockney:latency=1e-6,bandwidth=1e9")
    table = LinkTable(net, 8, share="latency")
    (ids, size, inverse, weight, latency), = table.flat_paths(0, 5, 4096)
    assert [table.link_ids[i] for i in ids] == [("nic", 0, "out"), ("nic", 5, "in")]
    assert size == (1e-6 + 4096 / 1e9) - 1e-6 and inverse == 1.0
    assert latency == 0.5e-6 + 0.5e-6 and weight == 1.0 / latency
    again = table.flat_paths(0, 5, 8192)
    assert again[0][0] is ids and list(table.hook_cache) == [0 * 8 + 5]
    assert table.flat_paths(3, 3, 4096) == () and table.flat_paths(0, 5, 0) == ()
