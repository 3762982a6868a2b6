"""The result records which collective algorithm shaped each call (``collective_algorithms``).

Expected names come from MPICH 3.x's selection with its default ``MPIR_CVAR_*`` thresholds
(``MPIR_Allreduce_intra``: recursive doubling when the vector is at most
``ALLREDUCE_SHORT_MSG_SIZE`` = 2048 bytes or ``count < pof2``, else Rabenseifner's
reduce-scatter + allgather; ``MPIR_Bcast_intra``: binomial below ``BCAST_SHORT_MSG_SIZE`` =
12288 bytes or under ``BCAST_MIN_PROCS`` = 8 ranks, else scatter + recursive-doubling
allgather below ``BCAST_LONG_MSG_SIZE`` = 524288 bytes on a power of two, else scatter + ring
allgather), not from bsim's own output.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import needs_mpiexec, run_mpiexec

import bsim
from bsim import MPI
from bsim.outputs.result import Result

NET = "hockney:latency=1e-6,bandwidth=1e9"


def _allreduces() -> None:
    """Two small allreduces (8 doubles = 64 B) and one large (2^17 doubles = 1 MiB)."""
    comm = MPI.COMM_WORLD
    small, large = np.zeros(8), np.zeros(1 << 17)
    comm.Allreduce(small, np.zeros_like(small))
    comm.Allreduce(large, np.zeros_like(large))
    comm.Allreduce(small, np.zeros_like(small))


@pytest.mark.parametrize("source", ["analytic", "algorithmic"])
@pytest.mark.parametrize("P", [4, 8, 12])
def test_small_and_large_allreduce_record_mpichs_choices(source: str, P: int) -> None:
    """64 B <= 2048 B: recursive doubling (twice); 1 MiB > 2048 B and >= pof2: Rabenseifner."""
    res = bsim.simulate(_allreduces, ranks=P, network=NET, collectives=source, protocol="bsim")
    assert res.collective_algorithms == {
        "allreduce": {"rabenseifner": 1, "recursive_doubling": 2}}


@pytest.mark.parametrize(("P", "expected"), [
    (6, "binomial"),                       # fewer than 8 ranks
    (16, "scatter_doubling_allgather"),    # 100 kB medium, power of two
    (12, "scatter_ring_allgather"),        # 100 kB medium, not a power of two
])
def test_bcast_records_the_size_and_rank_count_rule(P: int, expected: str) -> None:
    """A 100,000-byte Bcast (>= 12288, < 524288) on P ranks, under both sources."""
    def main() -> None:
        MPI.COMM_WORLD.Bcast(np.zeros(100_000, np.uint8), root=0)
    for source in ("analytic", "algorithmic"):
        res = bsim.simulate(main, ranks=P, network=NET, collectives=source, protocol="bsim")
        assert res.collective_algorithms == {"bcast": {expected: 1}}, source


def test_an_override_is_recorded_and_sources_without_algorithms_are_not() -> None:
    """``allreduce=ring`` names ring for every call; ``clog`` names no algorithm."""
    ring = bsim.simulate(_allreduces, ranks=8, network=NET,
                         collectives="algorithmic:allreduce=ring", protocol="bsim")
    assert ring.collective_algorithms == {"allreduce": {"ring": 3}}
    clog = bsim.simulate(_allreduces, ranks=8, network=NET, collectives="clog:c=1e-6,d=1e-6",
                         protocol="bsim")
    assert clog.collective_algorithms == {}
    assert "collective_algorithms" not in clog.to_dict()


def test_one_member_calls_and_subcommunicators() -> None:
    """COMM_SELF runs no algorithm; each half of a split counts its own call (member 0 of
    each), and the split itself is priced as an allgather (MPICH: 4 ranks, 8 B x 4 =
    32 B < 524288 on a power of two: recursive doubling)."""
    def main() -> None:
        MPI.COMM_SELF.Allreduce(np.zeros(8), np.zeros(8))
        half = MPI.COMM_WORLD.Split(MPI.COMM_WORLD.rank % 2, 0)
        half.Allreduce(np.zeros(8), np.zeros(8))
    res = bsim.simulate(main, ranks=8, network=NET, protocol="bsim")
    assert res.collective_algorithms["allreduce"] == {"recursive_doubling": 2}


def test_the_record_is_in_the_json_and_read_back() -> None:
    """``to_dict`` writes it, ``from_dict`` reads it, the summary names it."""
    res = bsim.simulate(_allreduces, ranks=8, network=NET, protocol="bsim")
    data = json.loads(res.json_text())
    assert data["collective_algorithms"] == {
        "allreduce": {"rabenseifner": 1, "recursive_doubling": 2}}
    assert Result.from_dict(data).collective_algorithms == res.collective_algorithms
    assert "algorithms  allreduce rabenseifner 1, recursive_doubling 2" in res.summary()


_DISTRIBUTED = """
import json
import numpy as np
from mpi4py import MPI as REAL
import bsim
from bsim import MPI

def main():
    comm = MPI.COMM_WORLD
    bsim.add_time(1e-6 * (comm.rank % 3))
    comm.Allreduce(np.zeros(8), np.zeros(8))
    comm.Allreduce(np.zeros(1 << 17), np.zeros(1 << 17))
    half = comm.Split(comm.rank // 4, 0)          # halves on different host processes
    half.Bcast(np.zeros(100_000, np.uint8), root=1)
    half.Gather(np.zeros(10), np.zeros(40) if half.rank == 0 else None, root=0)

out = {}
for source in ("analytic", "algorithmic"):
    res = bsim.simulate(main, ranks=8, network="hockney:latency=1e-6,bandwidth=1e9",
                        collectives=source, hosts=REAL.COMM_WORLD, protocol="bsim")
    out[source] = res.collective_algorithms
if REAL.COMM_WORLD.rank == 0:
    print(json.dumps(out, sort_keys=True))
"""


@needs_mpiexec
def test_k_host_processes_record_what_one_process_records() -> None:
    """Under ``mpiexec -n 2`` each call is counted once, on the host of its member 0, and
    the hosts' counts are merged: the record equals the one-process run's."""
    one = run_mpiexec(1, _DISTRIBUTED)
    two = run_mpiexec(2, _DISTRIBUTED)
    assert one.returncode == 0, one.stderr[-2000:]
    assert two.returncode == 0, two.stderr[-2000:]
    expected = {"allgather": {"recursive_doubling": 1},   # the Split (8 ranks, 8 B each)
                "allreduce": {"rabenseifner": 1, "recursive_doubling": 1},
                "bcast": {"binomial": 2},                  # 4 ranks < 8
                "gather": {"binomial": 2}}
    assert json.loads(one.stdout) == {"analytic": expected, "algorithmic": expected}
    assert json.loads(two.stdout) == json.loads(one.stdout)
