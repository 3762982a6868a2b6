"""Generalized requests (``bsim/mpi/requests/generalized.py``): the same program under real
``mpiexec`` and under bsim must return the same values."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import needs_mpiexec, real_mpi_returns, simulated_returns

import bsim
from bsim import MPI

PROGRAM = '''
from mpi4py import MPI


def main():
    calls = []

    def query(status, tag):
        calls.append(("query", tag))
        status.Set_source(3)
        status.Set_tag(tag)

    def free(tag):
        calls.append(("free", tag))

    def cancel(completed, tag):
        calls.append(("cancel", completed, tag))

    greq = MPI.Grequest.Start(query, free, cancel, args=(7,))
    out = {"pending": greq.Test()}
    greq.Cancel()
    greq.Complete()
    greq.Cancel()
    status = MPI.Status()
    out["done"] = greq.Test(status)
    out["status"] = [status.Get_source(), status.Get_tag(), status.Get_error(),
                     status.Is_cancelled()]
    out["null"] = [bool(greq), greq == MPI.REQUEST_NULL]
    g2 = MPI.Grequest.Start()
    g2.complete({"x": 1})
    out["object"] = g2.wait()
    try:
        MPI.Prequest(MPI.Grequest.Start())
        out["prequest"] = "accepted"
    except TypeError:
        out["prequest"] = "TypeError"
    out["calls"] = calls
    return out
'''


def _bsim(nprocs: int) -> list[Any]:
    return simulated_returns(nprocs, PROGRAM, as_json=True)


@needs_mpiexec
def test_grequest_as_real_mpi() -> None:
    assert _bsim(1) == real_mpi_returns(1, PROGRAM)


def test_grequest_values() -> None:
    out = _bsim(1)[0]
    assert out["pending"] is False and out["done"] is True
    assert out["status"] == [3, 7, MPI.SUCCESS, False]
    assert out["null"] == [False, True] and out["object"] == {"x": 1}
    assert out["prequest"] == "TypeError"
    assert out["calls"] == [["cancel", False, 7], ["cancel", True, 7], ["query", 7],
                            ["free", 7]]


def test_wait_on_a_request_nobody_completes_is_a_deadlock_report() -> None:
    def main() -> None:
        MPI.Grequest.Start().Wait()
    with pytest.raises(bsim.errors.DeadlockError, match="Grequest"):
        bsim.simulate(main, 1)
