"""What size each member of a collective is priced on, derived by hand on Hockney.

Network: ``t(s) = 1 us + s / 1 GB/s``.  Formulas (``docs/collectives.md``, MPICH's
algorithms): binomial bcast ``ceil(log2 P) t(s)``; binomial gather and scatter
``ceil(log2 P) 1 us + floor((P-1) s / P) / 1 GB/s`` with ``s`` the root's total; linear reduce and
bcast ``(P-1) t(s)``.  The fan-out rule charges every member ``max(own, root) + T``; the
fan-in rule a non-root its own arrival ``+ T`` of its own contribution.
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
    """mpi4py scatters the lengths (8 bytes each), then the pickles: every member pays
    T(P, 8 P) + T(P, sum of the pickles), not T(P, 0) at the non-roots."""
    items = [bytes(100000)] * 8

    def main():
        comm = MPI.COMM_WORLD
        return len(comm.scatter(items if comm.rank == 0 else None, root=0))

    res = run(main, 8)
    want = tree(8, 8 * 8) + tree(8, sum(_pickled(x) for x in items))
    assert res.returns == [100000] * 8
    assert res.finish.tolist() == pytest.approx([want] * 8, rel=1e-12)


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


def test_gatherv_prices_a_non_root_on_its_own_block():
    """Rank 7 gathers 1 MB to rank 0, the others nothing: the root pays T(8, 1 MB) = 878 us;
    rank 7 the same formula for its own 1 MB, not T(8, 8 MB) (7 ms, after the root had
    everything); the others T(8, 0) = 3 us."""
    res = run(_uneven_v("Gatherv"), 8)
    want = [tree(8, 10**6)] + [tree(8, 0)] * 6 + [tree(8, 10**6)]
    assert res.finish.tolist() == pytest.approx(want, rel=1e-12)


def test_scatterv_prices_every_member_on_the_root_s_total():
    """The plain op with the same total bytes: T(8, 1 MB) at every member (rank 7 paid
    T(8, 8 MB), the others T(8, 0))."""
    res = run(_uneven_v("Scatterv"), 8)
    assert res.finish.tolist() == pytest.approx([tree(8, 10**6)] * 8, rel=1e-12)


def test_lowercase_gather_prices_a_non_root_on_its_own_pickle():
    """Rank 3 gathers a 100 kB object, the others 10 bytes: the root pays T(8, total),
    each non-root T(8, its own pickle)."""
    objs = [bytes(100000 if r == 3 else 10) for r in range(8)]

    def main():
        comm = MPI.COMM_WORLD
        got = comm.gather(objs[comm.rank], root=0)
        return None if got is None else [len(x) for x in got]

    res = run(main, 8)
    sizes = [_pickled(x) for x in objs]
    assert res.returns[0] == [len(x) for x in objs]
    want = [tree(8, sum(sizes))] + [tree(8, s) for s in sizes[1:]]
    assert res.finish.tolist() == pytest.approx(want, rel=1e-12)


def test_intercomm_reduce_prices_the_local_reduction_on_one_vector():
    """Two groups of 4, an 8,000-byte Reduce into group 0's leader, linear reduce: the
    remote group's local reduction is 3 t(8000) = 27 us (it was priced on 4 x 8000 bytes:
    99 us); the root then receives the result, t(8000) = 9 us more."""
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
    assert res.returns[4:] == pytest.approx([3 * t(n)] * 4, rel=1e-9)
    assert res.returns[0] == pytest.approx(3 * t(n) + t(n), rel=1e-9)
