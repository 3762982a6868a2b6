"""Blue Waters inter-SN contention with striping (modeling tutorial, "+X Dim", "+Y Dim",
"All-to-all example: inter-node"): fractional loads of indirect routing, derived by hand."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from netmodels import BlueWaters, GridMapping2D
from netmodels.bluewaters_striping import node_pair_counts, striped_link_loads, striped_step_loads
from netmodels.topology import link_loads


def _grid(cols: int, rows: int) -> tuple[BlueWaters, int, int]:
    px, py = 32 * cols, 32 * rows
    bw = BlueWaters(supernodes=cols * rows, routing="indirect", mapping=GridMapping2D(px, py))
    bw.prepare(px * py)
    return bw, px, py


@pytest.fixture(scope="module")
def bw513() -> tuple[BlueWaters, int, int]:
    return _grid(19, 27)          # 513 SNs, SN 0's +X neighbour is SN 1, its +Y one SN 19


def _by_value(loads: dict, kind: str) -> Counter:
    return Counter(round(v, 9) for link, v in loads.items() if link[0] == kind)


def test_plus_x_one_sn_pair_at_513_sns_puts_8_over_128_on_each_d_link(bw513):
    """+X face of SN 0 (x = 31) -> SN 1: each drawer holds 2 face QCMs of 4 rows, so 8
    messages, striped over its 8 Hubs x 16 D = 128 middle SNs: 8/128 on the first D hop
    (0 -> m) and on the second (m -> 1).  The cable 0 -> 1 leaves Hub 0, so drawer 0 has
    127 middles (8/127), and the cable itself is unused."""
    bw, px, _ = bw513
    pairs = [(31 + px * y, 32 + px * y) for y in range(32)]
    loads = striped_link_loads(bw, pairs)
    assert _by_value(loads, "D") == Counter({round(8 / 128, 9): 2 * 3 * 128,
                                             round(8 / 127, 9): 2 * 127})
    assert ("D", 0, 1) not in loads
    # first step: QCM 3 of drawer 1 (node 11) sends 4 messages, 16 of 128 routes per Hub
    for hub in range(8, 16):
        if hub != 11:
            assert loads[("LI", 11, hub)] == pytest.approx(4 * 16 / 128)


def test_plus_x_middle_step_is_8_over_128_on_li_or_lr(bw513):
    """In a middle SN m, A -> B crosses one Hub hop, from the landing Hub of cable 0 -> m
    (Hub (-m) mod 513 mod 32) to the exit Hub of m -> 1 (one further): the drawer's share
    8/128 (8/127), on LI, or on Lr when the two Hubs are in different drawers."""
    bw, px, _ = bw513
    counts = node_pair_counts(bw, [(31 + px * y, 32 + px * y) for y in range(32)])
    middle = striped_step_loads(bw, counts)["middle"]
    assert {round(v, 9) for v in middle.values()} == {round(8 / 128, 9), round(8 / 127, 9)}
    assert {link[0] for link in middle} == {"LI", "Lr"}
    for (kind, a, b) in middle:
        assert b % 32 == (a + 1) % 32 and (kind == "LI") == (a // 8 == b // 8)


def test_plus_y_one_sn_pair_at_513_sns_puts_32_over_128_on_each_d_link(bw513):
    """+Y face of SN 0 (y = 31) -> SN 19: the top row of 4 QCMs, all in drawer 3, each
    sending its 8 columns: 32 messages over drawer 3's 128 middle SNs (the cable 0 -> 19
    leaves Hub 18, drawer 2): 32/128 on 128 first and 128 second D hops; the middle hop
    carries 32/128 too."""
    bw, px, _ = bw513
    pairs = [(x + px * 31, x + px * 32) for x in range(32)]
    counts = node_pair_counts(bw, pairs)
    # each QCM's 8 columns are 2 chips of 4 (chips 2, 3 at its top, to chips 0, 1 above)
    assert sorted(counts.values()) == [4] * 8
    assert {key[2:] for key in counts} == {(2, 0), (3, 1)}
    steps = striped_step_loads(bw, counts)
    assert _by_value(steps["D"], "D") == Counter({0.25: 256})
    assert {round(v, 9) for v in steps["middle"].values()} == {0.25}


def test_plus_x_whole_exchange_doubles_every_d_link_65_sns():
    """Every SN sends +X (65 SNs, 13 x 5): 64 D cables per SN, 2 per Hub, so a drawer has
    16 middles (15 for the drawer owning the direct cable).  A cable s -> t carries s's
    first-hop share (8/16, s's +X messages via t) and a second-hop share (8/16, the
    messages into t of the SN whose +X neighbour is t, via s): every cable but the 65
    direct ones carries 2 x 8/16 (up to 2 x 8/15), and the D hops sum to 2 per message."""
    bw, px, py = _grid(13, 5)
    pairs = [(x + px * y, (x + 1) % px + px * y) for y in range(py) for x in range(px)]
    loads = striped_link_loads(bw, pairs)
    d = [v for link, v in loads.items() if link[0] == "D"]
    assert len(d) == 65 * 64 - 65
    assert min(d) == pytest.approx(2 * 8 / 16) and max(d) <= 2 * 8 / 15 + 1e-12
    assert sum(d) == pytest.approx(2 * 65 * 32)
    # intra-SN +X messages keep the tutorial's C = 4 on LI beside the middle-step shares
    assert max(v for link, v in loads.items() if link[0] == "LI") >= 4


def test_all_to_all_inter_node_direct_is_1024_per_d_link():
    """One of DNS3D's transposes across 4 SNs: core i of each SN to core i of the others.
    Direct routing: each of the 1024 cores of SN p sends one message over cable p -> q, so
    C = 1024 per D link and (#SN - 1) x 1024 over an SN's cables (tutorial: #SN x 1024);
    nothing is striped, so the loads equal link_loads'."""
    bw = BlueWaters(supernodes=4, routing="direct")
    bw.prepare(4 * 1024)
    pairs = [(1024 * p + i, 1024 * q + i) for p in range(4) for q in range(4) if p != q
             for i in range(1024)]
    loads = striped_link_loads(bw, pairs)
    assert loads == {k: float(v) for k, v in link_loads(bw, pairs).items()}
    assert _by_value(loads, "D") == Counter({1024: 12})
    assert sum(v for link, v in loads.items() if link[0] == "D" and link[1] == 0) == 3 * 1024


def test_intra_sn_loads_are_unstriped():
    """Inside one SN (routing=indirect or not) the striped loads are link_loads': +X C = 4."""
    bw, px, _ = _grid(1, 1)
    pairs = [(x + 32 * y, (x + 1) % 32 + 32 * y) for x in range(32) for y in range(32)]
    assert striped_link_loads(bw, pairs) == {k: float(v)
                                             for k, v in link_loads(bw, pairs).items()}


# -- the fluid contention layer stripes too ----------------------------------------------
def _fluid_pair_times(striping: bool) -> list[float]:
    """Two messages from QCMs 0 and 1 of SN 0 to QCMs 0 and 1 of SN 4 (5 SNs, one core per
    QCM, indirect routing), on links where only D is slow (bandwidth ``B``)."""
    import bsim
    from bsim import MPI

    size, bw, lat = 2**20, 2.0**30, 2.0**-20
    net = (f"bluewaters:supernodes=5,routing=indirect,striping={str(striping).lower()},"
           f"cores=1,latency={lat},w_latency=0,li_latency=0,lr_latency=0,d_latency=0,"
           f"w_bandwidth={2.0**50},li_bandwidth={2.0**50},lr_bandwidth={2.0**50},"
           f"d_bandwidth={bw}")
    pairs = [(0, 128), (1, 129)]

    def main():
        comm = MPI.COMM_WORLD
        r = comm.Get_rank()
        reqs = [comm.Irecv(bsim.Buffer(size), source=s) for s, d in pairs if d == r]
        reqs += [comm.Isend(bsim.Buffer(size), dest=d) for s, d in pairs if s == r]
        MPI.Request.Waitall(reqs)

    res = bsim.simulate(main, ranks=160, network=net, contention="fluid", protocol="bsim")
    return [res.finish[d] - lat for _, d in pairs]


def test_fluid_layer_stripes_indirect_messages_over_the_middle_sns():
    """By hand: SN 0's drawer 0 reaches middles 1, 2, 3 toward SN 4 (their D cables leave
    Hubs 0, 1, 2), so each message is 3 parts of S/3.  Both messages put a part on each
    D(0, m) and D(m, 4): 2 parts per D link, each at B/2, so a part takes
    (S/3)/(B/2) = 2S/(3B) -- the tutorial's C_i * (S/N_i) / B_i with C = 2, N = 3.  The
    model's lone cost already charges S/(3B) (N_D = 3); contention adds the other S/(3B).
    Without striping in the fluid layer each message took one middle (128 % 3 = 2 ->
    SN 3, 129 % 3 = 0 -> SN 1) and, though sharing nothing, arrived only when its S bytes
    had crossed one D link: S/B, three times the model's own striped cost."""
    bw5 = BlueWaters(supernodes=5, routing="indirect", striping=True, cores=1)
    assert bw5.middle_candidates(0, 4) == [1, 2, 3]
    parts = bw5.striped_flows(0, 128, 2**20)
    assert [lk for route, _ in parts for lk in route if lk[0] == "D"] == [
        ("D", 0, 3), ("D", 3, 4), ("D", 0, 1), ("D", 1, 4), ("D", 0, 2), ("D", 2, 4)]
    assert all(size == 2**20 / 3 for _, size in parts)
    s_over_b = 2**20 / 2.0**30
    for t in _fluid_pair_times(striping=True):
        assert math.isclose(t, 2 * s_over_b / 3, rel_tol=1e-9)


def test_fluid_layer_packets_bound_the_stripes_and_small_messages_keep_one_route():
    """``n = min(N, ceil(S / 2 KB))``: 3 KB goes in 2 parts, 1 KB in one; inside an SN
    and with striping off the model offers no parts hook (one cached route)."""
    bw = BlueWaters(supernodes=5, routing="indirect", striping=True, cores=1)
    assert [size for _, size in bw.striped_flows(0, 128, 3072)] == [1536.0, 1536.0]
    assert len(bw.striped_flows(0, 128, 1024)) == 1
    assert len(bw.striped_flows(0, 5, 2**20)) == 1 and bw.striped_flows(3, 3, 10) == ()
    assert not hasattr(BlueWaters(supernodes=5, routing="indirect"), "contention_flows")
    assert not hasattr(BlueWaters(supernodes=5, striping=True), "contention_flows")


@pytest.mark.parametrize("dst,hop_latency,hop_bandwidth,channels", [
    (3, 1e-7, 15e9, 7),     # QCM 0 -> 3, same drawer: one LI hop, 7 LI links striped
    (9, 2e-7, 4e9, 24),     # QCM 0 -> 9, another drawer: one Lr hop, 24 Lr links striped
])
@pytest.mark.parametrize("size", [1024, 8192, 2**20])
def test_a_lone_striped_message_under_fluid_costs_what_the_model_says(
        dst, hop_latency, hop_bandwidth, channels, size):
    """With striping (the preset's default) a message inside an SN costs
    ``latency + 2 L_W + L_hop + max(S / B_W, S / (n B_hop))`` with ``n = min(N,
    ceil(S / 2 KB))`` channels (the tutorial's striped cost).  The fluid layer once sent the
    bytes over the one Hub-to-Hub link and delivered a lone 1 MiB message over Lr at
    ``S / 4 GB/s`` (3.7x the cost); the Hub's pool of ``N`` links carries it now, and a
    lone message costs the same with and without contention (hand formula)."""
    import bsim
    from bsim import MPI

    net = "bluewaters:supernodes=1,striping=true,cores=1"

    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            comm.Send(bsim.Buffer(size), dest=dst)
        elif comm.rank == dst:
            comm.Recv(bsim.Buffer(size), source=0)

    n = min(channels, math.ceil(size / 2048))
    expected = 5e-7 + 2 * 5e-8 + hop_latency + max(size / 15e9, size / (n * hop_bandwidth))
    for contention in (None, "fluid"):
        res = bsim.simulate(main, ranks=dst + 1, network=net, contention=contention,
                            protocol="bsim")
        assert math.isclose(res.finish[dst], expected, rel_tol=1e-12), contention


@pytest.mark.parametrize("supernodes", [5, 9])
def test_a_lone_message_striped_over_middle_sns_costs_the_model_under_fluid(supernodes):
    """Indirect routing stripes an inter-SN message over the middle supernodes; its parts
    all cross the sender's and the receiver's chip links (W, 15 GB/s), so the message's
    bytes take ``S / B_W`` there whatever the split, the model's bottleneck (an outside
    review).  The fluid layer timed each part as if it had its route to itself (``(S/3)
    / 7 GB/s`` at 5 SNs) and charged the parts' sharing of the W links as contention: a
    lone 1 MiB message took 94.3 us at 5 SNs, 122.8 us at 9, against the model's 74.3 us.
    Now with contention and without agree (the invariant of docs/protocols.md)."""
    import bsim
    from bsim import MPI

    net = f"bluewaters:supernodes={supernodes},routing=indirect,striping=true"

    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 5:
            comm.Send(bsim.Buffer(1 << 20), dest=1024)
        elif comm.rank == 1024:
            comm.Recv(bsim.Buffer(1 << 20), source=5)

    times = [bsim.simulate(main, ranks=supernodes * 1024, network=net, protocol="loggp",
                           contention=contention).finish[1024] for contention in (None, "fluid")]
    assert math.isclose(times[1], times[0], rel_tol=1e-12), times
