"""Counts and byte sizes beyond ``MPI_Count`` (a signed 64-bit int, largest 2**63-1) are
refused where the buffer is given, as a negative count is (tests/test_errors.py)."""

from __future__ import annotations

import pytest

import bsim
from bsim import MPI

COUNT_MAX = 2 ** 63 - 1   # MPI 4.1 §2.5.8: MPI_Count holds any count; int64 here
COMMS = {"WORLD": lambda: MPI.COMM_WORLD, "SELF": lambda: MPI.COMM_SELF,
         "Dup": lambda: MPI.COMM_WORLD.Dup()}


def _rank0_sends(comm_of, spec_of):
    """Rank 0 sends the spec *spec_of()* to the next rank of the communicator (itself on
    SELF); the error comes before anything moves, so nobody needs to receive it."""
    def main():
        comm = comm_of()
        if MPI.COMM_WORLD.rank == 0:
            comm.Send(spec_of(), dest=(comm.rank + 1) % comm.size)
    return main


@pytest.mark.parametrize("comm", COMMS)
@pytest.mark.parametrize("spec, why", [
    (lambda: [None, COUNT_MAX + 1, MPI.BYTE],
     "count 9223372036854775808 exceeds MPI's largest count 2\\*\\*63-1"),
    (lambda: [None, 10 ** 20, MPI.BYTE],
     "count 100000000000000000000 exceeds MPI's largest count"),
    # 2**60 doubles are 2**63 bytes: a valid count, a byte size one past the range
    (lambda: [None, 2 ** 60, MPI.DOUBLE],
     "count 1152921504606846976 x DOUBLE = 9223372036854775808 bytes exceeds"),
], ids=["count-2**63", "count-10**20", "bytes-2**63"])
def test_count_spec_above_mpi_count_is_a_usage_error(comm, spec, why):
    """[None, count, datatype] above 2**63-1 (count or bytes): MPIUsageError naming the call."""
    with pytest.raises(bsim.MPIUsageError, match=f"rank 0: Send: bad buffer: {why}"):
        bsim.simulate(_rank0_sends(COMMS[comm], spec), ranks=2)


def _send_huge_placeholder(comm):
    comm.Send(bsim.buffer(10 ** 20, MPI.BYTE), dest=comm.size - 1)


HUGE_LINE = _send_huge_placeholder.__code__.co_firstlineno + 1


@pytest.mark.parametrize("comm", COMMS)
def test_placeholder_above_mpi_count_is_refused_at_its_line(comm):
    """bsim.buffer(10**20): refused as Buffer(-1) is, naming the rank, count and line."""
    def main():
        c = COMMS[comm]()
        if MPI.COMM_WORLD.rank == 0:
            _send_huge_placeholder(c)

    with pytest.raises(bsim.RankError, match=rf"rank 0 raised ValueError: Buffer: count "
                       rf"100000000000000000000 exceeds MPI's largest count .*"
                       rf"test_count_range\.py:{HUGE_LINE}\)"):
        bsim.simulate(main, ranks=2)


@pytest.mark.parametrize("count, datatype, nbytes", [
    (COUNT_MAX + 1, MPI.BYTE, None), (2 ** 60, MPI.DOUBLE, 2 ** 63)], ids=["count", "bytes"])
def test_buffer_above_mpi_count(count, datatype, nbytes):
    """Buffer(count, datatype) outside a run: ValueError for a count or byte size > 2**63-1."""
    with pytest.raises(ValueError, match=f"Buffer: count {count} "
                       + (f"x DOUBLE = {nbytes} bytes exceeds" if nbytes else "exceeds")):
        bsim.Buffer(count, datatype)


def test_largest_count_is_accepted():
    """2**63-1 bytes is a valid count: the receive ends at l + s/w (Hockney, hand-derived)."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            comm.Send([None, COUNT_MAX, MPI.BYTE], dest=1)
        else:
            comm.Recv(bsim.Buffer(COUNT_MAX), source=0)

    r = bsim.simulate(main, ranks=2, network="hockney:latency=1e-6,bandwidth=1e9")
    assert float(r.finish[1]) == pytest.approx(1e-6 + COUNT_MAX / 1e9, rel=1e-12)
    assert int(r.bytes[0]) == COUNT_MAX


@pytest.mark.parametrize("counts, why", [
    ([COUNT_MAX + 1] * 2, "count 9223372036854775808 exceeds MPI's largest count"),
    ([2 ** 60] * 2, "count 1152921504606846976 x DOUBLE = 9223372036854775808 bytes")],
    ids=["count", "bytes"])
def test_vector_counts_above_mpi_count_are_refused(counts, why):
    """The counts of a vector spec too (an Alltoallv of 2**63-byte blocks ran)."""
    def main():
        dt = MPI.BYTE if why.startswith("count 9") else MPI.DOUBLE
        spec = [None, (counts, None), dt]
        MPI.COMM_WORLD.Alltoallv(spec, spec)
    with pytest.raises(bsim.MPIUsageError,
                       match=f"rank 0: Alltoallv: bad vector buffer: {why}"):
        bsim.simulate(main, ranks=2)
