"""A rank's mailbox keeps its unexpected messages and its probers in lists made at their
first entry (``bsim.engine.matching.Mailbox``): every path that reads them must take a
mailbox that has posted receives and neither list.

Hand derivation (``docs/protocols.md``, ``bsim`` protocol on a Hockney network with
latency ``L`` and bandwidth ``W``): a ``Send`` completes at its call; its message, sent at
``ts``, is visible at ``ts + L``; a receive handled at ``t`` ends at
``max(t, ts) + L + n / W``, and a blocking probe's wait is part of that receive.
"""

from __future__ import annotations

import pytest

import bsim
from bsim import MPI

L, W = 2e-6, 1e9
NET = f"hockney:latency={L},bandwidth={W}"
TS = 10e-6   # when rank 0 sends
N = 8        # bytes of each message


def test_probes_and_receives_on_a_mailbox_without_unexpected_messages():
    """Rank 1 posts a receive first (its mailbox then holds that receive alone), probes
    without and with blocking, and takes both messages at the times of the derivation."""
    seen = {}

    def main():
        comm = MPI.COMM_WORLD
        buf = bsim.Buffer(N)
        if comm.rank == 0:
            bsim.add_time(TS)
            comm.Send(buf, dest=1, tag=2)
            comm.Send(buf, dest=1, tag=1)
        else:
            req = comm.Irecv(bsim.Buffer(N), source=0, tag=1)
            seen["iprobe"] = comm.Iprobe(source=0, tag=2)   # at t = 0: nothing sent yet
            st = MPI.Status()
            comm.Probe(source=0, tag=2, status=st)          # waits as a prober
            seen["probed"] = (st.Get_source(), st.Get_tag(), st.Get_count(MPI.BYTE))
            comm.Recv(buf, source=0, tag=2)
            req.Wait()

    res = bsim.simulate(main, ranks=2, network=NET, protocol="bsim", check_memory=False)
    assert seen == {"iprobe": False, "probed": (0, 2, N)}
    # tag 2: TS + cost; tag 1 (sent at TS, available then): one more cost after it
    cost = L + N / W
    assert res.finish[1] == pytest.approx(TS + 2 * cost, rel=1e-12, abs=0)


def test_a_deadlock_report_reads_a_mailbox_without_unexpected_messages():
    """Rank 1 waits on a receive nobody sends (a mailbox with a posted receive and no
    unexpected message) while rank 0's synchronous send waits unreceived at rank 2: the
    report still names the send's destination, tag and bytes."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            comm.Ssend(bsim.Buffer(100, MPI.DOUBLE), dest=2, tag=7)
        elif comm.rank == 1:
            comm.Recv(bsim.Buffer(8), source=2, tag=3)
        else:
            comm.Recv(bsim.Buffer(8), source=1, tag=5)

    with pytest.raises(bsim.DeadlockError) as info:
        bsim.simulate(main, ranks=3, protocol="bsim", check_memory=False)
    lines = dict((b[0], b[1]) for b in info.value.blocked)
    assert lines[0] == "Ssend(dest=world 2, tag=7, 800 bytes)"
