"""The event queue's batches keep the order of one heap entry per message or wake-up.

``bsim/engine/events.py``: messages that become visible at one time share one
``Deliveries`` entry, rank wake-ups of one time one ``Wakeups`` entry; the loop sorts
a batch by key and gives way to any entry ordered before its next element.  The order
expected here follows from the queue's contract alone (``(time, priority, key)``),
derived by hand.
"""

from __future__ import annotations

from heapq import heappush

import bsim
import bsim.engine.core as core
from bsim import MPI
from bsim.engine.core import Engine
from bsim.engine.events import PRIO_NET, PRIO_RANK, Call, Deliveries
from bsim.engine.matching import Message


def _msg(src: int, seq: int) -> Message:
    m = Message(None, src, 0, src, 0, 8, None, False)
    m.key = (src << 32) | seq
    return m


def test_batches_interleave_with_other_entries_in_key_order(monkeypatch):
    eng = Engine(8)
    seen: list[object] = []
    monkeypatch.setattr(core, "deliver", lambda vr, msg, now: seen.append((now, msg.src)))

    def batch(t, *msgs):   # as the bsim protocol's send builds them: appended as sent
        b = eng.deliveries[t] = Deliveries()
        heappush(eng.queue, (t, PRIO_NET, -1, b))
        b.extend(msgs)

    batch(1.0, _msg(5, 1), _msg(2, 1), _msg(7, 3))          # appended out of key order
    eng.push(1.0, PRIO_NET, (3 << 32) | 9, Call(lambda: seen.append((1.0, "call 3")), ()))
    eng.push(1.0, PRIO_NET, (6 << 32) | 0, _msg(6, 0))       # a plain message entry
    eng.push(1.0, PRIO_NET, (1 << 32) | 0, Call(lambda: seen.append((1.0, "call 1")), ()))
    batch(0.5, _msg(4, 2), _msg(4, 1))
    eng.run_until(float("inf"))
    assert seen == [(0.5, 4), (0.5, 4), (1.0, "call 1"), (1.0, 2), (1.0, "call 3"),
                    (1.0, 5), (1.0, 6), (1.0, 7)]
    assert eng.events == 8 and not eng.queue and not eng.deliveries


def test_a_rank_wakeup_at_the_same_time_comes_after_every_delivery(monkeypatch):
    """Priority NET before RANK at equal times: a rank acting at t sees what arrived at t."""
    eng = Engine(4)
    seen: list[object] = []
    monkeypatch.setattr(core, "deliver", lambda vr, msg, now: seen.append(msg.src))
    b = eng.deliveries[2.0] = Deliveries()
    heappush(eng.queue, (2.0, PRIO_NET, -1, b))
    b.extend([_msg(3, 1), _msg(1, 1)])
    eng.push(2.0, PRIO_RANK, 0, Call(lambda: seen.append("rank"), ()))
    eng.run_until(float("inf"))
    assert seen == [1, 3, "rank"]


def test_wakeups_of_one_time_run_in_key_order_around_other_entries(monkeypatch):
    eng = Engine(8)
    seen: list[object] = []

    def wake(r, t, then=None):   # rank r resumes at t as a continuation that records it
        vr = eng.ranks[r]

        def resume():
            seen.append((eng._now, r))
            if then is not None:
                then()
        vr.resume = resume
        vr.wake(t)

    wake(5, 1.0)
    wake(2, 1.0, then=lambda: wake(0, 1.0))   # woken during the batch, at the same time
    wake(6, 1.0)
    wake(7, 1.0)
    wake(6, 2.0)                              # supersedes rank 6's wake-up at 1.0
    wake(1, 0.5)
    eng.push(1.0, PRIO_RANK, (3 << 32) | 9, Call(lambda: seen.append((1.0, "call 3")), ()))
    b = eng.deliveries[1.0] = Deliveries()    # network events come first at equal times
    heappush(eng.queue, (1.0, PRIO_NET, -1, b))
    b.append(_msg(4, 1))
    monkeypatch.setattr(core, "deliver",
                        lambda vr, msg, now: seen.append((now, f"message from {msg.src}")))
    eng.run_until(float("inf"))
    # keys: rank r's are (r << 32) | its sequence, so rank 0 (woken by rank 2) comes
    # before the call keyed by rank 3, and rank 6 runs only at its later wake-up
    assert seen == [(0.5, 1), (1.0, "message from 4"), (1.0, 2), (1.0, 0), (1.0, "call 3"),
                    (1.0, 5), (1.0, 7), (2.0, 6)]
    assert eng.events == 8 and not eng.queue and not eng.wakeups


def test_any_source_sees_simultaneous_messages_in_source_order():
    """Ranks 7 and 1 both send at t = 1, 7 first on the host (it runs ahead on its lazy
    clock at t = 0; rank 1 waits for a message until t = 0.5, then computes).  Messages
    of one time match in key order, source rank first, so rank 0's ANY_SOURCE receives
    get 1, then 7, then 4 (sent later)."""
    def main():
        comm = MPI.COMM_WORLD
        r = comm.Get_rank()
        if r == 0:
            bsim.add_time(0.5)
            comm.Send(bsim.Buffer(0), dest=1)
            bsim.add_time(2.0)
            return [comm.recv(source=MPI.ANY_SOURCE) for _ in range(3)]
        if r == 1:
            comm.Recv(bsim.Buffer(0), source=0)   # 0 bytes, latency 0: arrives at 0.5
            bsim.add_time(0.5)
        if r == 7:
            bsim.add_time(1.0)
        if r == 4:
            bsim.add_time(1.5)
        if r in (1, 4, 7):
            comm.send(r, dest=0)
        return None

    res = bsim.simulate(main, ranks=8, network="hockney:latency=0,bandwidth=1e12", protocol="bsim")
    assert res.returns[0] == [1, 7, 4]
