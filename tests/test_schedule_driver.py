"""Expanded collectives run their later rounds as engine continuations
(``bsim/engine/schedule_driver.py``) instead of switching into the rank each round: the
predictions must be bitwise those of switching, whatever the protocol and contention."""

from __future__ import annotations

from typing import Any

import pytest

import bsim
import bsim.engine.collective_rules as rules
from bsim import MPI


def _program(iterations: int = 3) -> tuple[float, float]:
    comm = MPI.COMM_WORLD
    for i in range(iterations):
        bsim.add_time(1e-6 * ((comm.rank * 7 + i) % 5))   # imbalance: rounds wait
        comm.allreduce(comm.rank)
        comm.Bcast(bsim.Buffer(4096), root=i % comm.size)
        comm.Barrier()
    return MPI.Wtime(), comm.allreduce(1)


def _run(monkeypatch: pytest.MonkeyPatch, continuations: bool, **kw: Any) -> Any:
    monkeypatch.setattr(rules, "usable", lambda vr: continuations)
    res = bsim.simulate(_program, 24, network="torus:dims=4x3x2", collectives="algorithmic",
                        **kw)
    return res.returns, res.events, [a.tolist() for a in (res.finish, res.calc, res.wait,
                                                          res.comm, res.messages, res.ops)]


@pytest.mark.parametrize("kw", [dict(protocol="loggp"), dict(protocol="loggp",
                                                             contention="fluid"),
                                dict(protocol="bsim")])
def test_continuations_predict_what_switching_predicts(monkeypatch: pytest.MonkeyPatch,
                                                       kw: dict[str, Any]) -> None:
    switched = _run(monkeypatch, False, **kw)
    continued = _run(monkeypatch, True, **kw)
    assert continued == switched
    assert switched[0][0][1] == 24
