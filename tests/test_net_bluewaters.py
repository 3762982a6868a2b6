"""Blue Waters (PERCS) model from the modeling tutorial: hierarchy, routes, costs, contention."""

from __future__ import annotations

from collections import Counter

import pytest

from netmodels import BlueWaters, GridMapping2D, NetworkSpecError, build_network, percs_cost
from netmodels.topology import link_loads


def _grid_model():
    bw = BlueWaters(mapping=GridMapping2D(32, 32))
    bw.prepare(1024)
    return bw


def _loads_by_class(loads):
    return Counter((link[0], count) for link, count in loads.items())


def test_hierarchy_sizes():
    """8 cores x 4 chips = 32 per QCM; x 8 QCMs x 4 drawers = 1024 per SN; 513 SNs max."""
    bw = build_network("bluewaters:supernodes=513")
    assert bw.num_nodes() == 513 * 32 and bw.cores == 32
    assert bw.num_nodes() * bw.cores == 525312
    with pytest.raises(NetworkSpecError):
        build_network("bluewaters:supernodes=514")


def test_2d_grid_plus_x_contention_4_on_LI():
    """32x32 in one SN, +X: a QCM's 4-rank right edge feeds one LI link: C = 4, no Lr.
    The edge spans the QCM's two right chips (4x2 ranks each), 2 messages per chip's W."""
    bw = _grid_model()
    pairs = [(x + 32 * y, (x + 1) % 32 + 32 * y) for x in range(32) for y in range(32)]
    by_class = _loads_by_class(link_loads(bw, pairs))
    # 32 QCMs each send right over one LI link (row of 4 QCMs is inside one drawer);
    # 2 chips a QCM send (x = 7) and 2 receive (x = 0)
    assert by_class == Counter({("LI", 4): 32, ("W+", 2): 64, ("W-", 2): 64})


def test_2d_grid_plus_y_contention_8_on_LI_or_Lr():
    """+Y: a QCM's 8-rank top edge feeds one link, LI inside a drawer, Lr across: C = 8;
    the edge is 2 chips of 4 columns, 4 messages per chip's W."""
    bw = _grid_model()
    pairs = [(x + 32 * y, x + 32 * ((y + 1) % 32)) for x in range(32) for y in range(32)]
    by_class = _loads_by_class(link_loads(bw, pairs))
    # 8 QCM rows: rows 0->1, 2->3, 4->5, 6->7 in a drawer (16 LI); the other 4 steps cross (16 Lr)
    assert by_class == Counter({("LI", 8): 16, ("Lr", 8): 16, ("W+", 4): 64, ("W-", 4): 64})


def test_grid_mapping_tiles():
    """(0,0) and (7,3) share QCM 0; (8,0) is QCM 1; (0,4) is QCM 4; (0,8) is drawer 1 (QCM 8)."""
    m = GridMapping2D(32, 32)
    m.prepare(1024)
    assert m.node_of(0) == m.node_of(7 + 32 * 3) == 0
    assert m.node_of(8) == 1 and m.node_of(32 * 4) == 4 and m.node_of(32 * 8) == 8
    assert sorted(Counter(m.nodes).values()) == [32] * 32
    assert m.core_of(4) == 8            # (4,0): chip 1, first core


def test_cost_intra_drawer():
    """QCM 0 -> QCM 1: MPI 0.5 + W 0.05 + LI 0.1 + W 0.05 = 0.7 us, then S / 15 GB/s."""
    bw = BlueWaters()
    assert bw.route(0, 32) == (("W+", 0, 0), ("LI", 0, 1), ("W-", 1, 0))
    # core 24 is on chip 3, core 8 (rank 40) on chip 1: their own W links
    assert bw.route(24, 40) == (("W+", 0, 3), ("LI", 0, 1), ("W-", 1, 1))
    assert bw.cost(0, 32, 15000) == pytest.approx(0.7e-6 + 1e-6, rel=1e-12)


def test_cost_intra_sn_other_drawer():
    """QCM 0 -> QCM 8 (drawer 1): 0.5 + 0.05 + 0.2 + 0.05 = 0.8 us, then S / 4 GB/s (Lr)."""
    bw = BlueWaters()
    assert bw.route(0, 8 * 32) == (("W+", 0, 0), ("Lr", 0, 8), ("W-", 8, 0))
    assert bw.cost(0, 8 * 32, 4000) == pytest.approx(0.8e-6 + 1e-6, rel=1e-12)


def test_cost_same_qcm():
    """Ranks 0 and 31 share QCM 0: intra parameters (0.5 us MPI stack, 15 GB/s assumed)."""
    bw = BlueWaters()
    assert bw.route(0, 31) == ()
    assert bw.cost(0, 31, 15000) == pytest.approx(0.5e-6 + 1e-6, rel=1e-12)


def test_direct_inter_sn():
    """2 SNs, QCM 0 -> QCM 32: cable 0->1 leaves Hub 0, lands on Hub 32: 0.9 us + S / 7 GB/s."""
    bw = build_network("bluewaters:supernodes=2")
    assert bw.route_nodes(0, 32) == (("W+", 0, 0), ("D", 0, 1), ("W-", 32, 0))
    assert bw.route_nodes(1, 34) == (("W+", 1, 0), ("LI", 1, 0), ("D", 0, 1), ("LI", 32, 34),
                                     ("W-", 34, 0))
    assert bw.cost(0, 32 * 32, 7000) == pytest.approx(0.9e-6 + 1e-6, rel=1e-12)


def test_d_links_per_hub_513():
    """513 SNs: 512 D cables per SN over 32 Hubs = 16 per Hub (tutorial: D max 16)."""
    bw = build_network("bluewaters:supernodes=513")
    per_hub = Counter(bw.d_owner(0, t) for t in range(1, 513))
    assert set(per_hub.values()) == {16} and len(per_hub) == 32


def test_indirect_route_uses_128_middle_sns():
    """Indirect: a drawer's 8 Hubs x 16 D = 128 middle SNs; the route has two D hops."""
    bw = build_network("bluewaters:supernodes=513,routing=indirect")
    # destination SN 40: its D cable from SN 0 is j=39 -> Hub 7, in drawer 0: 127 left
    assert len(bw.middle_candidates(0, 40)) == 127
    assert len(bw.middle_candidates(0, 500)) == 128
    route = bw.route_nodes(0, 40 * 32)
    kinds = [link[0] for link in route]
    assert kinds.count("D") == 2 and kinds[0] == "W+" and kinds[-1] == "W-"
    assert kinds[1] in ("LI", "D")          # first step stays in the drawer


def test_striping_bounded_by_w():
    """Striping: Lr over 24 channels is faster than W, so S / 15 GB/s bounds the time."""
    bw = build_network("bluewaters:striping=true")
    s = 15 * 10**6
    assert bw.cost(0, 8 * 32, s) == pytest.approx(0.8e-6 + 1e-3, rel=1e-12)
    # one 2 KB packet cannot be striped: a 1 KB message still pays S / 4 GB/s on Lr
    assert bw.cost(0, 8 * 32, 1000) == pytest.approx(0.8e-6 + 1000 / 4e9, rel=1e-12)


def test_percs_cost_formula():
    """sum L_i + max(C_i*(S/N_i)/B_i): LI with C=4 vs W: 0.2 us + 4*1.5e6/15e9 = 0.4002 ms."""
    hops = [(0.05e-6, 15e9, 1, 4), (0.1e-6, 15e9, 1, 4), (0.05e-6, 15e9, 1, 4)]
    assert percs_cost(1.5e6, hops) == pytest.approx(0.2e-6 + 4e-4, rel=1e-12)
    assert percs_cost(1e6, [(1e-7, 1e9, 4, 1)]) == pytest.approx(1e-7 + 2.5e-4)
    assert percs_cost(1e6, []) == 0.0


def test_links_and_min_cost():
    """One SN: 32 x 4 W+ and W- (W x4, one per chip), 32*7 LI, 32*24 Lr; min cost
    0.5 + 0.05*2 + 0.1 us."""
    links = BlueWaters().links()
    kinds = Counter(link[0] for link in links)
    assert kinds == Counter({"W+": 128, "W-": 128, "LI": 224, "Lr": 768})
    assert BlueWaters().min_cost() == pytest.approx(0.5e-6)   # intra-QCM bound
    assert BlueWaters(cores=1).min_cost() == pytest.approx(0.7e-6)


def test_all_to_all_in_one_supernode_loads_each_li_and_lr_with_32_x_32():
    """The tutorial's intra-SN all-to-all (one of DNS3D's transposes): every core of a hub
    sends to every core of every other hub over that pair's direct link, so C = 32 x 32 =
    1,024 on each LI and each Lr, and each of a hub's 4 W links the 8 x 992 messages of
    its chip's 8 cores."""
    bw = build_network("bluewaters:supernodes=1")
    bw.prepare(1024)
    pairs = [(a, b) for a in range(1024) for b in range(1024) if a // 32 != b // 32]
    by_class = _loads_by_class(link_loads(bw, pairs))
    # 32 hubs: 7 LI peers in the drawer and 24 Lr peers in the other drawers each
    assert by_class == Counter({("LI", 1024): 32 * 7, ("Lr", 1024): 32 * 24,
                                ("W+", 8 * 992): 128, ("W-", 8 * 992): 128})


def test_the_2d_placement_is_a_mapping_spec():
    """mapping=grid2d:px=32;py=32 (reachable from --network) places ranks as GridMapping2D,
    so the +X contention of the tutorial's 2-D example follows from a spec string."""
    bw = build_network("bluewaters:supernodes=1,mapping=grid2d:px=32;py=32")
    bw.prepare(1024)
    ref = _grid_model()
    assert [bw.node_of(r) for r in range(1024)] == [ref.node_of(r) for r in range(1024)]
    pairs = [(x + 32 * y, (x + 1) % 32 + 32 * y) for x in range(32) for y in range(32)]
    assert _loads_by_class(link_loads(bw, pairs))[("LI", 4)] == 32
    with pytest.raises(NetworkSpecError, match="tiles AxB"):
        build_network("bluewaters:supernodes=1,mapping=grid2d:px=32;py=32;chip=4-2")


@pytest.mark.parametrize("spec", [
    "bluewaters:supernodes=2,d_latency=0,cores=1",          # W+ D W- beats W+ LI W-
    "bluewaters:supernodes=3,routing=indirect,d_latency=0.01e-6,cores=1",
    "bluewaters:supernodes=3,routing=indirect,striping=true,cores=1",
    "bluewaters:supernodes=2,lr_latency=0.05e-6,li_latency=0.2e-6,cores=1",   # Lr cheapest
    "bluewaters:supernodes=1,cores=2",                      # intra-QCM 0.5 us the bound
    "bluewaters:supernodes=2,intra_latency=2e-6,cores=2",
])
def test_min_cost_is_a_lower_bound_over_every_pair(spec):
    """min_cost() (the lookahead of distributed runs and of message visibility) is at most
    cost(src, dst, 0) over every pair of distinct ranks, and equals the cheapest one."""
    bw = build_network(spec)
    n = bw.num_nodes() * bw.cores
    bw.prepare(n)
    cheapest = min(bw.cost(a, b, 0) for a in range(n) for b in range(n) if a != b)
    assert bw.min_cost() <= cheapest
    if "indirect" not in spec:     # indirect routes cross two D links: the bound is lower
        assert bw.min_cost() == pytest.approx(cheapest, rel=1e-12)


def test_min_cost_with_a_free_d_link():
    """supernodes=2, d_latency=0: QCM 0 -> QCM 32 is W+ D W- (the cable 0->1 leaves Hub 0
    and lands on Hub 32): 0.5 + 0.05 + 0 + 0.05 = 0.6 us, below W+ LI W- (0.7 us)."""
    bw = build_network("bluewaters:supernodes=2,d_latency=0,cores=1")
    assert [link[0] for link in bw.route(0, 32)] == ["W+", "D", "W-"]
    assert bw.cost(0, 32, 0) == pytest.approx(0.6e-6, rel=1e-12)
    assert bw.min_cost() == pytest.approx(0.6e-6, rel=1e-12)


def _chips_to_other_qcms(pairs):
    import bsim
    from bsim import MPI

    def main():
        comm = MPI.COMM_WORLD
        r = comm.Get_rank()
        for src, dst in pairs:
            if r == src:
                comm.Send(bsim.Buffer(2**20), dest=dst)
            elif r == dst:
                comm.Recv(bsim.Buffer(2**20), source=src)
    return bsim.simulate(main, 1024, machine="bluewaters", contention="fluid", protocol="bsim")


def test_each_chip_has_its_own_w_link_under_fluid():
    """W (x4): one core on each of the 4 P7 chips of QCM 0 (cores 0, 8, 16, 24) sends 1 MiB
    to QCMs 1..4 at once (the preset: striping).  Each crosses its own chip's W+, Hub 0's
    pool of 7 LI links (7 x 15 GB/s shared by four: 26 GB/s each, faster than W) and the
    receiver's chip-0 W-, so each takes the lone time 0.5 + 0.05 + 0.1 + 0.05 us
    + 2^20 B / 15 GB/s = 70.605 us.  With one
    W per QCM the four shared it and took 4 x 69.9 + 0.7 = 280.3 us.  Two cores of one chip
    (0 and 1) still share its W: 2 x 69.905 + 0.7 us."""
    lone = 0.7e-6 + 2**20 / 15e9
    four = [(0, 32), (8, 64), (16, 96), (24, 128)]
    res = _chips_to_other_qcms(four)
    assert [res.finish[d] for _, d in four] == pytest.approx([lone] * 4, rel=1e-9)
    res = _chips_to_other_qcms([(0, 32), (1, 64)])
    assert [res.finish[d] for d in (32, 64)] == pytest.approx(
        [0.7e-6 + 2 * 2**20 / 15e9] * 2, rel=1e-9)


def test_flat_variant_latency_is_a_topology_route():
    """The preset's flat view prices every message as the direct inter-SN route W+ LI D W-
    (QCM 1 -> SN 1: LI to Hub 0, which owns the cable 0 -> 1 landing on Hub 32): 0.5 + 2 x
    0.05 + 0.1 + 0.3 = 1.0 us, W crossed up and down as on every route (0.95 us counted
    one W)."""
    from bsim.machines import network_spec
    flat = build_network(network_spec("bluewaters:flat"))
    bw = build_network("bluewaters:supernodes=2,routing=direct")
    assert [link[0] for link in bw.route(32, 1024)] == ["W+", "LI", "D", "W-"]
    assert flat.cost(0, 1, 0) == pytest.approx(bw.cost(32, 1024, 0), rel=1e-12)
    assert flat.cost(0, 1, 0) == pytest.approx(1.0e-6, rel=1e-12)
