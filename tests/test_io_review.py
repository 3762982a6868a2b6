"""Collective MPI-IO time: the union of overlapping requests accessed once, the two-phase
exchange charged what each aggregator receives (``docs/io.md``,
``bsim/mpi/io/collective.py``)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable

import pytest

import bsim
from netmodels.filesystem import Lustre, union

MiB = 1 << 20
HOCKNEY = "hockney:latency=1e-6,bandwidth=1e9"
BARRIER = "clog:c=1e-5,d=0"   # every collective (the barrier of a File call) 1e-5 s


def _name() -> str:
    fd, name = tempfile.mkstemp(prefix="bsim-io-review-")
    os.close(fd)
    return name


def _timed(call: str, offset_of: Callable[[int, int], int], nbytes: int, name: str):
    """A program: open *name*, barrier, time ``fh.<call>(offset, placeholder)`` (or
    ``fh.<call>(placeholder)`` for the ordered forms) of *nbytes* at the rank's offset
    ``offset_of(rank, nbytes)``, close; returns the call's time."""
    def main():
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        r, N = comm.Get_rank(), nbytes
        fh = MPI.File.Open(comm, name, MPI.MODE_RDWR | MPI.MODE_CREATE)
        comm.Barrier()
        t0 = MPI.Wtime()
        fn = getattr(fh, call)
        buf = bsim.Buffer(N)
        if "ordered" in call:
            fn(buf)
        elif call.startswith("I"):
            fn(offset_of(r, N), buf).Wait()
        else:
            fn(offset_of(r, N), buf)
        t = MPI.Wtime() - t0
        fh.Close()
        return t
    return main


def _run(n: int, call: str, offset_of: Callable[[int, int], int], nbytes: int, fs: str,
         network: str = HOCKNEY, **kw):
    name = _name()
    try:
        kw.setdefault("protocol", "bsim")   # the papers' rules: the exchanges priced by hand
        return bsim.simulate(_timed(call, offset_of, nbytes, name), n, network=network,
                             filesystem=fs, **kw).returns
    finally:
        os.unlink(name)


def test_union_by_hand():
    """Overlapping and touching ranges merge; empty ones vanish; the result is sorted."""
    assert union([(20, 5), (0, 10), (5, 10), (40, 0)]) == [(0, 15), (20, 5)]
    assert union([(0, 10), (10, 5)]) == [(0, 15)]
    assert union([(0, 10)] * 16) == [(0, 10)]
    assert union([(3, 4), (0, 100)]) == [(0, 100)]
    assert union([]) == []


def test_domains_by_hand():
    """Stripe k belongs to aggregator k mod A (ROMIO's Lustre driver)."""
    fs = Lustre(stripe_size=10)
    # bytes 5..45 with 3 aggregators: stripe 0 (5 bytes), 1, 2, 3, stripe 4 (5 bytes)
    assert fs.domains([(5, 40)], 3) == {0: 15, 1: 15, 2: 10}
    assert fs.domains([(0, 10), (30, 10), (60, 5)], 3) == {0: 25}
    assert fs.domains([(0, 1000)], 1) == {0: 1000}
    assert fs.domains([(0, 0)], 4) == {}


@pytest.mark.parametrize("n", [1, 2, 4, 16])
@pytest.mark.parametrize("call", ["Read_at_all", "Write_at_all", "Iread_at_all"])
def test_every_rank_on_the_same_mib_costs_one_mib(n, call):
    """Every rank reads (or writes) the same 1 MiB collectively: the aggregator accesses
    it once, 1048576 / 1e9 s at any rank count (before: n times that)."""
    fs = ("lustre:stripe_count=1,ost_bandwidth=1e9,client_bandwidth=1e12,latency=0,"
          "metadata=0")
    # the zero network: no barrier, no exchange; one OST of 1e9 B/s holds the 1 MiB
    got = _run(n, call, lambda r, N: 0, MiB, fs, network="zero")
    assert got == pytest.approx([MiB / 1e9] * n, rel=1e-12)


def test_partly_overlapping_writes_write_the_union():
    """4 ranks write 1000 bytes at 500 r: bytes 0..2500 once, 1e-4 + 2500 / 1e9."""
    fs = "lustre:stripe_count=1,ost_bandwidth=1e9,client_bandwidth=1e12,metadata=0"
    got = _run(4, "Write_at_all", lambda r, N: 500 * r, 1000, fs, network="zero")
    assert got == pytest.approx([1e-4 + 2500 / 1e9] * 4, rel=1e-12)   # before: 4000 bytes


@pytest.mark.parametrize("n", [1, 2, 4, 16])
@pytest.mark.parametrize("call", ["Write_at_all", "Read_at_all", "Iwrite_at_all"])
def test_one_aggregator_receives_every_other_part(n, call):
    """n ranks, 1 MiB each at r MiB, default lustre (one stripe: one aggregator, rank 0).

    Barrier 1e-5 (clog c, none on one rank); exchange: rank 0 receives (a read: sends)
    the other n - 1 parts over its link, one message of (n - 1) MiB on Hockney,
    1e-6 + (n - 1) * 1048576 / 1e9 (each sender's 1 MiB is less); the write of n MiB on
    one 2.8e9 B/s OST, 1e-4 + n * 1048576 / 2.8e9 (the 5e9 client link is faster).
    Before: the exchange was one 1 MiB message whatever n (7.1 ms at 16, now 21.8)."""
    barrier = 1e-5 if n > 1 else 0.0
    exchange = 1e-6 + (n - 1) * MiB / 1e9 if n > 1 else 0.0
    expect = barrier + exchange + 1e-4 + n * MiB / 2.8e9
    got = _run(n, call, lambda r, N: r * N, MiB, "lustre", collectives=BARRIER)
    assert got == pytest.approx([expect] * n, rel=1e-12)


def test_one_aggregator_under_loggp_matches_the_gather_by_hand():
    """The review's io_agg case: 16 x 1 MiB, loggp (rendezvous: + two envelope wires of
    1e-6 each), fluid contention; the aggregator's 15 MiB bound the exchange:
    3e-6 + 15 * 1048576 / 1e9 = 15.73 ms, then the 16 MiB write 6.09 ms."""
    expect = 1e-5 + 3e-6 + 15 * MiB / 1e9 + 1e-4 + 16 * MiB / 2.8e9
    got = _run(16, "Write_at_all", lambda r, N: r * N, MiB, "lustre", collectives=BARRIER,
               protocol="loggp", contention="fluid")
    assert got == pytest.approx([expect] * 16, rel=1e-12)   # 21.83 ms (before: 7.15)


@pytest.mark.parametrize("call", ["Write_at_all", "Write_ordered"])
def test_four_aggregators_of_eight_ranks(call):
    """8 ranks, 1 MiB each at r MiB (the ordered form puts them there too), 4 stripes of
    1 MiB: aggregators ranks 0, 2, 4, 6 (floor(j 8 / 4)), stripe k to aggregator k mod 4.
    Aggregator 0 (rank 0) keeps stripe 0 and receives stripe 4; aggregator 1 (rank 2)
    receives stripes 1 and 5; 2 (rank 4) stripes 2 and 6; 3 (rank 6) stripes 3 and 7:
    the most is 2 MiB, 1e-6 + 2 * 1048576 / 1e9.  Then 2 MiB on each OST:
    1e-4 + max(2 MiB / 2.8e9, 8 MiB / (4 x 5e9))."""
    expect = 1e-5 + 1e-6 + 2 * MiB / 1e9 + 1e-4 + 2 * MiB / 2.8e9
    got = _run(8, call, lambda r, N: r * N, MiB, "lustre:stripe_count=4", collectives=BARRIER)
    assert got == pytest.approx([expect] * 8, rel=1e-12)


def test_each_rank_its_own_aggregator_exchanges_nothing():
    """4 ranks on 4 stripes, rank r's MiB is stripe r, aggregator r is rank r: no
    exchange, 1e-5 + 1e-4 + 1 MiB / 2.8e9."""
    got = _run(4, "Write_at_all", lambda r, N: r * N, MiB, "lustre:stripe_count=4",
               collectives=BARRIER)
    assert got == pytest.approx([1e-5 + 1e-4 + MiB / 2.8e9] * 4, rel=1e-12)
