"""Communicators, groups, Cartesian topologies and collective mismatch detection."""

from __future__ import annotations

import pytest

import bsim
from bsim import MPI

NET = "hockney:latency=1e-6,bandwidth=1e9"


def run(main, P=8, **kw):
    return bsim.simulate(main, ranks=P, network=NET, **kw).returns


def test_split_orders_by_key_then_rank_and_undefined_gives_null():
    """Split(color, key): members ordered by (key, old rank); UNDEFINED -> COMM_NULL."""
    def main():
        comm = MPI.COMM_WORLD
        r = comm.rank
        color = MPI.UNDEFINED if r == 7 else r % 2
        sub = comm.Split(color, key=-r)
        if not sub:
            return None
        return sub.rank, sub.size, sub.Get_group().Translate_ranks(None)

    out = run(main)
    assert out[7] is None
    assert out[0] == (3, 4, [6, 4, 2, 0])     # evens, by key -r: 6, 4, 2, 0
    assert out[1] == (2, 3, [5, 3, 1])        # odds without 7


def test_dup_compare_and_groups():
    """Dup is CONGRUENT, a reordered Split SIMILAR; Group set algebra by hand."""
    def main():
        world = MPI.COMM_WORLD
        dup = world.Dup()
        rev = world.Split(0, key=-world.rank)
        g = world.Get_group()
        a, b = g.Incl([0, 1, 2, 3]), g.Excl([0, 1])
        return (world.Compare(world), world.Compare(dup), world.Compare(rev),
                MPI.Group.Union(a, b).size, MPI.Group.Intersection(a, b).Translate_ranks(None),
                a.Translate_ranks([2, 3], b), b.rank, a.Compare(g.Incl([3, 2, 1, 0])))

    out = run(main, P=6)
    assert out[0][:3] == (MPI.IDENT, MPI.CONGRUENT, MPI.SIMILAR)
    assert out[0][3:5] == (6, [2, 3])
    assert out[0][5] == [0, 1]                # ranks 2, 3 are b's ranks 0, 1
    assert out[0][6] == MPI.UNDEFINED and out[3][6] == 1   # world 0 not in b; 3 is b's 1
    assert out[0][7] == MPI.SIMILAR


def test_create_group_and_create():
    """Create_group over the members only; Create over the whole communicator."""
    def main():
        world = MPI.COMM_WORLD
        evens = world.Get_group().Incl([0, 2, 4])
        c1 = world.Create(evens)
        c2 = world.Create_group(evens) if world.rank % 2 == 0 else MPI.COMM_NULL
        s1 = c1.allreduce(world.rank) if c1 else None
        s2 = c2.allreduce(1) if c2 else None
        return s1, s2

    assert run(main, P=5) == [(6, 3), (None, None), (6, 3), (None, None), (6, 3)]


def test_split_type_shared_groups_ranks_by_node():
    """Split_type(COMM_TYPE_SHARED) gives one communicator per simulated node."""
    def main():
        node = MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED)
        return node.size, MPI.Get_processor_name()

    out = bsim.simulate(main, ranks=8, network="torus:dims=2x2,cores=2").returns
    assert [o[0] for o in out] == [2] * 8
    assert [o[1] for o in out] == ["node0", "node0", "node1", "node1",
                                   "node2", "node2", "node3", "node3"]


def test_cartesian_coords_shift_and_sub():
    """Create_cart is row-major; Shift wraps on periodic dims; Sub keeps a row."""
    def main():
        world = MPI.COMM_WORLD
        cart = world.Create_cart([2, 3], periods=[False, True])
        if not cart:
            return None
        row = cart.Sub([False, True])
        return (cart.coords, cart.Shift(0, 1), cart.Shift(1, 1), cart.Get_cart_rank([1, 4]),
                row.size, row.allreduce(world.rank), cart.topo[0])

    out = run(main, P=7)
    assert out[6] is None                                     # 7 ranks, 6 in the grid
    assert out[4] == ([1, 1], (1, -1), (3, 5), 4, 3, 12, [2, 3])  # PROC_NULL -1
    # rank 4 = (1,1): dim 0 non-periodic: source (0,1)=1, dest (2,1) -> PROC_NULL;
    # dim 1 periodic: source (1,0)=3, dest (1,2)=5; (1,4) wraps to (1,1) = 4; row 3+4+5 = 12
    assert out[0][0] == [0, 0] and out[0][1] == (-1, 3)


def test_compute_dims_feeds_create_cart():
    """The usual idiom: Create_cart(Compute_dims(size, 2))."""
    def main():
        comm = MPI.COMM_WORLD
        cart = comm.Create_cart(MPI.Compute_dims(comm.size, 2), periods=[True, True])
        return cart.dims

    assert run(main, P=12)[0] == [4, 3]


@pytest.mark.parametrize("second,pattern", [
    (lambda c: c.Barrier(), r"rank 0 called bcast\(root=0, nbytes=8\), rank 1 called barrier"),
    (lambda c: c.Bcast(bsim.Buffer(8), root=1), r"bcast\(root=0.*bcast\(root=1"),
    (lambda c: c.Bcast(bsim.Buffer(16), root=0), r"nbytes=8\).*nbytes=16\)"),
    (lambda c: c.Allreduce(bsim.Buffer(8), bsim.Buffer(8), op=MPI.MAX), r"op=SUM.*op=MAX"),
])
def test_collective_mismatch_names_ranks_and_calls(second, pattern):
    """Different collective, root, size or op at one position: CollectiveMismatchError."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            if "op=" in pattern:
                comm.Allreduce(bsim.Buffer(8), bsim.Buffer(8), op=MPI.SUM)
            else:
                comm.Bcast(bsim.Buffer(8), root=0)
        else:
            second(comm)

    with pytest.raises(bsim.CollectiveMismatchError, match=pattern):
        bsim.simulate(main, ranks=2, network=NET)


def test_missing_collective_participant_is_a_deadlock():
    """A rank that never joins the barrier shows up in the deadlock report."""
    def main():
        if MPI.COMM_WORLD.rank != 2:
            MPI.COMM_WORLD.Barrier()

    with pytest.raises(bsim.DeadlockError, match="rank 0: barrier") as info:
        bsim.simulate(main, ranks=3, network=NET)
    assert [b[0] for b in info.value.blocked] == [0, 1]


def test_invalid_root_is_reported():
    """A root outside the communicator names the call and the valid range."""
    with pytest.raises(bsim.MPIUsageError, match=r"rank 0: bcast\(root=5\): invalid root"):
        bsim.simulate(lambda: MPI.COMM_WORLD.bcast(1, root=5), ranks=2, network=NET)


def test_neighbor_collectives_on_a_periodic_ring_and_an_open_grid():
    """Neighbors are (-d, +d) per dimension; PROC_NULL past open edges gives None / no data.

    3 x 2 grid, dim 0 open, dim 1 periodic (size 2: both neighbors are the same rank, told
    apart by direction).  Rank (1, 0) = 2: dim 0 neighbors 0 and 4, dim 1 neighbors 3 and 3.
    """
    import numpy as np

    def main():
        cart = MPI.COMM_WORLD.Create_cart([3, 2], periods=[False, True])
        me = cart.rank
        got = cart.neighbor_allgather(me)
        a2a = cart.neighbor_alltoall([(me, k) for k in range(4)])
        recv = np.full(4, -1, "i4")
        cart.Neighbor_alltoall(np.array([10 * me + k for k in range(4)], "i4"), recv)
        return got, a2a, recv.tolist()

    out = run(main, P=6)
    got, a2a, recv = out[2]
    assert got == [0, 4, 3, 3]
    # from neighbor k this rank receives what that neighbor sent in the opposite direction
    assert a2a == [(0, 1), (4, 0), (3, 3), (3, 2)]
    assert recv == [10 * 0 + 1, 10 * 4 + 0, 10 * 3 + 3, 10 * 3 + 2]
    got0, _, recv0 = out[0]               # rank (0, 0): no -dim0 neighbor
    assert got0 == [None, 2, 1, 1] and recv0[0] == -1
