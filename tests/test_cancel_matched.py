"""Request.Cancel of a receive fails once a message has matched it (MPI 4.1 §3.8.4).

Whether the receive has matched is decided at the cancelling rank's own time, not
at the time the engine happened to have reached when the rank called ``Cancel``.
"""

from __future__ import annotations

import pytest

import bsim
from bsim import MPI

NET = "hockney:latency=1e-6,bandwidth=1e9"
COMMS = {"WORLD": lambda: MPI.COMM_WORLD, "Dup": lambda: MPI.COMM_WORLD.Dup()}


def _late_cancel(comm_of, sender, send_after):
    """*sender* sends 8 bytes (tag 7) after *send_after* s; the other rank posts the
    receive at 0, computes 1 s, then cancels and waits.  Times are counted from the
    end of the communicator's creation (a Dup takes time; both ranks leave it together)."""
    def main():
        comm = comm_of()
        t0 = MPI.Wtime()
        if comm.rank == sender:
            bsim.add_time(send_after)
            comm.Send(bsim.Buffer(8), dest=1 - sender, tag=7)
            return None
        req = comm.Irecv(bsim.Buffer(8), source=sender, tag=7)
        bsim.add_time(1.0)
        req.Cancel()
        st = MPI.Status()
        req.Wait(st)
        return st.Is_cancelled(), MPI.Wtime() - t0
    return main


@pytest.mark.parametrize("comm", COMMS)
@pytest.mark.parametrize("sender", [0, 1])
@pytest.mark.parametrize("protocol, finish", [
    # bsim: the Wait at 1 s is a receive blocking at 1 s on a message sent at 0:
    # max(1, 0) + cost = 1 + (1e-6 + 8 / 1e9)
    ("bsim", 1.0 + 1e-6 + 8e-9),
    # loggp on hockney (no CPU overheads): the data arrived at 1.008e-6 s, so the
    # receive is complete when Wait is called at 1 s: max(1, 1.008e-6) + 0
    ("loggp", 1.0),
])
def test_cancel_after_match_fails(comm, sender, protocol, finish):
    """The message matched at 1.008e-6 s, the Cancel is at 1 s: not cancelled, received."""
    r = bsim.simulate(_late_cancel(COMMS[comm], sender, 0.0), ranks=2, network=NET,
                      protocol=protocol)
    cancelled, t = r.returns[1 - sender]
    assert cancelled is False
    assert r.unreceived == {}
    assert t == pytest.approx(finish, rel=1e-12)


@pytest.mark.parametrize("comm", COMMS)
@pytest.mark.parametrize("protocol", ["bsim", "loggp"])
def test_cancel_before_match_succeeds(comm, protocol):
    """Sent at 2 s, cancelled at 1 s: the Cancel succeeds at 1 s, the message is left over."""
    r = bsim.simulate(_late_cancel(COMMS[comm], 0, 2.0), ranks=2, network=NET,
                      protocol=protocol)
    cancelled, t = r.returns[1]
    assert cancelled is True
    assert t == pytest.approx(1.0, rel=1e-12)
    assert r.unreceived == {1: 1}


@pytest.mark.parametrize("protocol", ["bsim", "loggp"])
def test_cancel_after_match_on_self(protocol):
    """COMM_SELF: an Isend to oneself at 0 matches the receive before a Cancel at 1 s."""
    def main():
        comm = MPI.COMM_SELF
        sreq = comm.Isend(bsim.Buffer(8), dest=0, tag=7)
        req = comm.Irecv(bsim.Buffer(8), source=0, tag=7)
        bsim.add_time(1.0)
        req.Cancel()
        st = MPI.Status()
        req.Wait(st)
        sreq.Wait()
        return st.Is_cancelled(), st.Get_count(MPI.BYTE)

    r = bsim.simulate(main, ranks=1, network=NET, protocol=protocol)
    assert r.returns == [(False, 8)]
    assert r.unreceived == {}
