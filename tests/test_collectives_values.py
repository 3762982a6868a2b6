"""Collective results equal a numpy/Python reference, on several communicators."""

from __future__ import annotations

from functools import reduce

import numpy as np
import pytest

import bsim
from bsim import MPI

NET = "hockney:latency=1e-6,bandwidth=1e9"
COMMS = ["WORLD", "DUP", "SPLIT"]


def pick(which):
    """The communicator under test: WORLD, a Dup of it, or the even/odd half (Split)."""
    world = MPI.COMM_WORLD
    if which == "WORLD":
        return world
    if which == "DUP":
        return world.Dup()
    return world.Split(world.rank % 2, world.rank)


def run(main, P=6, **kw):
    kw.setdefault("protocol", "bsim")
    return bsim.simulate(main, ranks=P, network=NET, **kw).returns


def data(rank):
    """Each rank's input vector: distinct, integer-valued, with negatives."""
    return np.array([rank + 1, -rank, 3 * rank - 2, rank % 3], dtype="i8")


OPS = [("SUM", np.add), ("PROD", np.multiply), ("MAX", np.maximum), ("MIN", np.minimum),
       ("LAND", np.logical_and), ("LOR", np.logical_or), ("LXOR", np.logical_xor),
       ("BAND", np.bitwise_and), ("BOR", np.bitwise_or), ("BXOR", np.bitwise_xor)]


@pytest.mark.parametrize("which", COMMS)
@pytest.mark.parametrize("name,ref", OPS)
def test_uppercase_allreduce_every_op_matches_numpy(which, name, ref):
    """Allreduce with each predefined op equals numpy's reduction over the members."""
    def main():
        comm = pick(which)
        members = comm.Get_group().Translate_ranks(None)
        out = np.zeros(4, dtype="i8")
        comm.Allreduce(data(MPI.COMM_WORLD.rank), out, op=getattr(MPI, name))
        expected = reduce(ref, [data(w) for w in members]).astype("i8")
        return out.tolist() == expected.tolist()

    assert all(run(main))


@pytest.mark.parametrize("which", COMMS)
@pytest.mark.parametrize("name,ref", OPS[:4])
def test_lowercase_reduce_scan_exscan(which, name, ref):
    """reduce/scan/exscan on Python ints follow the rank-order fold."""
    def main():
        comm = pick(which)
        me, size = comm.rank, comm.size
        vals = [w * 7 % 5 - 2 for w in comm.Get_group().Translate_ranks(None)]
        op = getattr(MPI, name)
        got = (comm.reduce(vals[me], op=op, root=size - 1), comm.scan(vals[me], op=op),
               comm.exscan(vals[me], op=op), comm.allreduce(vals[me], op=op))
        want = (int(reduce(ref, vals)) if me == size - 1 else None,
                int(reduce(ref, vals[:me + 1])),
                int(reduce(ref, vals[:me])) if me else None,
                int(reduce(ref, vals)))
        return got == want

    assert all(run(main))


def test_maxloc_minloc_and_user_op():
    """MAXLOC/MINLOC break ties by the lower index; Op.Create and a lambda work."""
    def main():
        comm = MPI.COMM_WORLD
        r = comm.rank
        value = [5, 9, 9, 1][r]
        concat = MPI.Op.Create(lambda a, b: a + b, commute=False)
        return (comm.allreduce((value, r), op=MPI.MAXLOC), comm.allreduce((value, r),
                op=MPI.MINLOC), comm.allreduce([r], op=concat),
                comm.allreduce(r + 1, op=lambda a, b: a * b))

    assert run(main, P=4) == [((9, 1), (1, 3), [0, 1, 2, 3], 24)] * 4


@pytest.mark.parametrize("which", COMMS)
def test_lowercase_data_movers(which):
    """bcast, gather, scatter, allgather, alltoall on Python objects."""
    def main():
        comm = pick(which)
        me, size = comm.rank, comm.size
        root = size - 1
        return (me, size,
                comm.bcast({"k": me} if me == root else None, root=root),
                comm.gather(me * 10, root=0),
                comm.scatter([f"s{i}" for i in range(size)] if me == root else None, root=root),
                comm.allgather(me),
                comm.alltoall([(me, j) for j in range(size)]))

    out = run(main)
    assert sorted(len(o[5]) for o in out) == {"WORLD": [6] * 6, "DUP": [6] * 6,
                                              "SPLIT": [3] * 6}[which]
    for me, size, bc, ga, sc, ag, aa in out:
        assert bc == {"k": size - 1}
        assert ag == list(range(size))
        assert aa == [(j, me) for j in range(size)]     # rank j's item for me
        assert ga == ([10 * i for i in range(size)] if me == 0 else None)
        assert sc == f"s{me}"


@pytest.mark.parametrize("which", COMMS)
def test_uppercase_data_movers(which):
    """Bcast, Gather(v), Scatter(v), Allgather(v), Alltoall(v) move the right blocks."""
    def main():
        comm = pick(which)
        me, n = comm.rank, comm.size
        buf = np.arange(3, dtype="f8") if me == 0 else np.zeros(3)
        comm.Bcast(buf, root=0)
        g = np.zeros(2 * n, dtype="i4") if me == 0 else None
        comm.Gather(np.array([me, me], "i4"), g, root=0)
        sc = np.zeros(2, "i4")
        comm.Scatter(np.arange(2 * n, dtype="i4") if me == 0 else None, sc, root=0)
        ag = np.zeros(n, "i8")
        comm.Allgather(np.array([me * me], "i8"), ag)
        aa = np.zeros(n, "i4")
        comm.Alltoall(np.array([me * 100 + j for j in range(n)], "i4"), aa)
        counts = [i + 1 for i in range(n)]
        gv = np.zeros(sum(counts), "i4") if me == 0 else None
        comm.Gatherv(np.full(me + 1, me, "i4"), [gv, counts, MPI.INT] if me == 0 else None,
                     root=0)
        agv = np.zeros(sum(counts), "i4")
        comm.Allgatherv(np.full(me + 1, me, "i4"), [agv, counts, MPI.INT])
        return (buf.tolist(), None if g is None else g.tolist(), sc.tolist(), ag.tolist(),
                aa.tolist(), None if gv is None else gv.tolist(), agv.tolist(), me, n)

    for b, g, sc, ag, aa, gv, agv, me, n in run(main):
        assert b == [0.0, 1.0, 2.0]
        if me == 0:
            assert g == [i for i in range(n) for _ in range(2)]
            assert gv == [i for i in range(n) for _ in range(i + 1)]
        assert sc == [2 * me, 2 * me + 1]
        assert ag == [i * i for i in range(n)]
        assert aa == [j * 100 + me for j in range(n)]
        assert agv == [i for i in range(n) for _ in range(i + 1)]


def test_reduce_scatter_and_in_place():
    """Reduce_scatter(_block) keep block `rank` of the sum; IN_PLACE reuses recvbuf."""
    def main():
        comm = MPI.COMM_WORLD
        me, n = comm.rank, comm.size
        send = np.arange(2 * n, dtype="i8") * (me + 1)
        blk = np.zeros(2, "i8")
        comm.Reduce_scatter_block(send, blk, op=MPI.SUM)
        rs = np.zeros(1, "i8")
        comm.Reduce_scatter(np.arange(n, dtype="i8"), rs, recvcounts=[1] * n)
        inplace = np.full(2, me, "i8")
        comm.Allreduce(MPI.IN_PLACE, inplace, op=MPI.SUM)
        return blk.tolist(), rs.tolist(), inplace.tolist()

    total = sum(range(1, 5))   # sum of (me + 1) for 4 ranks
    for me, (blk, rs, ip) in enumerate(run(main, P=4)):
        assert blk == [2 * me * total, (2 * me + 1) * total]
        assert rs == [4 * me]
        assert ip == [6, 6]


def test_placeholders_move_sizes_only():
    """Placeholder buffers: collectives run and charge the time of their sizes.

    Hockney l = 1 us, w = 1 GB/s, P = 4, everyone arrives at 0 (all-to-all rule: + T).
    Allreduce of 1 MiB: MPICH's choice above 2 KiB is Rabenseifner (docs/collectives.md):
    halving n/2, n/4 then doubling n/4, n/2 = 4 l + 1.5 n / w.  Alltoall of
    [None, 4096, DOUBLE]: as in mpi4py the count is per destination (32 KiB to each of the
    other 3 ranks); P < 8: pairwise, 3 (l + 32768 / w).
    """
    def main():
        comm = MPI.COMM_WORLD
        comm.Allreduce(bsim.Buffer(1 << 20), bsim.Buffer(1 << 20))
        t1 = MPI.Wtime()
        comm.Alltoall([None, 4096, MPI.DOUBLE], [None, 4096, MPI.DOUBLE])
        return t1, MPI.Wtime()

    t_allreduce = 4 * 1e-6 + 1.5 * (1 << 20) / 1e9
    t_alltoall = 3 * (1e-6 + 4096 * 8 / 1e9)
    for t1, t2 in run(main, P=4):
        assert t1 == pytest.approx(t_allreduce, rel=1e-12)
        assert t2 == pytest.approx(t_allreduce + t_alltoall, rel=1e-12)


def test_collective_and_point_to_point_never_match():
    """A message on WORLD is not consumed by a collective, nor a Dup's message by WORLD."""
    def main():
        comm = MPI.COMM_WORLD
        dup = comm.Dup()
        if comm.rank == 0:
            dup.send("on dup", dest=1, tag=0)
            comm.send("on world", dest=1, tag=0)
        comm.Barrier()
        if comm.rank == 1:
            return comm.recv(source=0, tag=0), dup.recv(source=0, tag=0)

    assert run(main, P=2)[1] == ("on world", "on dup")


@pytest.mark.parametrize("spec", [lambda n: bsim.Buffer(4 * n, MPI.DOUBLE),
                                  lambda n: [None, 4, MPI.DOUBLE]])
def test_placeholder_vector_specs_cost_like_their_size(spec):
    """Allgather/Alltoall/Gather(IN_PLACE) with placeholders: same time as 32 B blocks."""
    def main(recv):
        comm = MPI.COMM_WORLD
        n = comm.size
        comm.Allgather(bsim.Buffer(4, MPI.DOUBLE), recv(n))
        comm.Alltoall(recv(n), recv(n))
        comm.Gather(MPI.IN_PLACE if comm.rank == 0 else bsim.Buffer(32), recv(n), root=0)
        return MPI.Wtime()

    real = lambda n: np.zeros(4 * n)   # noqa: E731 - the same sizes with real buffers
    placeholder = bsim.simulate(main, ranks=4, network=NET, args=(spec,), protocol="bsim").returns
    actual = bsim.simulate(main, ranks=4, network=NET, args=(real,), protocol="bsim").returns
    assert placeholder == actual and placeholder[0] > 0


def test_alltoallw_moves_typed_blocks_at_byte_displacements():
    """Alltoallw: rank r sends r+1 int32s to every rank from byte offset 16*j; the receiver
    places rank j's block (j+1 int32s) at byte offset 16*j and leaves the rest untouched."""
    def main():
        comm = MPI.COMM_WORLD
        me, n = comm.rank, comm.size
        send = np.full(4 * n, -1, "i4")
        for j in range(n):
            send[4 * j:4 * j + me + 1] = 100 * me + j
        recv = np.full(4 * n, -1, "i4")
        comm.Alltoallw([send, [me + 1] * n, [16 * j for j in range(n)], [MPI.INT] * n],
                       [recv, [j + 1 for j in range(n)], [16 * j for j in range(n)],
                        [MPI.INT] * n])
        return recv.tolist()

    out = run(main, P=3)
    for me, recv in enumerate(out):
        for j in range(3):
            block = recv[4 * j:4 * j + 4]
            assert block[:j + 1] == [100 * j + me] * (j + 1)
            assert block[j + 1:] == [-1] * (3 - j)


# -- send and receive sizes must match (MPI's type-signature rule) -----------------------

SIZE_MISMATCHES = {
    # Allgather of 1000 doubles into 4 x 1: was accepted and charged as one double each
    "Allgather": (lambda c: c.Allgather(np.zeros(1000), np.zeros(4)),
                  r"Allgather: this rank sends 8000 bytes but its receive block holds 8 bytes"),
    "Gather": (lambda c: c.Gather(np.zeros(3), np.zeros(8) if c.rank == 0 else None, root=0),
               r"rank 0: Gather: this rank sends 24 bytes but its receive block holds 16"),
    "Scatter": (lambda c: c.Scatter(np.zeros(8) if c.rank == 0 else None, np.zeros(3), root=0),
                r"Scatter: rank 0 sends 16 bytes but its receive block holds 24 bytes"),
    "Alltoall": (lambda c: c.Alltoall(np.zeros(8), np.zeros(12)),
                 r"Alltoall: this rank sends 16 bytes but its receive block holds 24 bytes"),
    # rank 3 sends 2 doubles and expects 2 from itself, where the others' block 3 holds 4:
    # member 0 finds it (each rank checks its own block, member 0 every block)
    "Allgatherv": (lambda c: c.Allgatherv(np.zeros(2 if c.rank == 3 else c.rank + 1),
                                          [np.zeros(8), [1, 2, 3, 2]] if c.rank == 3
                                          else [np.zeros(10), [1, 2, 3, 4]]),
                   r"rank 0: Allgatherv: rank 3 sends 16 bytes but its receive block holds "
                   r"32 bytes"),
    # the same rank's own block disagrees with what it sends: found where it is sent
    "Allgatherv_own": (lambda c: c.Allgatherv(np.zeros(2 if c.rank == 3 else c.rank + 1),
                                              [np.zeros(10), [1, 2, 3, 4]]),
                       r"rank 3: Allgatherv: this rank sends 16 bytes but its receive block "
                       r"holds 32 bytes"),
    "Gatherv": (lambda c: c.Gatherv(np.zeros(2 if c.rank == 3 else c.rank + 1),
                                    [np.zeros(10), [1, 2, 3, 4]] if c.rank == 0 else None),
                r"rank 0: Gatherv: rank 3 sends 16 bytes but its receive block holds 32"),
    "Scatterv": (lambda c: c.Scatterv([np.zeros(10), [1, 2, 3, 4]] if c.rank == 0 else None,
                                      np.zeros(1)),
                 r"Scatterv: rank 0 sends (16|24|32) bytes but its receive block holds 8"),
}


@pytest.mark.parametrize("call", sorted(SIZE_MISMATCHES))
def test_a_block_that_does_not_fit_its_receive_block_is_an_error(call):
    """MPI requires the bytes a rank sends to match the receive block they land in: each
    form names the sizes (they were accepted and charged as the receive side's size)."""
    body, message = SIZE_MISMATCHES[call]

    def main():
        body(MPI.COMM_WORLD)
    with pytest.raises(bsim.errors.MPIUsageError, match=message):
        bsim.simulate(main, ranks=4, network=NET, protocol="bsim")


@pytest.mark.parametrize("call", sorted(SIZE_MISMATCHES))
def test_matching_blocks_of_the_same_calls_run(call):
    """The same calls with sizes that match run (so the check above is about the sizes)."""
    fixed = {
        "Allgather": lambda c: c.Allgather(np.zeros(1), np.zeros(4)),
        "Gather": lambda c: c.Gather(np.zeros(2), np.zeros(8) if c.rank == 0 else None),
        "Scatter": lambda c: c.Scatter(np.zeros(8) if c.rank == 0 else None, np.zeros(2)),
        "Alltoall": lambda c: c.Alltoall(np.zeros(8), np.zeros(8)),
        "Allgatherv": lambda c: c.Allgatherv(np.zeros(c.rank + 1), [np.zeros(10), [1, 2, 3, 4]]),
        "Allgatherv_own": lambda c: c.Allgatherv(np.zeros(c.rank + 1),
                                                 [np.zeros(10), [1, 2, 3, 4]]),
        "Gatherv": lambda c: c.Gatherv(np.zeros(c.rank + 1),
                                       [np.zeros(10), [1, 2, 3, 4]] if c.rank == 0 else None),
        "Scatterv": lambda c: c.Scatterv([np.zeros(10), [1, 2, 3, 4]] if c.rank == 0 else None,
                                         np.zeros(c.rank + 1)),
    }[call]

    def main():
        fixed(MPI.COMM_WORLD)
    bsim.simulate(main, ranks=4, network=NET, protocol="bsim")


def test_minloc_and_maxloc_on_pair_datatypes_reduce_value_and_index():
    """MPI 4.0 Sec. 6.9.4: MINLOC/MAXLOC on (value, index) pairs give the best value and,
    on a tie, the smallest index.  Rank r holds the pairs ((r*7) % 5, r) and (1.5, 3 - r)
    as DOUBLE_INT (an aligned numpy record, 16 bytes an element) and ((r*3) % 4, r) as
    TWOINT.  Values 0, 2, 4, 1 -> min 0 at rank 0, max 4 at rank 2; the 1.5's all tie ->
    index min(3 - r) = 0; (r*3) % 4 = 0, 3, 2, 1 -> max 3 at rank 1.  The buffer forms
    raised 'too many values to unpack' (only the lowercase tuple form worked)."""
    from bsim import MPI
    rec = np.dtype([("v", "f8"), ("i", "i4")], align=True)

    def main():
        comm = MPI.COMM_WORLD
        r = comm.rank
        a = np.array([((r * 7) % 5, r), (1.5, 3 - r)], dtype=rec)
        lo, hi = np.zeros(2, dtype=rec), np.zeros(2, dtype=rec)
        comm.Allreduce([a, MPI.DOUBLE_INT], [lo, MPI.DOUBLE_INT], op=MPI.MINLOC)
        comm.Iallreduce([a, MPI.DOUBLE_INT], [hi, MPI.DOUBLE_INT], op=MPI.MAXLOC).Wait()
        two = np.zeros((1, 2), "i")
        comm.Reduce([np.array([[(r * 3) % 4, r]], "i"), MPI.TWOINT], [two, MPI.TWOINT],
                    op=MPI.MAXLOC, root=0)
        local = np.array([[1, 3]], "i")
        MPI.MINLOC.Reduce_local([np.array([[1, 5]], "i"), MPI.TWOINT], [local, MPI.TWOINT])
        return lo.tolist(), hi.tolist(), two.tolist(), local.tolist()

    res = bsim.simulate(main, ranks=4, protocol="bsim")
    lo, hi, two, local = res.returns[0]
    assert lo == [(0.0, 0), (1.5, 0)] and hi == [(4.0, 2), (1.5, 0)]
    assert two == [[3, 1]] and local == [[1, 3]]
