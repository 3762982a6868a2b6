"""Blocking calls whose outcome is already known do not switch to the engine.

A rank's greenlet is switched into when it starts and when the engine wakes it; a
``Send`` (``bsim``: complete at its call), a ``Recv`` of a message already visible and a
``Sendrecv`` whose receive is already visible are settled on the rank's clock without a
round trip through the engine (``VirtualRank.settle``), and so is a ``Recv`` of a message
still in flight when it is the one the receive will take (``matching.early_matching``).
Counted here with ``greenlet.settrace``, against a count made by hand from the visibility
rule (``docs/protocols.md``: a message sent at ``ts`` is visible at ``ts + lookahead``).
"""

from __future__ import annotations

from typing import Any

import greenlet
import pytest

import bsim
import bsim.engine.core as core
from bsim.engine.matching import may_match_early
from bsim.engine.rank import RankGreenlet

NET = "hockney:latency=1e-6,bandwidth=1e9"


def _program() -> None:
    from bsim import MPI
    comm = MPI.COMM_WORLD
    buf = bsim.Buffer(8)
    if comm.rank == 0:
        for tag in range(4):            # complete at the call: no switch
            comm.Send(buf, dest=1, tag=tag)
        comm.Recv(buf, source=1, tag=9)  # not sent yet: one wake-up
    else:
        bsim.add_time(1.0)
        comm.Recv(buf, source=0, tag=0)  # the engine is still at t = 0: one wake-up, at
        # t = 1.0; the other three messages were made visible at 1e-6 on the way
        comm.Recv(buf, source=0, tag=1)  # visible: no switch
        comm.Recv(buf, source=0, tag=2)  # visible: no switch
        comm.Sendrecv(buf, dest=0, sendtag=9, recvbuf=bsim.Buffer(8), source=0,
                      recvtag=3)         # the receive visible, the send immediate: none


def _switches_into(early: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[int, int], Any]:
    # on where the run allows it, compiled or not (as Python the engine leaves it off)
    monkeypatch.setattr(core, "early_matching",
                        may_match_early if early else (lambda engine: False))
    into: dict[int, int] = {}

    def trace(event: str, args: tuple) -> None:
        if event == "switch" and isinstance(args[1], RankGreenlet):
            rank = args[1].vrank.rank
            into[rank] = into.get(rank, 0) + 1

    old = greenlet.settrace(trace)
    try:
        res = bsim.simulate(_program, ranks=2, network=NET, protocol="bsim",
                            contention="none", check_memory=False)
    finally:
        greenlet.settrace(old)
    return into, res


@pytest.mark.parametrize("early", [True, False], ids=["early-matching", "at-visibility"])
def test_determined_blocking_calls_take_no_switch(early: bool,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    into, res = _switches_into(early, monkeypatch)
    # rank 0: its start and one wake-up (tag 9 is not sent yet); rank 1: its start, and
    # one wake-up only when its first Recv waits for the message to become visible (the
    # engine is still at t = 0 then; the message is already sent, and no other receive
    # could take it, so with early matching the Recv takes it at once)
    assert into == {0: 2, 1: 1 if early else 2}
    # rank 1 ends at 1.0 plus the costs of the three Recvs and the Sendrecv's receive
    assert res.finish[1] == pytest.approx(1.0 + 4 * (1e-6 + 8 / 1e9), rel=1e-12, abs=0)
