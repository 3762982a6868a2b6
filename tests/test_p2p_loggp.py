"""Point-to-point timing under the ``loggp`` protocol, derived by hand from LogGP."""

from __future__ import annotations

import math

import pytest

import bsim
from bsim import MPI

Lw, o, g, G = 5e-6, 1e-6, 2e-6, 1e-9
NET = f"loggp:L={Lw},o={o},g={g},G={G}"


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-18)


def test_eager_pingpong_is_o_plus_bytes_plus_L_plus_o():
    """One eager message end to end: o + (s-1)G + L + o."""
    s = 1001

    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            comm.Send(bsim.Buffer(s), dest=1)
        else:
            comm.Recv(bsim.Buffer(s), source=0)

    res = bsim.simulate(main, ranks=2, network=NET, protocol="loggp")
    one_way = o + (s - 1) * G + Lw + o
    assert close(res.finish[1], one_way)
    assert res.finish[0] == o and res.comm[0] == o        # eager: the sender pays o only
    assert close(res.comm[1], one_way) and res.wait[1] == 0.0


@pytest.mark.parametrize("T", [1e-3, 1e-6])
def test_irecv_add_time_wait_overlaps(T):
    """Data arriving during add_time costs only o at the wait; a short compute waits for it."""
    s = 2001

    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            req = comm.Irecv(bsim.Buffer(s), source=1)
            bsim.add_time(T)
            req.Wait()
        else:
            comm.Send(bsim.Buffer(s), dest=0)

    res = bsim.simulate(main, ranks=2, network=NET, protocol="loggp")
    arrival = o + (s - 1) * G + Lw      # sent at 0: overhead, then bytes and latency
    assert close(res.finish[0], max(T, arrival) + o)
    # the partner called Send at 0 <= T: nothing of the blocked time is wait
    assert res.wait[0] == 0.0
    assert close(res.comm[0], max(0.0, arrival - T) + o)
    assert res.calc[0] == T


def test_bsim_protocol_does_not_overlap_the_same_program():
    """Same program under bsim: T + full cost (the contrast with loggp)."""
    T, s = 1e-3, 2001

    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            req = comm.Irecv(bsim.Buffer(s), source=1)
            bsim.add_time(T)
            req.Wait()
        else:
            comm.Send(bsim.Buffer(s), dest=0)

    res = bsim.simulate(main, ranks=2, network=NET, protocol="bsim")
    assert close(res.finish[0], T + 2 * o + (s - 1) * G + Lw)


def test_injection_is_serialized_by_the_gap():
    """Three eager messages from one rank leave max(g, (s-1)G) apart."""
    s = 1001   # (s-1)G = 1 us < g = 2 us: the gap is g

    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            for dst in (1, 2, 3):
                comm.Send(bsim.Buffer(s), dest=dst)
        else:
            comm.Recv(bsim.Buffer(s), source=0)

    res = bsim.simulate(main, ranks=4, network=NET, protocol="loggp")
    # k-th send (k = 0, 1, 2) is called at k*o; NIC start = max(k*o + o, free) = o + k*g
    for k, dst in enumerate((1, 2, 3)):
        start = o + k * g
        assert close(res.finish[dst], start + (s - 1) * G + Lw + o)
    assert close(res.finish[0], 3 * o)


def test_rendezvous_makes_the_sender_wait_for_a_late_receiver():
    """Above eager_limit: RTS, CTS after the receive is posted, then data; sender waits."""
    s, D = 100_001, 1e-3

    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            comm.Send(bsim.Buffer(s), dest=1)
        else:
            bsim.add_time(D)
            comm.Recv(bsim.Buffer(s), source=0)

    res = bsim.simulate(main, ranks=2, network=NET, protocol="loggp:eager_limit=1024")
    bytes_time = (s - 1) * G          # 100 us >= g
    start = D + Lw                    # CTS leaves at D (receiver posts), arrives L later
    # sender: o of overhead, blocked until injection ends; the receiver was late by D - o
    assert close(res.finish[0], start + bytes_time)
    assert close(res.wait[0], D - o)
    assert close(res.comm[0], o + Lw + bytes_time)
    # receiver: data arrives at start + (s-1)G + L, then o
    assert close(res.finish[1], start + bytes_time + Lw + o)
    assert res.wait[1] == 0.0


def test_eager_message_below_the_limit_does_not_wait():
    """The same late receiver with an eager message: the sender returns after o."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            comm.Send(bsim.Buffer(512), dest=1)
        else:
            bsim.add_time(1e-3)
            comm.Recv(bsim.Buffer(512), source=0)

    res = bsim.simulate(main, ranks=2, network=NET, protocol="loggp:eager_limit=1024")
    assert res.finish[0] == o


def test_ssend_is_synchronous_even_when_small():
    """Ssend uses rendezvous: the sender finishes only after the receiver posts."""
    D = 1e-3

    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            comm.Ssend(bsim.Buffer(8), dest=1)
        else:
            bsim.add_time(D)
            comm.Recv(bsim.Buffer(8), source=0)

    res = bsim.simulate(main, ranks=2, network=NET, protocol="loggp")
    gap = max(g, 7 * G)
    assert close(res.finish[0], D + Lw + gap)


def test_small_message_does_not_overtake_a_large_one():
    """A small message sent after a large one to the same rank is matched and done after it."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            comm.Send(bsim.Buffer(1_000_001), dest=1, tag=1)
            comm.Send(bsim.Buffer(1), dest=1, tag=2)
        else:
            st = MPI.Status()
            comm.Recv(bsim.Buffer(1_000_001), source=0, tag=MPI.ANY_TAG, status=st)
            first = (st.tag, MPI.Wtime())
            comm.Recv(bsim.Buffer(1_000_001), source=0, tag=MPI.ANY_TAG, status=st)
            return first, (st.tag, MPI.Wtime())

    res = bsim.simulate(main, ranks=2, network=NET, protocol="loggp:eager_limit=10000000")
    (tag1, t1), (tag2, t2) = res.returns[1]
    assert (tag1, tag2) == (1, 2)
    # large: injected at o, NIC busy max(g, 1e6 G) = 1 ms, arrives o + 1e6 G + L.  small:
    # called at o, injected when the NIC frees at o + 1 ms, arrives o + 1 ms + 0*G + L (the
    # same instant).  First receive: arrival + o; second (posted then): + o.
    big_arrival = o + 1_000_000 * G + Lw
    assert close(t1, big_arrival + o)
    assert close(t2, big_arrival + 2 * o)


def test_data_at_match_moves_bytes_once_the_receive_is_posted():
    """``data=match`` (SMPI's rule): a small send returns at once, its bytes leave when the
    receive is posted; above the eager limit the sender also waits for the data to arrive."""
    import bsim as _bsim
    from bsim import MPI as _MPI
    lat, bw, late = 1e-6, 1e9, 1e-3

    def main(n):
        comm = _MPI.COMM_WORLD
        if comm.rank == 0:
            comm.Send(_bsim.Buffer(n), dest=1)
        else:
            _bsim.add_time(late)
            comm.Recv(_bsim.Buffer(n), source=0)

    for n in (1000, 1 << 20):
        res = _bsim.simulate(main, ranks=2, network=f"hockney:latency={lat},bandwidth={bw}",
                             protocol="loggp:data=match", kwargs={"n": n})
        arrival = late + lat + n / bw          # starts at the post, no handshake
        assert res.finish[1] == pytest.approx(arrival, rel=1e-12)
        sender = 0.0 if n <= 65536 else arrival
        assert res.finish[0] == pytest.approx(sender, rel=1e-12, abs=1e-15)


# -- messages between ranks of one node do not pass through the NIC ---------------------
NODE = "torus:dims=4,cores=8,link_bandwidth=1e9,latency=2e-6,hop_latency=1e-7," \
       "intra_bandwidth=2e10,intra_latency=5e-7"
S = 10**6
COPY = 5e-7 + S / 2e10     # intra_latency + S / intra_bandwidth = 50.5 us


def _fan_out(ranks):
    def main():
        comm = MPI.COMM_WORLD
        r = comm.Get_rank()
        if r == 0:
            MPI.Request.Waitall([comm.Isend(bsim.Buffer(S), dest=d) for d in ranks])
        elif r in ranks:
            comm.Recv(bsim.Buffer(S), source=0)
    return main


@pytest.mark.parametrize("eager_limit", [10**8, 1000])
def test_on_node_messages_do_not_queue_on_the_nic(eager_limit):
    """Rank 0 sends 1 MB to each of its 7 node-mates: each copy takes the intra-node
    ``intra_latency + S / intra_bandwidth`` from when it may start (eager: at once;
    rendezvous: after a request-to-send and a clear-to-send of 0 bytes, 2 x 0.5 us), not
    ``S / link_bandwidth`` = 1 ms more per message behind the others on the NIC."""
    res = bsim.simulate(_fan_out(range(1, 8)), ranks=8, network=NODE,
                        protocol=f"loggp:eager_limit={eager_limit}")
    handshake = 0.0 if eager_limit > S else 2 * 5e-7
    for r in range(1, 8):
        assert close(res.finish[r], handshake + COPY)
    if handshake:   # the sender's buffer is read until its copy is through
        assert close(res.finish[0], handshake + S / 2e10)


def test_an_inter_node_message_does_not_wait_behind_on_node_copies():
    """Two on-node copies, then a message to the next node: it leaves the NIC at once and
    arrives after latency + 1 hop + S / link_bandwidth (the torus's own formula)."""
    res = bsim.simulate(_fan_out([1, 2, 8]), ranks=16, network=NODE,
                        protocol="loggp:eager_limit=100000000")
    assert close(res.finish[1], COPY) and close(res.finish[2], COPY)
    assert close(res.finish[8], 2e-6 + 1e-7 + S / 1e9)


def test_collectives_on_one_node_expanded_or_by_formula_agree():
    """An allreduce and a bcast among the 8 ranks of one node: the expansion into messages
    (which now never touch the NIC) costs what the formula, priced at intra-node rates, does."""
    def main():
        comm = MPI.COMM_WORLD
        comm.Allreduce(bsim.Buffer(8 * 10**5), bsim.Buffer(8 * 10**5))
        comm.Bcast(bsim.Buffer(S), root=0)

    ends = [bsim.simulate(main, ranks=8, network=NODE, protocol="loggp",
                          collectives=how).elapsed for how in ("analytic", "algorithmic")]
    assert close(ends[0], ends[1])


def test_network_noise_keeps_the_nodes():
    """With network noise (here of mean 0: no delay) the run still knows its nodes: the
    on-node copies of loggp take the intra-node time, not the NIC's turn after the others
    (the noise wrapper's placement was the base class's None)."""
    res = bsim.simulate(_fan_out(range(1, 8)), ranks=8, network=NODE,
                        protocol="loggp:eager_limit=100000000", noise="net:mean=0")
    for r in range(1, 8):
        assert close(res.finish[r], COPY)
