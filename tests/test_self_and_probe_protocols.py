"""Messages to oneself and a probe before a receive, under both protocols, by hand.

* MPI's non-overtaking rule (MPI 4.1, Sec. 3.5): two messages from one sender to one
  receiver on one communicator are received in the order sent when both match, also
  when the sender is the receiver.  Under ``bsim`` a message to oneself became visible
  ``min(δ, cost(r, r, s))`` after its send: on networks whose cost to oneself grows with
  the size (``loggp_ranges``' ``2 o(s)``, ``twolevel``, the power5 preset) a 10-byte
  message sent after a 70,000-byte one was matched first by ``ANY_TAG``.
* A message to oneself never leaves the process, so it does not queue on the NIC (LogGP's
  gap is the NIC's): under ``loggp`` on a flat model a 1 MB self-copy held rank 0's NIC
  for ``(s - 1) G`` = 1 ms and delayed its next message to rank 1 by as much.  Rank 1's
  1,000 bytes are received at ``wire(1000)`` = ``1 us + 1000 / 1 GB/s`` = 2 us (Hockney,
  no overheads).
* ``loggp:data=match`` (SimGrid SMPI's rule: the bytes move once the receive is posted):
  ``Probe`` + ``Recv`` must end as a ``Recv`` does, since SMPI's probe finds the message
  when its send ends (``ts + o_s``).  A sender late by 1 ms sends 1,000 bytes on Hockney
  2 us, 1 GB/s: ``Recv`` ends at ``1 ms + 2 us + 1 us`` = 1.003 ms; with the SMPI settings'
  16-byte envelope at ``1 ms + 2 us + 1.016 us``.  ``Probe`` + ``Recv`` ended ``δ`` = 2 us
  later.
"""

from __future__ import annotations

import pytest

import bsim
from bsim import MPI
from bsim.validation.smpi import SMPI_CONTENTION, SMPI_PROTOCOL


def _first_tag() -> int:
    comm = MPI.COMM_WORLD
    reqs = [comm.Isend(bsim.Buffer(70_000), dest=0, tag=1),
            comm.Isend(bsim.Buffer(10), dest=0, tag=2)]
    status = MPI.Status()
    comm.Recv(bsim.Buffer(70_000), source=0, tag=MPI.ANY_TAG, status=status)
    first = status.Get_tag()
    comm.Recv(bsim.Buffer(70_000), source=0, tag=MPI.ANY_TAG)
    MPI.Request.Waitall(reqs)
    return first


@pytest.mark.parametrize("setting", [dict(network="loggp_ranges"), dict(network="twolevel"),
                                     dict(machine="power5")])
@pytest.mark.parametrize("protocol", ["bsim", "loggp"])
def test_messages_to_oneself_do_not_overtake(setting, protocol):
    res = bsim.simulate(_first_tag, ranks=1, protocol=protocol, **setting)
    assert res.returns == [1]


@pytest.mark.parametrize("network", ["hockney:latency=1e-6,bandwidth=1e9",
                                     "loggp:L=1e-6,o=0,g=0,G=1e-9"])
def test_a_message_to_oneself_does_not_hold_the_nic(network):
    def main() -> None:
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            r = comm.Irecv(bsim.Buffer(1_000_000), source=0)
            s1 = comm.Isend(bsim.Buffer(1_000_000), dest=0)
            s2 = comm.Isend(bsim.Buffer(1000), dest=1)
            MPI.Request.Waitall([r, s1, s2])
        else:
            comm.Recv(bsim.Buffer(1000), source=0)

    res = bsim.simulate(main, ranks=2, network=network,
                        protocol="loggp:eager_limit=10000000")
    # Hockney: 1 us + 1000 B / 1 GB/s; LogGP: L + (s - 1) G
    expected = 2e-6 if network.startswith("hockney") else 1e-6 + 999e-9
    assert res.finish[1] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("protocol, contention, envelope", [
    ("loggp:data=match", None, 0), (SMPI_PROTOCOL, SMPI_CONTENTION, 16)])
def test_probe_then_receive_ends_as_a_receive_under_data_match(protocol, contention,
                                                               envelope):
    def program(probe: bool):
        def main() -> None:
            comm = MPI.COMM_WORLD
            if comm.rank == 0:
                bsim.add_time(1e-3)
                comm.Send(bsim.Buffer(1000), dest=1)
            else:
                if probe:
                    comm.Probe(source=0, tag=0)
                comm.Recv(bsim.Buffer(1000), source=0, tag=0)
        return main

    expected = 1e-3 + 2e-6 + (1000 + envelope) / 1e9
    for probe in (False, True):
        res = bsim.simulate(program(probe), ranks=2,
                            network="hockney:latency=2e-6,bandwidth=1e9",
                            protocol=protocol, contention=contention)
        assert res.finish[1] == pytest.approx(expected, rel=1e-12), probe


@pytest.mark.parametrize("protocol, message", [
    ("bsim:send_cost=inf", "send_cost must be finite seconds >= 0"),
    ("loggp:eager_limit=inf", "eager_limit must be a whole number of bytes >= 0"),
    ("loggp:eager_limit=100.7", "eager_limit must be a whole number of bytes >= 0"),
    ("loggp:eager_limit=-1", "eager_limit must be a whole number of bytes >= 0")])
def test_protocol_parameters_out_of_range_are_refused(protocol, message):
    def main() -> None:
        pass
    with pytest.raises(ValueError, match=message):
        bsim.simulate(main, ranks=1, protocol=protocol)


def test_a_whole_eager_limit_written_as_a_float_is_taken():
    def main() -> None:
        pass
    res = bsim.simulate(main, ranks=1, protocol="loggp:eager_limit=1e5")
    assert "eager_limit=100000" in res.protocol
