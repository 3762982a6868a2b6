"""A subclass of ``BsimProtocol`` keeps its own steps.

The send path and the matching call the ``bsim`` protocol's steps as module functions
(``bsim_send``, ``bsim_matched``) when the run's protocol is ``BsimProtocol`` itself; a
subclass that overrides ``send`` or ``matched`` must have its methods called instead.
"""

from __future__ import annotations

import bsim
from bsim.engine.protocols import BsimProtocol


class _Counting(BsimProtocol):
    """Counts its steps, then takes the paper's."""

    def __init__(self) -> None:
        super().__init__()
        self.sends = self.matches = 0

    def send(self, vr, dst, msg, req, synchronous):
        self.sends += 1
        super().send(vr, dst, msg, req, synchronous)

    def matched(self, req, msg):
        self.matches += 1
        super().matched(req, msg)


def _ping(posted_first: bool) -> None:
    from bsim import MPI
    comm = MPI.COMM_WORLD
    buf = bsim.Buffer(800)
    if comm.Get_rank() == 0:
        comm.Send(buf, dest=1, tag=7)
    else:
        if not posted_first:
            bsim.add_time(1e-3)   # the message arrives first and waits as unexpected
        comm.Recv(buf, source=0, tag=7)


def test_a_subclass_of_the_bsim_protocol_has_its_own_steps_called():
    cost = 1e-6 + 800 / 1e9   # Hockney: latency + bytes / bandwidth
    for posted_first in (True, False):
        proto = _Counting()
        res = bsim.simulate(_ping, ranks=2, protocol=proto, kwargs={"posted_first": posted_first},
                            network="hockney:latency=1e-6,bandwidth=1e9", check_memory=False)
        assert (proto.sends, proto.matches) == (1, 1)
        # the BSIM paper's receive: from max(post, send at 0), the whole message cost
        post = 0.0 if posted_first else 1e-3
        assert res.finish[1] == post + cost


def test_bsim_protocol_itself_takes_the_module_functions():
    assert BsimProtocol().exact_bsim
    assert not _Counting().exact_bsim
