"""Physical invariants of every model combination (docs/protocols.md, "Invariants").

For every protocol (``bsim``; ``loggp`` eager, rendezvous, data moving at the
match, parallel injection) and contention mode (none, fluid; fluid with
latency-weighted shares and bytes moving after the latency) on flat, torus,
fat-tree and Blue Waters networks:

* a lone message costs exactly the uncontended model (hand formulas below);
* contention never makes any rank finish earlier;
* k equal messages through one bottleneck take about k*S/B, never k^2*S/B:
  no bandwidth share is charged twice;
* costs are monotone in message size (without contention, within one side of
  the eager limit);
* ``finish == calc + wait + comm`` on every rank.

Random traffic patterns come from hypothesis; the bounds are derived from the
models' formulas, never from bsim's own output.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bsim
from bsim import MPI
from netmodels import build_network

LAT, BW = 1e-6, 1e9
NETWORKS = {
    "hockney": f"hockney:latency={LAT},bandwidth={BW}",
    "loggp": f"loggp:L={LAT},o=5e-7,g=1e-6,G={1 / BW}",
    "torus": f"torus:dims=2x4,link_bandwidth={BW},latency={LAT},hop_latency=1e-7",
    "fattree": f"fattree:k=2,n=3,link_bandwidth={BW},latency={LAT},hop_latency=1e-7",
    "bluewaters": "bluewaters:supernodes=1,cores=1",
}
PROTOCOLS = ["bsim", "loggp", "loggp:eager_limit=0", "loggp:data=match",
             "loggp:injection=parallel"]
CONTENTION = ["none", "fluid", "fluid:share=latency,start=after_latency"]
RANKS = 8


def traffic(msgs, starts):
    """Every rank posts its receives, computes ``starts[r]``, sends, waits for all."""
    def main():
        comm = MPI.COMM_WORLD
        r = comm.rank
        reqs = [comm.Irecv(bsim.Buffer(n), source=s, tag=i)
                for i, (s, d, n) in enumerate(msgs) if d == r]
        bsim.add_time(starts[r])
        reqs += [comm.Isend(bsim.Buffer(n), dest=d, tag=i)
                 for i, (s, d, n) in enumerate(msgs) if s == r]
        MPI.Request.Waitall(reqs)
    return main


def run(msgs, starts, net, protocol, contention):
    return bsim.simulate(traffic(msgs, starts), ranks=RANKS, network=NETWORKS[net],
                         protocol=protocol, contention=contention)


def lone_time(net: str, protocol: str, n: int) -> float:
    """The receiver's finish for one message 0 -> 5 posted at time 0, by hand."""
    m = build_network(NETWORKS[net])
    m.prepare(RANKS)
    if protocol == "bsim":
        return m.cost(0, 5, n)                              # BSIM paper: l + s/w at the receiver
    o_s, o_r = m.send_overhead(n), m.recv_overhead(n)
    eager_limit = 0 if protocol == "loggp:eager_limit=0" else 65536
    if n > eager_limit and "data=match" not in protocol:    # request, clear-to-send, data
        return o_s + 2 * m.wire(0, 5, 0) + m.wire(0, 5, n) + o_r
    return o_s + m.wire(0, 5, n) + o_r                      # eager: o + wire + o


@pytest.mark.parametrize("contention", CONTENTION)
@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("net", sorted(NETWORKS))
def test_a_lone_message_costs_exactly_the_uncontended_model(net, protocol, contention):
    for n in (0, 1000, 1 << 20):
        res = run([(0, 5, n)], [0.0] * RANKS, net, protocol, contention)
        assert res.finish[5] == pytest.approx(lone_time(net, protocol, n), rel=1e-12)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("net", sorted(NETWORKS))
def test_k_messages_through_one_bottleneck_take_k_transfers_not_k_squared(net, protocol):
    """8 messages of 1 MB from rank 0 to rank 5 share one path: about 8 lone transfers."""
    k, n = 8, 1 << 20
    lone = lone_time(net, protocol, n)
    res = run([(0, 5, n)] * k, [0.0] * RANKS, net, protocol, "fluid")
    assert res.finish[5] <= k * lone * (1 + 1e-9)           # never k^2 * S/B
    m = build_network(NETWORKS[net])
    m.prepare(RANKS)
    transfer = m.wire(0, 5, n) - m.wire(0, 5, 0)            # the bytes' own time
    assert res.finish[5] >= k * transfer * (1 - 1e-9)       # nor free sharing


message = st.tuples(st.integers(0, RANKS - 1), st.integers(0, RANKS - 1),
                    st.sampled_from([0, 8, 4096, 65536, 70000, 1 << 20]))
patterns = st.tuples(
    st.lists(message, min_size=1, max_size=12).map(lambda ms: [m for m in ms if m[0] != m[1]]),
    st.lists(st.sampled_from([0.0, 1e-6, 5e-6, 1e-4, 1e-3]), min_size=RANKS, max_size=RANKS))


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("net", sorted(NETWORKS))
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=patterns)
def test_contention_and_size_only_ever_add_time(net, protocol, pattern):
    msgs, starts = pattern
    if not msgs:
        return
    base = run(msgs, starts, net, protocol, "none")
    fluid = run(msgs, starts, net, protocol, "fluid")
    weighted = run(msgs, starts, net, protocol, CONTENTION[2])
    # larger, but on the same side of the eager limit: a message turning rendezvous stops
    # holding its sender's NIC, which may let a later one leave earlier (as in real MPI)
    # (without contention: under max-min sharing a larger message can slow a competitor of
    # a third flow and so let that one finish a little earlier -- fair, not monotone)
    limit = 0 if "eager_limit=0" in protocol else 65536   # (0 bytes is eager even there)
    bigger = run([(s, d, min(2 * n + 1, limit) if n <= limit else 2 * n) for s, d, n in msgs],
                 starts, net, protocol, "none")
    # a sender whose one NIC serves rendezvous data to several receivers in the order their
    # clear-to-sends arrive: a larger earlier message to one receiver delays that receiver's
    # handshake (pair order), so another receiver is served first and finishes earlier
    # -- first-come-first-served scheduling, not monotone (docs/protocols.md, invariant 5)
    fcfs = "loggp" in protocol and "injection=parallel" not in protocol and any(
        len({d for s2, d, _ in msgs if s2 == s}) > 1 for s, _, _ in msgs)
    for r in range(RANKS):
        for res in (base, fluid, weighted, bigger):
            assert math.isclose(res.finish[r], res.calc[r] + res.wait[r] + res.comm[r],
                                rel_tol=1e-9, abs_tol=1e-15)
        assert fluid.finish[r] >= base.finish[r] * (1 - 1e-12), r     # contention adds
        assert weighted.finish[r] >= base.finish[r] * (1 - 1e-12), r
        if not fcfs:
            assert bigger.finish[r] >= base.finish[r] * (1 - 1e-12), r    # monotone in size
    # no share charged twice: all messages one after another bound everything
    m = build_network(NETWORKS[net])
    m.prepare(RANKS)
    serial = sum(lone_time(net, protocol, n) + m.cost(s, d, n) for s, d, n in msgs)
    assert fluid.elapsed <= max(starts) + serial
    assert weighted.elapsed <= max(starts) + serial


COLLECTIVES = ["analytic", "algorithmic", "clog:c=0,d=0", "clog:c=2e-6,d=1e-6"]


def mixed():
    """Point-to-point and collectives, some cheaper than a message (clog c=d=0)."""
    comm = MPI.COMM_WORLD
    r, p = comm.rank, comm.size
    for it in range(2):
        bsim.add_time(1e-6 * r)
        comm.Sendrecv(bsim.Buffer(4096), dest=(r + 1) % p, recvbuf=bsim.Buffer(4096),
                      source=(r - 1) % p)
        comm.Allreduce(bsim.Buffer(8), bsim.Buffer(8))
        comm.Bcast(bsim.Buffer(100000), root=it)
        comm.Alltoall(bsim.Buffer(64 * p), bsim.Buffer(64 * p))
        req = comm.Iallreduce(bsim.Buffer(8), bsim.Buffer(8))
        big = comm.Isend(bsim.Buffer(70000), dest=(r + 3) % p)   # rendezvous under loggp
        comm.Recv(bsim.Buffer(70000), source=(r - 3) % p)
        MPI.Request.Waitall([req, big])
        comm.Barrier()


@pytest.mark.parametrize("collectives", COLLECTIVES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("net", sorted(NETWORKS))
def test_every_combination_runs_and_keeps_the_invariants(net, protocol, collectives):
    """Exhaustive small case: each network x protocol x collective source, with and without
    contention, completes; accounting holds; contention never shortens a rank's time."""
    runs = {c: bsim.simulate(mixed, ranks=RANKS, network=NETWORKS[net], protocol=protocol,
                             collectives=collectives, contention=c) for c in CONTENTION}
    for res in runs.values():
        assert np.allclose(res.finish, res.calc + res.wait + res.comm, rtol=1e-9, atol=1e-15)
    for mode in CONTENTION[1:]:
        assert np.all(runs[mode].finish >= runs["none"].finish * (1 - 1e-12)), mode
