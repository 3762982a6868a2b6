"""Collective prices an outside review derived by hand (docs/collectives.md's formulas).

Network: Hockney 1 us, 1 GB/s, so ``t(s) = 1 us + s ns``; protocol ``bsim``.  Every
expected time is built from the formulas of docs/collectives.md, never from bsim's output.
"""

from __future__ import annotations

import numpy as np
import pytest

import bsim
from bsim import MPI
from bsim.errors import CollectiveMismatchError

NET = "hockney:latency=1e-6,bandwidth=1e9"
SOURCES = ["analytic", "algorithmic"]


def t(nbytes: float) -> float:
    """One message of *nbytes* on the test network, in seconds."""
    return 1e-6 + nbytes * 1e-9



# -- 5. a nonblocking collective never matches a blocking one -----------------------------

@pytest.mark.parametrize("protocol", ["bsim", "loggp"])
def test_ibarrier_does_not_match_barrier(protocol):
    """MPI 4.1 Sec. 6.12: rank 0's Ibarrier and the others' Barrier are a collective
    mismatch, reported as other mismatches are: both calls and both ranks."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            comm.Ibarrier().Wait()
        else:
            comm.Barrier()

    net = NET if protocol == "bsim" else "loggp:L=1e-6,o=0,g=0,G=1e-9"
    with pytest.raises(CollectiveMismatchError,
                       match=r"rank \d called (nonblocking )?barrier\(\), rank \d called "
                             r"(nonblocking )?barrier\(\)") as err:
        bsim.simulate(main, ranks=4, network=net, protocol=protocol)
    assert "nonblocking barrier()" in str(err.value)


def test_iallreduce_does_not_match_allreduce():
    """The same for an Iallreduce on rank 1 and an Allreduce on the others."""
    def main():
        comm = MPI.COMM_WORLD
        a, b = np.zeros(4), np.zeros(4)
        if comm.rank == 1:
            comm.Iallreduce(a, b).Wait()
        else:
            comm.Allreduce(a, b)

    with pytest.raises(CollectiveMismatchError, match=r"nonblocking allreduce\(op=SUM"):
        bsim.simulate(main, ranks=4, network=NET)
