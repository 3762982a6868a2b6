"""Point-to-point timing under the ``loggops`` protocol, each case derived by hand from the
rules of LogGOPS (Hoefler, Schneider, Lumsdaine, HPDC 2010) as its authors' simulator,
LogGOPSim, applies them (``docs/protocols.md``, "loggops protocol")."""

from __future__ import annotations

import math

import pytest

import bsim
from bsim import MPI

us = 1e-6
Lw, o, g, G = 5 * us, 1 * us, 2 * us, 1e-9
O = 2e-10
NET = f"loggp:L={Lw},o={o},g={g},G={G}"
PROTO = f"loggops:O={O},S=65536"


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-15)


def run(main, ranks: int, protocol: str = PROTO, network: str = NET) -> bsim.Result:
    return bsim.simulate(main, ranks=ranks, network=network, protocol=protocol)


def test_three_back_to_back_sends_are_spaced_by_the_larger_of_cpu_and_nic():
    """s = 1001: (s-1)G = 1 us, (s-1)O = 0.2 us.  Send k starts at 3k us (max(o + (s-1)O,
    g + (s-1)G) = max(1.2, 3) us apart); its first byte arrives at 3k + o + L = 3k + 6 us;
    each receiver's CPU is then busy o + max((s-1)O, (s-1)G) = 2 us: 8, 11, 14 us.  The
    sender's CPU is free after the last send's o + (s-1)O: 6 + 1.2 = 7.2 us."""
    s = 1001

    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            MPI.Request.Waitall([comm.Isend(bsim.Buffer(s), dest=d) for d in (1, 2, 3)])
        else:
            comm.Recv(bsim.Buffer(s), source=0)

    res = run(main, 4)
    assert close(res.finish[0], 7.2 * us)
    assert [round(f / us, 9) for f in res.finish[1:]] == [8.0, 11.0, 14.0]


def test_three_simultaneous_arrivals_share_the_receiving_nic_and_cpu():
    """Three ranks send 1,001 bytes at 0; all three first bytes arrive at o + L = 6 us.
    The receiver handles the first at 6 (CPU busy to 8, NIC to 6 + g + (s-1)G = 9), the
    second at max(8, 9) = 9 (CPU to 11, NIC to 12), the third at 12: done at 14 us.
    (``loggp`` has no reception gap: max(t, 7) + o each, 10 us.)"""
    s = 1001

    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            MPI.Request.Waitall([comm.Irecv(bsim.Buffer(s), source=r) for r in (1, 2, 3)])
        else:
            comm.Send(bsim.Buffer(s), dest=0)

    assert close(run(main, 4).finish[0], 14 * us)
    assert close(run(main, 4, protocol="loggp").finish[0], 10 * us)


def test_an_arrival_during_computation_is_handled_when_it_ends():
    """The first byte arrives at 6 us while the receiver computes until 10 us: its CPU
    handles the message from 10, busy o + (s-1)G = 2 us, done at 12 us (``loggp``: the
    data is in at 7, o at the wait: 11 us)."""
    s = 1001

    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            req = comm.Irecv(bsim.Buffer(s), source=1)
            bsim.add_time(10 * us)
            req.Wait()
        else:
            comm.Send(bsim.Buffer(s), dest=0)

    res = run(main, 2)
    assert close(res.finish[0], 12 * us)
    assert close(res.calc[0], 10 * us) and close(res.comm[0], 2 * us)
    assert close(run(main, 2, protocol="loggp").finish[0], 11 * us)


def test_a_rendezvous_send_completes_when_the_receiver_matches_it():
    """s = 100,001 > S: the sender's CPU is busy o + (s-1)O = 21 us; its first byte arrives
    at 6 us; the receiver computes until 50 us, then handles it: the match is at 50 us,
    which completes the send (29 us of the sender's wait), and the receiver's CPU is busy
    o + max((s-1)O, (s-1)G) = 101 us: 151 us."""
    s = 100001

    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            comm.Send(bsim.Buffer(s), dest=1)
        else:
            bsim.add_time(50 * us)
            comm.Recv(bsim.Buffer(s), source=0)

    res = run(main, 2)
    assert close(res.finish[0], 50 * us)
    assert close(res.comm[0], 21 * us) and close(res.wait[0], 29 * us)
    assert close(res.finish[1], 151 * us)


def test_an_eager_send_of_the_same_size_does_not_wait():
    """The same message below S (S = 200,000): the sender is done after o + (s-1)O."""
    s = 100001

    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            comm.Send(bsim.Buffer(s), dest=1)
        else:
            bsim.add_time(50 * us)
            comm.Recv(bsim.Buffer(s), source=0)

    res = run(main, 2, protocol=f"loggops:O={O},S=200000")
    assert close(res.finish[0], 21 * us) and close(res.finish[1], 151 * us)


def test_a_zero_byte_message_costs_o_plus_L_plus_o():
    """s = 0: no byte terms ((s-1) counts as 0): o + L + o = 7 us; the sender pays o."""

    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            comm.Send(bsim.Buffer(0), dest=1)
        else:
            comm.Recv(bsim.Buffer(0), source=0)

    res = run(main, 2)
    assert close(res.finish[0], 1 * us) and close(res.finish[1], 7 * us)


def test_a_per_byte_cpu_overhead_above_G_sets_the_receive_time():
    """O = 3 ns/B > G: the receiver's CPU is busy o + (s-1)O = 1 + 3 = 4 us after the first
    byte (6 us): 10 us; the sender's o + (s-1)O = 4 us."""
    s = 1001

    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            comm.Send(bsim.Buffer(s), dest=1)
        else:
            comm.Recv(bsim.Buffer(s), source=0)

    res = run(main, 2, protocol="loggops:O=3e-9")
    assert close(res.finish[0], 4 * us) and close(res.finish[1], 10 * us)


def halo_by_hand(s: int, C: float, iters: int, lat: float, oo: float, gg: float, GG: float,
                 OO: float) -> float:
    """LogGOPS's time of the halo (4 Isend, compute C, Waitall of 4 receives) on a
    periodic grid when every first byte arrives after the sender's last send and before
    its compute ends: per iteration the four sends take 3 max(o + (s-1)O, g + (s-1)G) +
    o + (s-1)O, then C, then four receptions, 3 max(o + max((s-1)O,(s-1)G), g + (s-1)G) +
    o + max((s-1)O, (s-1)G)."""
    b, c = (s - 1) * GG, (s - 1) * OO
    sends = 3 * max(oo + c, gg + b) + oo + c
    recvs = 3 * max(oo + max(b, c), gg + b) + oo + max(b, c)
    return iters * (sends + C + recvs)


def halo(nbytes: int, iters: int, compute: float) -> None:
    from bsim.validation.programs import halo2d
    halo2d(nbytes, iters, compute)


@pytest.mark.parametrize("ranks", [16, 64])
def test_the_halo_with_computation_matches_loggops_by_hand(ranks):
    """The 2-D halo with compute on a flat LogGP network, against the closed form."""
    s, C = 8192, 50 * us
    net = "loggp:L=1e-05,o=1e-06,g=1e-06,G=1e-10"
    res = run(lambda: halo(s, 3, C), ranks, protocol="loggops:O=1e-11", network=net)
    want = halo_by_hand(s, C, 3, 10 * us, 1 * us, 1 * us, 1e-10, 1e-11)
    assert res.elapsed == pytest.approx(want, rel=5e-3)
    loggp = run(lambda: halo(s, 3, C), ranks, protocol="loggp", network=net)
    assert loggp.elapsed < want * 0.99   # no reception gap, o_r only: faster


def test_the_ring_at_128_kib_matches_loggops_by_hand():
    """Irecv, Isend (rendezvous: 131,072 > S), compute C, Waitall.  Per iteration: the
    first byte arrives at o + L after the send; the CPU computes from o + (s-1)O until
    E = o + (s-1)O + C; the message is handled at h = max(E, o + L), which also completes
    the neighbour's send; the iteration ends at h + o + max((s-1)O, (s-1)G)."""
    s, C, iters = 131072, 20 * us, 4
    net = "loggp:L=5e-06,o=2e-06,g=1e-06,G=2e-10"
    oo, lat, GG, OO = 2 * us, 5 * us, 2e-10, 1e-11
    per = max(oo + (s - 1) * OO + C, oo + lat) + oo + max((s - 1) * OO, (s - 1) * GG)
    from bsim.validation.programs import ring
    res = run(lambda: ring(s, iters, C), 8, protocol=f"loggops:O={OO}", network=net)
    assert res.elapsed == pytest.approx(iters * per, rel=5e-3)


def test_loggops_refuses_bad_parameters():
    with pytest.raises(Exception, match="O must be"):
        run(lambda: None, 1, protocol="loggops:O=-1")
    with pytest.raises(Exception, match="S must be"):
        run(lambda: None, 1, protocol="loggops:S=1.5")
