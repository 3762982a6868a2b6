"""A probe followed by its receive costs what the receive alone costs (``bsim`` protocol).

Hand derivation (``docs/protocols.md``, "Visibility"): on a Hockney network with latency
``L`` the lookahead is ``δ = L``.  A message sent at ``ts`` is visible at ``ts + L``; a
``Recv`` posted at ``tp`` ends at ``max(tp, ts) + cost`` with wait ``max(0, ts - tp)``.
A blocking probe posted at ``tp`` waits until the message is visible, and that wait is
part of the transfer, so ``Probe`` + ``Recv`` must end at the same ``max(tp, ts) + cost``
with the same wait and comm, whether the probe is posted before the send, while the
message is in flight, or after it is visible.
"""

from __future__ import annotations

import pytest

import bsim
from bsim import MPI

L, W = 2e-6, 1e9
NET = f"hockney:latency={L},bandwidth={W}"
NBYTES = 4000
TS = 10e-6      # when rank 0 sends


def cost(nbytes: int) -> float:
    return L + nbytes / W


def _receive(comm, how: str) -> int:
    buf = bsim.Buffer(NBYTES)
    st = MPI.Status()
    if how == "Recv":
        comm.Recv(buf, source=0, tag=3, status=st)
    elif how == "Probe":
        comm.Probe(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=st)
        comm.Recv(buf, source=st.Get_source(), tag=st.Get_tag())
    elif how == "Mprobe":
        comm.Mprobe(source=0, tag=3, status=st).Recv(buf)
    elif how == "probe-Irecv":
        comm.Probe(source=0, tag=3, status=st)
        comm.Irecv(buf, source=0, tag=3).Wait()
    return st.Get_count(MPI.BYTE)


def _program(how: str, tp: float):
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            bsim.add_time(TS)
            comm.Send(bsim.Buffer(NBYTES), dest=1, tag=3)
            return None
        bsim.add_time(tp)
        return _receive(comm, how)
    return main


# before the send, in flight (visible only at TS + L), after it is visible
POSTED = [0.0, TS + L / 4, TS + 3 * L]


@pytest.mark.parametrize("tp", POSTED)
@pytest.mark.parametrize("how", ["Recv", "Probe", "Mprobe", "probe-Irecv"])
def test_probe_then_receive_ends_as_the_receive_alone(how, tp):
    res = bsim.simulate(_program(how, tp), ranks=2, network=NET, protocol="bsim")
    c = cost(NBYTES)
    assert res.returns[1] == NBYTES
    assert res.finish[1] == pytest.approx(max(tp, TS) + c, rel=1e-12, abs=0)
    assert res.wait[1] == pytest.approx(max(0.0, TS - tp), rel=1e-12, abs=1e-18)
    assert res.comm[1] == pytest.approx(c, rel=1e-12)
    assert res.calc[1] == tp


@pytest.mark.parametrize("tp", POSTED)
def test_probe_credit_under_fluid_contention(tp):
    """With the fluid layer a lone message's receive still ends at max(tp, ts) + cost,
    the probe's wait counting as the first part of its transfer."""
    net = "torus:dims=4,link_bandwidth=1e9,latency=2e-6"
    plain = bsim.simulate(_program("Recv", tp), ranks=2, network=net, contention="fluid",
                          protocol="bsim")
    probed = bsim.simulate(_program("Probe", tp), ranks=2, network=net, contention="fluid",
                           protocol="bsim")
    assert probed.finish[1] == pytest.approx(plain.finish[1], rel=1e-12)
    assert probed.comm[1] + probed.wait[1] == pytest.approx(plain.comm[1] + plain.wait[1],
                                                             rel=1e-12)


def test_probe_credit_is_used_once():
    """Probing twice for one message credits its wait once; a second message, found by a
    probe at once, is charged its whole cost."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            bsim.add_time(TS)
            comm.Send(bsim.Buffer(NBYTES), dest=1, tag=3)
            comm.Send(bsim.Buffer(NBYTES), dest=1, tag=4)
            return None
        comm.Probe(source=0, tag=3)
        comm.Probe(source=0, tag=3)
        comm.Recv(bsim.Buffer(NBYTES), source=0, tag=3)
        comm.Probe(source=0, tag=4)       # visible at TS + L, before the first Recv ends
        comm.Recv(bsim.Buffer(NBYTES), source=0, tag=4)
        return None

    res = bsim.simulate(main, ranks=2, network=NET, protocol="bsim")
    c = cost(NBYTES)
    assert res.finish[1] == pytest.approx(TS + 2 * c, rel=1e-12)


def test_loggp_probe_then_receive_unchanged():
    """Under loggp a receive after a probe already ends at arrival + o_r: the same as the
    receive alone (the credit is the bsim protocol's)."""
    plain = bsim.simulate(_program("Recv", 0.0), ranks=2, network=NET, protocol="loggp")
    probed = bsim.simulate(_program("Probe", 0.0), ranks=2, network=NET, protocol="loggp")
    assert probed.finish[1] == plain.finish[1]
