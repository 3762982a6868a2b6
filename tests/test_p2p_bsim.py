"""Point-to-point timing under the ``bsim`` protocol (BSIM paper's rules), derived by hand."""

from __future__ import annotations

import math

import pytest

import bsim
from bsim import MPI

L, W = 2e-6, 1e9
NET = f"hockney:latency={L},bandwidth={W}"


def cost(nbytes: int) -> float:
    """Hockney one-way time l + s/w."""
    return L + nbytes / W


@pytest.mark.parametrize("nbytes", [0, 1, 1000, 1 << 20])
def test_pingpong_one_way_is_l_plus_s_over_w(nbytes):
    """Rank 1 finishes after one message, rank 0 after the round trip; waits are exact."""
    def main():
        comm = MPI.COMM_WORLD
        buf = bsim.Buffer(nbytes)
        if comm.rank == 0:
            comm.Send(buf, dest=1, tag=1)
            comm.Recv(buf, source=1, tag=2)
        else:
            comm.Recv(buf, source=0, tag=1)
            comm.Send(buf, dest=0, tag=2)
        return MPI.Wtime()

    res = bsim.simulate(main, ranks=2, network=NET, protocol="bsim")
    c = cost(nbytes)
    # rank 1: receive posted at 0, message sent at 0 -> completes at c (comm c, no wait)
    # rank 0: receive posted at 0, reply sent at c -> wait c, then comm c
    assert res.finish.tolist() == [c + c, c]
    assert res.returns == [c + c, c]
    assert res.wait.tolist() == [c, 0.0]
    assert res.comm.tolist() == [c, c]
    assert res.calc.tolist() == [0.0, 0.0]
    assert res.elapsed == 2 * c
    assert res.total_messages == 2 and res.total_bytes == 2 * nbytes


@pytest.mark.parametrize("n", [2, 3, 5, 16])
def test_ring_with_imbalanced_add_time(n):
    """Rank r computes r*d, sends right, receives from the left: closed-form finish times."""
    d, s = 1e-3, 4096

    def main():
        comm = MPI.COMM_WORLD
        r = comm.rank
        bsim.add_time(r * d)
        comm.Send(bsim.Buffer(s), dest=(r + 1) % n)
        comm.Recv(bsim.Buffer(s), source=(r - 1) % n)

    res = bsim.simulate(main, ranks=n, network=NET, protocol="bsim")
    c = cost(s)
    for r in range(n):
        left_sent = ((r - 1) % n) * d
        posted = r * d
        # receive completes at max(posted, sent) + c; the gap is wait (load imbalance)
        assert res.finish[r] == max(posted, left_sent) + c
        assert res.wait[r] == max(0.0, left_sent - posted)
        assert res.comm[r] == c
        assert res.calc[r] == r * d
    # rank 0 waits for the slowest rank: (n-1)*d
    assert res.wait[0] == (n - 1) * d


@pytest.mark.parametrize("n", [2, 4, 7])
def test_token_ring_accumulates_compute_and_messages(n):
    """A token passed around once: rank r finishes at sum of a_k (k<=r) + r*c."""
    a = [1e-4 * (k + 1) for k in range(n)]

    def main():
        comm = MPI.COMM_WORLD
        r = comm.rank
        if r:
            comm.recv(source=r - 1)
        bsim.add_time(a[r])
        if r < n - 1:
            comm.send(r, dest=r + 1)

    res = bsim.simulate(main, ranks=n, network=NET, protocol="bsim")
    import pickle
    c = cost(len(pickle.dumps(0, pickle.HIGHEST_PROTOCOL)))   # small ints pickle alike
    for r in range(n):
        expected = sum(a[: r + 1]) + r * c
        assert math.isclose(res.finish[r], expected, rel_tol=1e-12)
        # all but rank 0 wait exactly for the previous rank's send time
        assert math.isclose(res.wait[r], (sum(a[:r]) + (r - 1) * c) if r else 0.0,
                            rel_tol=1e-12, abs_tol=1e-18)


def test_irecv_then_add_time_then_wait_does_not_overlap():
    """bsim: irecv + wait is a receive blocking at the wait, so cost follows the compute."""
    T, s = 1e-3, 10_000

    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            req = comm.Irecv(bsim.Buffer(s), source=1)
            bsim.add_time(T)
            req.Wait()
        else:
            comm.Send(bsim.Buffer(s), dest=0)

    res = bsim.simulate(main, ranks=2, network=NET, protocol="bsim")
    assert res.finish[0] == T + cost(s)      # max(T, 0) + c: no overlap
    assert res.comm[0] == cost(s) and res.wait[0] == 0.0


def test_waitall_handles_receives_in_send_order():
    """Waitall: one receive at a time in order of send time, each costing c."""
    s = 1000
    t1, t2 = 5e-6, 1e-6   # rank 1 sends later than rank 2

    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            reqs = [comm.Irecv(bsim.Buffer(s), source=1), comm.Irecv(bsim.Buffer(s), source=2)]
            MPI.Request.Waitall(reqs)
        else:
            bsim.add_time(t1 if comm.rank == 1 else t2)
            comm.Send(bsim.Buffer(s), dest=0)

    res = bsim.simulate(main, ranks=3, network=NET, protocol="bsim")
    c = cost(s)   # 3 us
    # rank 2's message (sent 1 us): 1 + 3 = 4 us; rank 1's (sent 5 us): max(4, 5) + 3 = 8 us
    assert res.finish[0] == max(t2 + c, t1) + c
    assert res.wait[0] == t2 + (t1 - (t2 + c))   # idle 0..1 us, then 4..5 us
    assert math.isclose(res.comm[0], 2 * c, rel_tol=1e-12)


def test_send_cost_is_charged_to_the_sender():
    """bsim:send_cost=x makes every send cost x of comm on the sender."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            comm.Send(bsim.Buffer(8), dest=1)
            comm.Send(bsim.Buffer(8), dest=1)
        else:
            comm.Recv(bsim.Buffer(8), source=0)
            comm.Recv(bsim.Buffer(8), source=0)

    res = bsim.simulate(main, ranks=2, network=NET, protocol="bsim:send_cost=1e-6")
    c = cost(8)
    assert res.finish[0] == 2e-6 and res.comm[0] == 2e-6
    # second message sent at 1 us, first receive done at c = 2.008 us > 1 us
    assert res.finish[1] == 2 * c


def test_wildcard_receive_order_is_send_time_then_rank():
    """ANY_SOURCE takes messages by send time; equal times go to the lower rank first."""
    d = 1e-3
    delay = {1: 2 * d, 2: d, 3: d}

    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            st = MPI.Status()
            order, times = [], []
            for _ in range(3):
                comm.recv(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=st)
                order.append(st.Get_source())
                times.append(MPI.Wtime())
            return order, times
        bsim.add_time(delay[comm.rank])
        comm.send(comm.rank, dest=0, tag=comm.rank)

    res = bsim.simulate(main, ranks=4, network=NET, protocol="bsim")
    order, times = res.returns[0]
    assert order == [2, 3, 1]
    import pickle
    c = cost(len(pickle.dumps(1, pickle.HIGHEST_PROTOCOL)))
    # first: posted at 0, rank 2 sent at d -> d + c; second: rank 3's (sent d) -> d + 2c;
    # third: rank 1's sent at 2d > d + 2c -> 2d + c
    assert times == [d + c, d + c + c, 2 * d + c]


def test_non_overtaking_same_source_same_tag():
    """Two messages from one source with one tag are received in send order."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            comm.send("first", dest=1, tag=7)
            comm.send("second", dest=1, tag=7)
        else:
            bsim.add_time(1.0)
            return [comm.recv(source=0, tag=7), comm.recv(source=0, tag=7)]

    assert bsim.simulate(main, ranks=2, network=NET,
                         protocol="bsim").returns[1] == ["first", "second"]


def test_tag_selects_message_out_of_order():
    """A receive for tag 2 skips an earlier tag-1 message from the same source."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            comm.send("a", dest=1, tag=1)
            comm.send("b", dest=1, tag=2)
        else:
            return comm.recv(source=0, tag=2), comm.recv(source=0, tag=1)

    assert bsim.simulate(main, ranks=2, network=NET, protocol="bsim").returns[1] == ("b", "a")


def test_self_message_costs_nothing_on_the_wire():
    """A rank sending to itself pays no Hockney latency."""
    def main():
        comm = MPI.COMM_WORLD
        req = comm.isend("x", dest=comm.rank)
        got = comm.recv(source=comm.rank)
        req.wait()
        return got

    res = bsim.simulate(main, ranks=2, network=NET, protocol="bsim")
    assert res.returns == ["x", "x"] and res.finish.tolist() == [0.0, 0.0]


def test_send_cost_network_charges_each_send_its_message_cost():
    """bsim:send_cost=network: the sender pays cost(s) too (the tutorial's accounting).

    Rank 0 sends 1000 B then 3000 B to rank 1: it pays c(1000) + c(3000) of comm.  Rank 1
    receives the first (sent at 0) at c(1000) and the second (sent at c(1000)) at
    max(c(1000), c(1000)) + c(3000).
    """
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            comm.Send(bsim.Buffer(1000), dest=1)
            comm.Send(bsim.Buffer(3000), dest=1)
        else:
            comm.Recv(bsim.Buffer(1000), source=0)
            comm.Recv(bsim.Buffer(3000), source=0)

    res = bsim.simulate(main, ranks=2, network=NET, protocol="bsim:send_cost=network")
    c1, c3 = cost(1000), cost(3000)
    assert res.comm[0] == c1 + c3
    assert res.finish[0] == c1 + c3
    assert res.finish[1] == c1 + c3
    with pytest.raises(ValueError, match="send_cost must be finite seconds >= 0 or 'network'"):
        bsim.simulate(main, ranks=2, network=NET, protocol="bsim:send_cost=fast")
