"""What size each member of a collective is priced on, derived by hand on Hockney.

Network: ``t(s) = 1 us + s / 1 GB/s``.  Formulas (``docs/collectives.md``, MPICH's
algorithms): binomial bcast ``ceil(log2 P) t(s)``; binomial gather and scatter
``ceil(log2 P) 1 us + floor((P-1) s / P) / 1 GB/s`` with ``s`` the root's total; linear reduce and
bcast ``(P-1) t(s)``.  The fan-out rule charges every member ``max(own, root) + T``; the
fan-in rule a non-root its own arrival ``+ T`` of its own contribution.  Gatherv and Scatterv
(and mpi4py's lowercase gather and scatter, which send the pickles by them) are linear, as
in MPICH: a non-root of the gather pays its one message ``t(own block)`` and the root the
messages it receives in turn; a member of the scatter the root's messages up to its own,
which go out one after another in rank order, the root all of them; a member whose block
is empty moves nothing and pays nothing (MPICH's ``if (recvcounts[i])``,
``if (sendcount)``).
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

import bsim
from bsim import MPI

NET = "hockney:latency=1e-6,bandwidth=1e9"


def t(s: float) -> float:
    return 1e-6 + s / 1e9


def tree(p: int, s: float) -> float:
    """Binomial gather/scatter of a total of *s* bytes over *p* ranks: the (P-1)/P of the
    bytes that move, in whole bytes."""
    return math.ceil(math.log2(p)) * 1e-6 + (p - 1) * s // p / 1e9


def run(main, p, **kw):
    kw.setdefault("protocol", "bsim")   # the papers' rules: the sizes are priced by hand
    return bsim.simulate(main, p, network=NET, **kw)


def _pickled(obj) -> int:
    return len(pickle.dumps(obj, pickle.HIGHEST_PROTOCOL))


def bcast(p: int, s: float) -> float:
    """MPICH's bcast: binomial below 12,288 bytes or on fewer than 8 ranks, else (P a power
    of two, below 512 KiB) a binomial scatter then a recursive-doubling allgather."""
    if s < 12288 or p < 8:
        return math.ceil(math.log2(p)) * t(s)
    return 2 * tree(p, s)


@pytest.mark.parametrize("p", [4, 8])
def test_lowercase_bcast_prices_every_rank_on_the_root_s_pickle(p):
    """mpi4py broadcasts the pickle's length (8 bytes), then the pickle: every rank pays
    both, T(P, 8) + T(P, s); non-roots were priced on 0 bytes (2 us for a 20 kB object on
    4 ranks, under the 21 us one message needs)."""
    obj = bytes(20000)

    def main():
        comm = MPI.COMM_WORLD
        got = comm.bcast(obj if comm.rank == 0 else None, root=0)
        return len(got)

    res = run(main, p)
    want = bcast(p, 8) + bcast(p, _pickled(obj))
    assert res.returns == [len(obj)] * p
    assert res.finish.tolist() == pytest.approx([want] * p, rel=1e-12)


def test_lowercase_bcast_expanded_runs_one_schedule_at_every_rank():
    """Under --collectives algorithmic every rank knows the size before the data bcast, so
    all run one binomial schedule: no DeadlockError, and no receiver ends before one
    message of the pickle could reach it."""
    obj = bytes(20000)

    def main():
        comm = MPI.COMM_WORLD
        return len(comm.bcast(obj if comm.rank == 0 else None, root=0))

    res = run(main, 8, collectives="algorithmic")
    assert res.returns == [len(obj)] * 8
    assert min(res.finish[1:]) >= t(_pickled(obj))


def test_lowercase_scatter_prices_every_rank_on_the_root_s_total():
    """mpi4py scatters the lengths (8 bytes each, binomial), then the pickles (a linear
    Scatterv priced on the root's total): rank k pays T(P, 8 P) + k t(pickle), the root
    T(P, 8 P) + 7 t(pickle), not T(P, 0) at the non-roots."""
    items = [bytes(100000)] * 8

    def main():
        comm = MPI.COMM_WORLD
        return len(comm.scatter(items if comm.rank == 0 else None, root=0))

    res = run(main, 8)
    one = t(sum(_pickled(x) for x in items) / 8)
    want = [tree(8, 8 * 8) + (7 if r == 0 else r) * one for r in range(8)]
    assert res.returns == [100000] * 8
    assert res.finish.tolist() == pytest.approx(want, rel=1e-12)


def _uneven_v(kind: str):
    def main():
        comm = MPI.COMM_WORLD
        r, p = comm.rank, comm.size
        counts = [0] * (p - 1) + [10**6]
        if kind == "Gatherv":
            comm.Gatherv(np.zeros(counts[r], "B"),
                         [np.empty(sum(counts), "B"), counts] if r == 0 else None, root=0)
        else:
            comm.Scatterv([np.zeros(sum(counts), "B"), counts] if r == 0 else None,
                          np.empty(counts[r], "B"), root=0)
    return main


@pytest.mark.parametrize("collectives", ["analytic", "algorithmic"])
def test_gatherv_prices_a_non_root_on_its_own_block(collectives):
    """Rank 7 gathers 1 MB to rank 0, the others nothing, by MPICH's linear Gatherv: rank 7
    pays its own message t(1 MB) = 1,001 us, not T(8, 8 MB) (7 ms, after the root had
    everything); the others send nothing (they paid t(0) = 1 us each); the root receives
    the one message, t(1 MB) = 1,001 us (it paid 6 t(0) + t(1 MB) = 1,007 us).  Expanded
    (bsim protocol: a send is free, the receiver pays) rank 7 ends at 0."""
    res = run(_uneven_v("Gatherv"), 8, collectives=collectives)
    last = t(10**6) if collectives == "analytic" else 0.0
    want = [t(10**6)] + [0.0] * 6 + [last]
    assert res.finish.tolist() == pytest.approx(want, rel=1e-12, abs=1e-15)
    assert res.total_messages == (1 if collectives == "algorithmic" else 0)


@pytest.mark.parametrize("collectives", ["analytic", "algorithmic"])
def test_scatterv_prices_each_member_on_its_own_block(collectives):
    """Rank 0 scatters 1 MB to rank 7, nothing to the others, by MPICH's linear Scatterv,
    which sends only the non-empty blocks: rank 7 receives the one message, t(1 MB) =
    1,001 us (it was priced as the 7th message of the average block, 7 t(125 kB) =
    882 us, and expanded as t(125 kB) = 126 us: both below the 1,001 us one megabyte
    needs); ranks 1-6 receive nothing, 0 (they paid k 126 us); the root sends the one
    message, t(1 MB) under the port model of the formula, 0 expanded (sends are free)."""
    res = run(_uneven_v("Scatterv"), 8, collectives=collectives)
    root = t(10**6) if collectives == "analytic" else 0.0
    want = [root] + [0.0] * 6 + [t(10**6)]
    assert res.finish.tolist() == pytest.approx(want, rel=1e-12, abs=1e-15)
    assert res.total_messages == (1 if collectives == "algorithmic" else 0)


def test_lowercase_gather_prices_a_non_root_on_its_own_pickle():
    """Rank 3 gathers a 100 kB object, the others 10 bytes (a linear Gatherv of the
    pickles): each non-root pays t(its own pickle), the root the seven in turn."""
    objs = [bytes(100000 if r == 3 else 10) for r in range(8)]

    def main():
        comm = MPI.COMM_WORLD
        got = comm.gather(objs[comm.rank], root=0)
        return None if got is None else [len(x) for x in got]

    res = run(main, 8)
    sizes = [_pickled(x) for x in objs]
    assert res.returns[0] == [len(x) for x in objs]
    want = [sum(t(s) for s in sizes[1:])] + [t(s) for s in sizes[1:]]
    assert res.finish.tolist() == pytest.approx(want, rel=1e-12)


def test_intercomm_reduce_prices_the_local_reduction_on_one_vector():
    """Two groups of 4, an 8,000-byte Reduce into group 0's leader, linear reduce: the
    remote group's local reduction is 3 t(8000) = 27 us at its leader (it was priced on
    4 x 8000 bytes: 99 us), whose other members each send one vector, t(8000) = 9 us; the
    root then receives the result, t(8000) = 9 us more."""
    n = 8000

    def main():
        world = MPI.COMM_WORLD
        me = world.Get_rank()
        color = me // 4
        local = world.Split(color, me)
        ic = local.Create_intercomm(0, world, 4 if color == 0 else 0, 7)
        world.Barrier()
        t0 = MPI.Wtime()
        if color == 0:
            root = MPI.ROOT if local.Get_rank() == 0 else MPI.PROC_NULL
            ic.Reduce(None, np.zeros(n // 8) if root == MPI.ROOT else None, root=root)
        else:
            ic.Reduce(np.zeros(n // 8), None, root=0)
        return MPI.Wtime() - t0

    res = run(main, 8, collectives="analytic:reduce=linear,bcast=linear")
    assert res.returns[4:] == pytest.approx([3 * t(n)] + [t(n)] * 3, rel=1e-9)
    assert res.returns[0] == pytest.approx(3 * t(n) + t(n), rel=1e-9)
