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
