"""Flat families: piecewise Tmsg(L) (tutorial), LogGP by size range (MILC paper), two-level."""

from __future__ import annotations

import math

import pytest

from netmodels import LogGPRanges, NetworkSpecError, Piecewise, TwoLevel, build_network


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-18)


@pytest.mark.parametrize("size,expected", [
    (0, 5e-6), (32, 5e-6),                        # 0 <= L <= 32: 5 us
    (33, 5e-6 + 33 * 15e-9), (1024, 5e-6 + 1024 * 15e-9),   # up to 1024: 5 us + 15 ns L
    (1025, 10e-6 + 1025 * 3.4e-9), (12000, 10e-6 + 12000 * 3.4e-9),   # 10 us + 3.4 ns L
])
def test_piecewise_defaults_are_the_tutorials_three_pieces(size, expected):
    """The modeling tutorial, 'A Time-Based View of Communication': the slide's Tmsg(L)."""
    m = build_network("piecewise")
    assert close(m.cost(0, 1, size), expected)
    assert m.cost(3, 3, size) == 0.0
    assert m.wire(0, 1, size) == m.cost(0, 1, size)


def test_piecewise_spec_grammar_round_trips_and_accepts_semicolons():
    """Lists use '/' (';' accepted); spec() rebuilds an equal model; one value broadcasts."""
    m = build_network("piecewise:breaks=64;512,t0=1e-6;2e-6;4e-6,tb=1e-9")
    assert m == build_network(m.spec())
    assert m.spec() == "piecewise:breaks=64/512,t0=1e-06/2e-06/4e-06,tb=1e-09/1e-09/1e-09"
    assert close(m.cost(0, 1, 100), 2e-6 + 100e-9)
    assert m.piece(64) == 0 and m.piece(65) == 1 and m.piece(513) == 2
    assert close(m.gap(0, 1000), 1000e-9)
    assert m.min_cost() == 1e-6


def test_piecewise_matches_the_es40_preset_variant():
    """The es40 tutorial_piecewise variant ('/'-separated TOML strings) builds the defaults."""
    from bsim.machines import network_spec
    assert build_network(network_spec("es40", "tutorial_piecewise")) == Piecewise()


@pytest.mark.parametrize("spec,match", [
    ("piecewise:breaks=64/32", "increase strictly"),
    ("piecewise:t0=1e-6/2e-6", "needs 3 values"),
    ("piecewise:tb=-1", ">= 0"),
    ("piecewise:breaks=1.5", "whole numbers"),
    ("loggp_ranges:o=a/b", "expected numbers"),
])
def test_bad_lists_raise_naming_the_key(spec, match):
    """Malformed per-range lists raise NetworkSpecError with the key."""
    with pytest.raises(NetworkSpecError, match=match):
        build_network(spec)


@pytest.mark.parametrize("size,o,G", [(1, 14e-6, 1.3e-9), (32768, 14e-6, 1.3e-9),
                                      (32769, 40e-6, 1.1e-9), (10**6, 40e-6, 1.1e-9)])
def test_loggp_ranges_defaults_are_power5_inter_rows(size, o, G):
    """The MILC paper Table (Netgauge, inter-node): L 5.8 us, g 3.3 us, o and G per range."""
    m = LogGPRanges()
    L, g = 5.8e-6, 3.3e-6
    assert close(m.cost(0, 1, size), 2 * o + (size - 1) * G + L)
    assert m.send_overhead(size) == o and m.recv_overhead(size) == o
    assert close(m.gap(0, size), max(g, (size - 1) * G))
    assert close(m.wire(0, 1, size), (size - 1) * G + L)
    assert close(m.cost(0, 1, size), m.send_overhead(size) + m.wire(0, 1, size)
                 + m.recv_overhead(size))
    assert m.min_cost() == 2 * 14e-6 + 5.8e-6


def test_twolevel_picks_intra_or_inter_by_node():
    """cores=4 block: ranks 0-3 on node 0; intra for 0->3, inter for 0->4."""
    m = build_network("twolevel:cores=4,intra=hockney:latency=1e-7;bandwidth=1e10,"
                      "inter=hockney:latency=2e-6;bandwidth=1e9")
    m.prepare(8)
    assert close(m.cost(0, 3, 1000), 1e-7 + 1000 / 1e10)
    assert close(m.cost(0, 4, 1000), 2e-6 + 1000 / 1e9)
    assert m.cost(2, 2, 1000) == 0.0
    assert m.min_cost() == 1e-7
    assert m == build_network(m.spec())
    # rank 1 is core 1 of node 0, rank 5 core 1 of node 1: NIC 1 % 2 of each, out and in
    assert m.route(0, 3) == () and m.route(1, 5) == (("nic", 0, 1), ("nic_in", 1, 1))
    assert m.links() == {(way, node, k): (1.0, 0.0) for way in ("nic", "nic_in")
                         for node in (0, 1) for k in (0, 1)}


def test_twolevel_loggp_split_keeps_end_to_end_exact():
    """POWER5+ defaults: each pair is charged its own row's overheads and wire, so
    o_s + wire + o_r = cost; the wire alone is the row's (``L + (s-1) G``), so a
    rendezvous's 0-byte control messages carry no overhead (they carried the pair's
    overhead excess over the smaller row's, three times per rendezvous: +20%)."""
    m = TwoLevel()
    m.prepare(32)
    for src, dst in [(0, 1), (0, 16)]:
        for size in (100, 40000):
            total = (m.pair_send_overhead(src, dst, size) + m.wire(src, dst, size)
                     + m.pair_recv_overhead(src, dst, size))
            assert close(total, m.cost(src, dst, size))
    assert close(m.wire(0, 16, 0), 5.8e-6) and close(m.wire(0, 1, 0), 2.7e-6)   # L
    assert close(m.pair_send_overhead(0, 16, 100), 14e-6)
    assert close(m.pair_send_overhead(0, 1, 100), 3.5e-6)
    assert close(m.cost(0, 1, 100), 2 * 3.5e-6 + 99 * 0.68e-9 + 2.7e-6)    # intra row
    assert close(m.cost(0, 16, 100), 2 * 14e-6 + 99 * 1.3e-9 + 5.8e-6)     # inter row


def test_twolevel_rejects_nested_topologies_and_oversubscribed_nodes():
    """Inner models must be flat; a mapping may not put more than cores ranks on a node."""
    with pytest.raises(NetworkSpecError, match="must be a flat model"):
        build_network("twolevel:inter=torus:dims=4")
    m = build_network("twolevel:cores=2,mapping=roundrobin:nodes=2")
    with pytest.raises(NetworkSpecError, match="places 3 ranks on node 0"):
        m.prepare(6)


def test_twolevel_fluid_shares_the_receiving_nic_too():
    """An incast of k = 8 messages of s = 1 MB into one rank of a one-core-node twolevel
    network under fluid takes k s / C, as its inter model alone does (a NIC is full duplex: the
    receiver's NIC is shared as the sender's is); it took s / C, k times too fast."""
    import bsim
    from bsim import MPI
    inter = "hockney:latency=1e-6;bandwidth=1e9"

    def incast() -> None:
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            MPI.Request.Waitall([comm.Irecv(bsim.Buffer(1_000_000), source=r)
                                 for r in range(1, comm.size)])
        else:
            comm.Send(bsim.Buffer(1_000_000), dest=0)

    net = f"twolevel:cores=1,nics=1,intra=hockney:latency=1e-7;bandwidth=1e10,inter={inter}"
    res = bsim.simulate(incast, ranks=9, network=net, protocol="loggp", contention="fluid")
    # rendezvous (1 MB > the 64 KiB eager limit): request, clear-to-send, data: 3 latencies
    assert close(res.finish[0], 3 * 1e-6 + 8 * 1_000_000 / 1e9)
