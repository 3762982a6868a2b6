"""MPI's lifecycle and argument types as MPI and mpi4py define them."""

from __future__ import annotations

import numpy as np
import pytest

import bsim
from bsim import MPI

NET = "hockney:latency=1e-6,bandwidth=1e9"


def test_finalize_then_any_call_is_an_error():
    """After Finalize a rank's MPI calls (Finalize again included) name the rank."""
    def main():
        MPI.Finalize()
        assert MPI.Is_finalized()
        MPI.COMM_WORLD.Barrier()
    with pytest.raises(bsim.MPIUsageError, match=r"rank 0: MPI call after MPI.Finalize\(\)"):
        bsim.simulate(main, ranks=1, network=NET)

    def twice():
        MPI.Finalize()
        MPI.Finalize()
    with pytest.raises(bsim.MPIUsageError, match="after MPI.Finalize"):
        bsim.simulate(twice, ranks=1, network=NET)


def test_is_finalized_is_per_rank_and_false_before():
    """Is_finalized is False until the calling rank finalizes; Is_initialized is True."""
    def main():
        before = MPI.Is_finalized(), MPI.Is_initialized()
        MPI.COMM_WORLD.Barrier()
        MPI.Finalize()
        return before, MPI.Is_finalized()
    r = bsim.simulate(main, ranks=2, network=NET)
    assert r.returns == [((False, True), True)] * 2


def test_init_twice_is_an_error():
    """mpi4py initializes on import: MPI.Init() is a second MPI_Init, an error."""
    with pytest.raises(bsim.MPIUsageError, match=r"rank 0: MPI.Init\(\): MPI is already"):
        bsim.simulate(lambda: MPI.Init(), ranks=1, network=NET)


def test_sys_exit_zero_ends_the_rank_normally():
    """sys.exit(0) in every rank is a normal end, as under mpiexec."""
    import sys

    def main():
        bsim.add_time(1e-3)
        sys.exit(0)
    r = bsim.simulate(main, ranks=2, network=NET)
    assert list(r.finish) == [1e-3, 1e-3]


def test_sys_exit_nonzero_is_reported_with_rank_code_and_line():
    """sys.exit(3) in rank 1: RankError naming the rank, the code and the line."""
    import sys

    def main():
        if MPI.COMM_WORLD.rank == 1:
            sys.exit(3)   # the exit
    with pytest.raises(bsim.RankError, match=r"rank 1 called sys.exit\(3\) \(at .*test_lifecycle"
                                             r"\.py:\d+\)"):
        bsim.simulate(main, ranks=2, network=NET)


@pytest.mark.parametrize("value", [True, False, "1", None, -1.0, float("inf")])
def test_add_time_takes_only_finite_nonnegative_numbers(value):
    """add_time(True) is not 1 s: a bool is not a number of seconds."""
    with pytest.raises(bsim.AddTimeError, match="add_time"):
        bsim.simulate(lambda: bsim.add_time(value), ranks=1, network=NET)


def test_numpy_integers_are_ints():
    """Split(color=np.int64(0)), numpy dest/tag/root: accepted as mpi4py accepts them."""
    def main():
        comm = MPI.COMM_WORLD
        sub = comm.Split(color=np.int64(comm.rank % 2), key=np.int32(comm.rank))
        if comm.rank == 0:
            comm.send("x", dest=np.int64(1), tag=np.int16(3))
        elif comm.rank == 1:
            assert comm.recv(source=np.int64(0), tag=np.int64(3)) == "x"
        return sub.Get_size(), comm.bcast(comm.rank, root=np.int64(0))
    assert bsim.simulate(main, ranks=4, network=NET).returns == [(2, 0)] * 4


def test_testsome_completes_what_is_ready_and_polls_otherwise():
    """Testsome: indices completable now (here the message that arrived), else a poll."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            a = comm.Irecv(bsim.Buffer(8), source=1, tag=1)
            b = comm.Irecv(bsim.Buffer(8), source=1, tag=2)
            first = MPI.Request.Testsome([a, b])       # t = 0: nothing has arrived
            bsim.add_time(1e-3)                        # the tag-1 message arrives meanwhile
            second = MPI.Request.Testsome([a, b])
            MPI.Request.Waitall([a, b])
            return first, second, MPI.Request.Testsome([a, b])
        comm.Send(bsim.Buffer(8), dest=0, tag=1)
        bsim.add_time(5e-3)
        comm.Send(bsim.Buffer(8), dest=0, tag=2)
    r = bsim.simulate(main, ranks=2, network=NET)
    assert r.returns[0] == ([], [0], None)


def test_requests_left_pending_are_reported():
    """An Isend never waited and an Irecv freed: the first is reported, per rank, in the
    result, its JSON and the summary; completed and freed requests are not."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            comm.Isend(bsim.Buffer(8), dest=1)                  # never completed: pending
            comm.Isend(bsim.Buffer(8), dest=1, tag=1).Wait()    # completed
        else:
            comm.Irecv(bsim.Buffer(8), source=0).Free()         # freed
            comm.Recv(bsim.Buffer(8), source=0, tag=1)
    r = bsim.simulate(main, ranks=2, network=NET)
    assert r.pending_requests == {0: 1}
    assert "warning: 1 nonblocking requests never completed (Wait/Test) nor freed, on " \
           "rank(s) 0 (1)" in r.summary()
    assert bsim.Result.from_dict(r.to_dict()).pending_requests == {0: 1}
    assert r.to_dict()["pending_requests"] == {"0": 1}


def test_no_pending_key_when_all_requests_complete():
    """A clean run's JSON has no pending_requests key (the format is unchanged)."""
    def main():
        comm = MPI.COMM_WORLD
        reqs = [comm.Isend(bsim.Buffer(8), dest=(comm.rank + 1) % 2),
                comm.Irecv(bsim.Buffer(8), source=(comm.rank + 1) % 2),
                comm.Ibarrier()]
        MPI.Request.Waitall(reqs)
    r = bsim.simulate(main, ranks=2, network=NET)
    assert r.pending_requests == {} and "pending_requests" not in r.to_dict()
