"""A collective's request may be neither freed nor cancelled (MPI 4.1 §6.12: "It is
erroneous to call MPI_REQUEST_FREE or MPI_CANCEL for a request associated with a
nonblocking collective operation"; §6.13 the same for an active persistent one).  bsim
accepted both, and a freed 1 MB Iallreduce was never charged: the run ended at 0 s.
MPICH does not check (it frees the handle and lets the operation run on), so the
reference is the standard; the error is ERR_REQUEST naming the rank and the call."""

from __future__ import annotations

import numpy as np
import pytest

import bsim
from bsim import MPI


def _run(body):
    def main():
        body(MPI.COMM_WORLD)
    return bsim.simulate(main, ranks=2, network="hockney:latency=1e-6,bandwidth=1e9")


@pytest.mark.parametrize("body", [
    lambda c: c.Iallreduce(np.ones(125_000), np.zeros(125_000)).Free(),
    lambda c: c.Ibarrier().Cancel(),
    lambda c: c.Ibarrier().free(),
    lambda c: (lambda r: (r.Start(), r.Free()))(
        c.Allreduce_init(np.ones(4), np.zeros(4))),
], ids=["Iallreduce-Free", "Ibarrier-Cancel", "Ibarrier-free", "active-persistent-Free"])
def test_a_collectives_request_may_not_be_freed_or_cancelled(body):
    with pytest.raises(bsim.MPIUsageError,
                       match=r"rank 0: Request\.(Free|Cancel) of a collective's request") as e:
        _run(body)
    assert e.value.Get_error_class() == MPI.ERR_REQUEST


def test_a_completed_persistent_collective_may_be_freed():
    """Start, Wait, Free (mpi4py's own tests do this): the request is inactive."""
    def body(c):
        r = c.Allreduce_init(np.ones(4), np.zeros(4))
        r.Start()
        r.Wait()
        r.Free()
    assert _run(body).elapsed > 0
