"""Send and receive sizes must match in the neighbourhood collectives and in the
collectives on an intercommunicator (``bsim/mpi/collectives/block_checks.py``).

MPI requires the data a rank sends to have the type signature of the receive block it
lands in.  These calls accepted any size: ``Neighbor_allgather`` of 1,000 doubles into
blocks of one double ran and was priced as if each rank had sent one double.  Each
call family has a case that must fail (``ERR_TRUNCATE``, a line naming the call and
both sizes) and, beside it, the same call with matching sizes, whose received values
are derived by hand here.
"""

from __future__ import annotations

import numpy as np
import pytest

import bsim
from bsim import MPI

NET = "hockney:latency=1e-6,bandwidth=1e9"
ERR_TRUNCATE = 14


def _fails(main, ranks, message):
    """*main* fails under bsim with ERR_TRUNCATE and a message matching *message*."""
    with pytest.raises(bsim.MPIUsageError, match=message) as info:
        bsim.simulate(main, ranks=ranks, network=NET, protocol="bsim")
    assert info.value.error_class == ERR_TRUNCATE


def _returns(main, ranks):
    return bsim.simulate(main, ranks=ranks, network=NET, protocol="bsim").returns


# -- neighbourhood collectives ---------------------------------------------------------
# A periodic ring of 4 (Create_cart([4], periods=[True])): receive block 0 comes from
# rank r - 1, block 1 from rank r + 1; send block 0 goes to r - 1, block 1 to r + 1.
# So in an alltoall rank r receives r - 1's block 1 and r + 1's block 0.

def ring():
    return MPI.COMM_WORLD.Create_cart([4], periods=[True])


def _neighbor_allgather(c, n_send, n_recv, mode):
    recv = np.full(2 * n_recv, -1.0)
    send = np.full(n_send, float(c.rank))
    if mode == "blocking":
        c.Neighbor_allgather(send, recv)
    elif mode == "nonblocking":
        c.Ineighbor_allgather(send, recv).Wait()
    else:   # persistent, started twice with new send data
        req = c.Neighbor_allgather_init(send, recv)
        for add in (0.0, 10.0):
            send[:] = c.rank + add
            req.Start()
            req.Wait()
        req.Free()
    return recv.tolist()


@pytest.mark.parametrize("mode, call", [("blocking", "Neighbor_allgather"),
                                        ("nonblocking", "Ineighbor_allgather"),
                                        ("persistent", "Neighbor_allgather_init")])
def test_neighbor_allgather_of_1000_doubles_into_blocks_of_one_fails(mode, call):
    """1,000 doubles (8,000 bytes) from each neighbour into blocks of 1 double: refused
    (it ran and was priced as 8 bytes a message)."""
    _fails(lambda: _neighbor_allgather(ring(), 1000, 1, mode), 4,
           rf"rank \d: {call}: rank \d sends 8000 bytes but its receive block holds "
           rf"8 bytes \(send and receive counts must match; message truncated\)")


@pytest.mark.parametrize("mode", ["blocking", "nonblocking", "persistent"])
def test_neighbor_allgather_with_matching_blocks_gives_the_neighbours_values(mode):
    """Each rank sends 2 copies of its rank (+10 at the persistent form's second start):
    block 0 holds r - 1's, block 1 r + 1's."""
    add = 10.0 if mode == "persistent" else 0.0
    out = _returns(lambda: _neighbor_allgather(ring(), 2, 2, mode), 4)
    for r in range(4):
        left, right = (r - 1) % 4 + add, (r + 1) % 4 + add
        assert out[r] == [left, left, right, right]


def test_a_neighbour_sending_less_than_its_block_fails():
    """Fewer bytes than the block (was accepted, priced as the smaller message)."""
    def main():
        c = ring()
        c.Neighbor_allgatherv(np.zeros(1), [np.zeros(4), [2, 2]])

    _fails(main, 4, r"Neighbor_allgatherv: rank \d sends 8 bytes but its receive block "
                    r"holds 16 bytes \(send and receive counts must match\)")


def test_neighbor_allgatherv_with_matching_blocks():
    """A distributed graph where rank r sends r + 1 ints of value 100 + r to rank r + 1:
    rank r's one receive block, at displacement 1, holds s + 1 copies of 100 + s
    (s = r - 1 mod 4); the rest of its buffer keeps -1."""
    def main():
        world = MPI.COMM_WORLD
        r = world.rank
        g = world.Create_dist_graph_adjacent([(r - 1) % 4], [(r + 1) % 4])
        src = (r - 1) % 4
        recv = np.full(5, -1, "i4")
        g.Neighbor_allgatherv(np.full(r + 1, 100 + r, "i4"), [recv, [src + 1], [1]])
        return recv.tolist()

    out = _returns(main, 4)
    for r in range(4):
        src = (r - 1) % 4
        assert out[r] == [-1] + [100 + src] * (src + 1) + [-1] * (3 - src)


def _neighbor_alltoall(c, n_send, n_recv):
    send = np.array([10 * c.rank + k for k in range(2) for _ in range(n_send)], "i4")
    recv = np.full(2 * n_recv, -1, "i4")
    c.Neighbor_alltoall(send, recv)
    return recv.tolist()


def test_neighbor_alltoall_blocks_that_differ_fail():
    _fails(lambda: _neighbor_alltoall(ring(), 1, 2), 4,
           r"rank \d: Neighbor_alltoall: rank \d sends 4 bytes but its receive block "
           r"holds 8 bytes")


def test_neighbor_alltoall_with_matching_blocks():
    """Rank r sends block k of 10r + k: it gets 10(r - 1) + 1 and 10(r + 1) + 0."""
    out = _returns(lambda: _neighbor_alltoall(ring(), 2, 2), 4)
    for r in range(4):
        a, b = 10 * ((r - 1) % 4) + 1, 10 * ((r + 1) % 4)
        assert out[r] == [a, a, b, b]


def _ineighbor_alltoallv(recvcounts):
    c = ring()
    r = c.rank
    send = np.array([10 * r, 10 * r + 1, 10 * r + 1], "d")   # 1 to r - 1, 2 to r + 1
    recv = np.full(3, -1.0)
    c.Ineighbor_alltoallv([send, [1, 2], [0, 1]], [recv, recvcounts, [0, recvcounts[0]]]).Wait()
    return recv.tolist()


def test_ineighbor_alltoallv_blocks_that_differ_fail():
    """r - 1 sends 2 doubles into a block of 1: refused at the Wait, naming the call."""
    _fails(lambda: _ineighbor_alltoallv([1, 2]), 4,
           r"rank \d: Ineighbor_alltoallv: rank \d sends 16 bytes but its receive block "
           r"holds 8 bytes")


def test_ineighbor_alltoallv_with_matching_blocks():
    """Block 0: r - 1's 2 doubles 10(r - 1) + 1; block 1: r + 1's one double 10(r + 1)."""
    out = _returns(lambda: _ineighbor_alltoallv([2, 1]), 4)
    for r in range(4):
        a, b = 10 * ((r - 1) % 4) + 1, 10 * ((r + 1) % 4)
        assert out[r] == [a, a, b]


def _neighbor_alltoallw(recvtype):
    c = ring()
    send = np.array([10 * c.rank, 10 * c.rank + 1], "i4")
    recv = np.full(2, -1, "i4" if recvtype is MPI.INT else "d")
    step = recv.itemsize
    c.Neighbor_alltoallw([send, [1, 1], [0, 4], [MPI.INT, MPI.INT]],
                         [recv, [1, 1], [0, step], [recvtype, recvtype]])
    return recv.tolist()


def test_neighbor_alltoallw_types_of_other_sizes_fail():
    """An INT (4 bytes) into a DOUBLE block (8 bytes)."""
    _fails(lambda: _neighbor_alltoallw(MPI.DOUBLE), 4,
           r"Neighbor_alltoallw: rank \d sends 4 bytes but its receive block holds 8 bytes")


def test_neighbor_alltoallw_with_matching_types():
    out = _returns(lambda: _neighbor_alltoallw(MPI.INT), 4)
    for r in range(4):
        assert out[r] == [10 * ((r - 1) % 4) + 1, 10 * ((r + 1) % 4)]


def test_a_rank_its_own_neighbour_is_named_this_rank():
    """A periodic ring of one: the rank is both its neighbours ("this rank sends")."""
    def bad():
        c = MPI.COMM_WORLD.Create_cart([1], periods=[True])
        c.Neighbor_allgather(np.zeros(3), np.zeros(2))

    _fails(bad, 1, r"rank 0: Neighbor_allgather: this rank sends 24 bytes but its "
                   r"receive block holds 8 bytes")

    def good():
        c = MPI.COMM_WORLD.Create_cart([1], periods=[True])
        recv = np.zeros(2)
        c.Neighbor_allgather(np.array([7.0]), recv)
        return recv.tolist()

    assert _returns(good, 1) == [[7.0, 7.0]]


# -- intercommunicator collectives -------------------------------------------------------
# 5 ranks: group A = world {0, 1} (local ranks 0, 1), group B = world {2, 3, 4}
# (local ranks 0, 1, 2).  Rooted calls: the root is A's rank 0 (MPI.ROOT there,
# MPI.PROC_NULL at A's rank 1, root=0 in B).

def inter():
    world = MPI.COMM_WORLD
    a = world.rank < 2
    local = world.Split(0 if a else 1, 0)
    ic = MPI.Intracomm.Create_intercomm(local, 0, world, 2 if a else 0)
    return ic, a


def _root(ic, a):
    if not a:
        return 0
    return MPI.ROOT if ic.rank == 0 else MPI.PROC_NULL


def _gather(recvcounts, nsend, call="Gatherv"):
    """B's local rank j sends nsend(j) ints 10 * (world rank) + i to A's rank 0."""
    ic, a = inter()
    world = MPI.COMM_WORLD.rank
    recv = send = spec = None
    if a and ic.rank == 0:
        recv = np.full(6, -1, "i4")
        spec = recv if recvcounts is None else [recv, recvcounts]
    if not a:
        send = np.array([10 * world + i for i in range(nsend(ic.rank))], "i4")
    req = getattr(ic, call)(send, spec, root=_root(ic, a))
    if call.startswith("I"):
        req.Wait()
    return None if recv is None else recv.tolist()


def test_inter_gather_sizes_that_differ_fail():
    _fails(lambda: _gather(None, lambda j: 3, "Gather"), 5,
           r"rank 0: Gather: rank 0 sends 12 bytes but its receive block holds 8 bytes")
    _fails(lambda: _gather([1, 2, 3], lambda j: 2, "Igatherv"), 5,
           r"rank 0: Igatherv: rank 0 sends 8 bytes but its receive block holds 4 bytes")


def test_inter_gather_with_matching_sizes():
    """Gather: 2 ints from each of B's ranks (world 2, 3, 4); Gatherv: j + 1 ints."""
    out = _returns(lambda: _gather(None, lambda j: 2, "Gather"), 5)
    assert out[0] == [20, 21, 30, 31, 40, 41]
    assert out[1:] == [None] * 4
    out = _returns(lambda: _gather([1, 2, 3], lambda j: j + 1, "Igatherv"), 5)
    assert out[0] == [20, 30, 31, 40, 41, 42]


def _scatter(counts, nrecv, call):
    """A's rank 0 scatters 0..5 to B (equal blocks, or *counts*); B's local rank j
    receives nrecv(j) ints."""
    ic, a = inter()
    if a:
        send = np.arange(6, dtype="i4") if ic.rank == 0 else None
        spec = None if send is None else (send if counts is None else [send, counts])
        getattr(ic, call)(spec, None, root=_root(ic, a))
        return None
    recv = np.full(nrecv(ic.rank), -1, "i4")
    getattr(ic, call)(None, recv, root=0)
    return recv.tolist()


def test_inter_scatter_sizes_that_differ_fail():
    """B's blocks hold 3 ints where the root sends 2: each receiver finds it."""
    _fails(lambda: _scatter(None, lambda j: 3, "Scatter"), 5,
           r"rank \d: Scatter: rank 0 sends 8 bytes but its receive block holds 12 bytes")
    _fails(lambda: _scatter([1, 2, 3], lambda j: 1, "Scatterv"), 5,
           r"rank \d: Scatterv: rank 0 sends (8|12) bytes but its receive block holds "
           r"4 bytes")


def test_inter_scatter_with_matching_sizes():
    out = _returns(lambda: _scatter(None, lambda j: 2, "Scatter"), 5)
    assert out == [None, None, [0, 1], [2, 3], [4, 5]]
    out = _returns(lambda: _scatter([1, 2, 3], lambda j: j + 1, "Scatterv"), 5)
    assert out == [None, None, [0], [1, 2], [3, 4, 5]]


def _allgather(vector, n_send, counts, call):
    """Each rank sends n_send(local rank) copies of its world rank; receives the other
    group's blocks: equal blocks of counts(group) elements, or counts(group) per block."""
    ic, a = inter()
    world = MPI.COMM_WORLD.rank
    send = np.full(n_send(ic.rank), world, "i8")
    c = counts(a)
    if vector:
        recv = np.full(sum(c), -1, "i8")
        spec = [recv, c]
    else:
        recv = spec = np.full(c * ic.remote_size, -1, "i8")
    req = getattr(ic, call)(send, spec)
    if call.endswith("_init"):
        req.Start()
    if call.startswith("I") or call.endswith("_init"):
        req.Wait()
    return recv.tolist()


def test_inter_allgather_sizes_that_differ_fail():
    """B expects 1 long from each A rank, which sends 2."""
    _fails(lambda: _allgather(False, lambda j: 2, lambda a: 1 if not a else 2, "Allgather"),
           5, r"rank \d: Allgather: rank \d sends 16 bytes but its receive block holds 8 bytes")
    _fails(lambda: _allgather(True, lambda j: j + 1, lambda a: [1, 2, 3] if a else [2, 1],
                              "Iallgatherv"),
           5, r"rank \d: Iallgatherv: rank 0 sends 8 bytes but its receive block holds "
              r"16 bytes")


def test_inter_allgather_with_matching_sizes():
    """A's ranks get B's world ranks 2, 3, 4; B's ranks get A's 0, 1."""
    out = _returns(lambda: _allgather(False, lambda j: 1, lambda a: 1, "Allgather"), 5)
    assert out == [[2, 3, 4]] * 2 + [[0, 1]] * 3
    out = _returns(lambda: _allgather(True, lambda j: j + 1,
                                      lambda a: [1, 2, 3] if a else [1, 2], "Allgatherv"), 5)
    assert out == [[2, 3, 3, 4, 4, 4]] * 2 + [[0, 1, 1]] * 3
    out = _returns(lambda: _allgather(False, lambda j: 1, lambda a: 1, "Allgather_init"), 5)
    assert out == [[2, 3, 4]] * 2 + [[0, 1]] * 3


def test_inter_allgather_of_placeholders_checks_and_prices_their_sizes():
    """A placeholder moves no bytes but its size travels: a mismatch is found, and the
    leaders' swap is priced on it.  Two ranks, one per group: one message each way of
    8,000 bytes, l + s/w = 1 us + 8 us = 9 us, as with real buffers (it was 1 us: the
    placeholder's swap was priced as 0 bytes)."""
    def bad():
        ic, _ = inter_of_two()
        ic.Allgather(bsim.buffer(2, MPI.DOUBLE), bsim.buffer(1, MPI.DOUBLE))

    _fails(bad, 2, r"Allgather: rank 0 sends 16 bytes but its receive block holds 8 bytes")

    def timed(placeholder):
        def main():
            ic, _ = inter_of_two()
            MPI.COMM_WORLD.Barrier()
            t0 = MPI.Wtime()
            if placeholder:
                ic.Allgather(bsim.buffer(1000, MPI.DOUBLE), bsim.buffer(1000, MPI.DOUBLE))
            else:
                ic.Allgather(np.zeros(1000), np.zeros(1000))
            return MPI.Wtime() - t0
        return main

    for placeholder in (False, True):
        assert _returns(timed(placeholder), 2) == pytest.approx([9e-6, 9e-6], abs=1e-12)


def inter_of_two():
    world = MPI.COMM_WORLD
    local = world.Split(world.rank, 0)
    return MPI.Intracomm.Create_intercomm(local, 0, world, 1 - world.rank), world.rank == 0


def _alltoall(call, n_send, n_recv):
    """Rank (world w, local i) sends to remote rank j a block of n_send(j) ints
    100 w + j and receives n_recv(i) ints from each remote rank."""
    ic, a = inter()
    world = MPI.COMM_WORLD.rank
    rs = ic.remote_size
    blocks = [[100 * world + j] * n_send(j) for j in range(rs)]
    send = np.array([x for b in blocks for x in b], "i4")
    recv = np.full(n_recv(ic.rank) * rs, -1, "i4")
    if call == "Alltoall":
        ic.Alltoall(send, recv)
    elif call == "Alltoallv":
        ic.Alltoallv([send, [n_send(j) for j in range(rs)]], [recv, [n_recv(ic.rank)] * rs])
    elif call == "Alltoallw":
        scounts = [n_send(j) for j in range(rs)]
        sdispl = [4 * sum(scounts[:j]) for j in range(rs)]
        k = n_recv(ic.rank)
        ic.Alltoallw([send, scounts, sdispl, [MPI.INT] * rs],
                     [recv, [k] * rs, [4 * k * j for j in range(rs)], [MPI.INT] * rs])
    else:   # Alltoall_init
        req = ic.Alltoall_init(send, recv)
        req.Start()
        req.Wait()
    return recv.tolist()


@pytest.mark.parametrize("call", ["Alltoall", "Alltoallv", "Alltoallw", "Alltoall_init"])
def test_inter_alltoall_sizes_that_differ_fail(call):
    """Every rank sends 2 ints to each remote rank, which expects 1."""
    _fails(lambda: _alltoall(call, lambda j: 2, lambda i: 1), 5,
           rf"rank \d: {call}: rank \d sends 8 bytes but its receive block holds 4 bytes")


@pytest.mark.parametrize("call", ["Alltoall", "Alltoallv", "Alltoallw", "Alltoall_init"])
def test_inter_alltoall_with_matching_sizes(call):
    """Local rank i gets, from remote rank j (world w_j), block i of it: 100 w_j + i.
    A's remote ranks are world 2, 3, 4; B's are world 0, 1.  The v and w forms send
    i + 1 ints to remote rank i."""
    vector = call in ("Alltoallv", "Alltoallw")
    n_send = (lambda j: j + 1) if vector else (lambda j: 1)
    out = _returns(lambda: _alltoall(call, n_send, n_send), 5)
    for w in range(5):
        i = w if w < 2 else w - 2
        remote = [2, 3, 4] if w < 2 else [0, 1]
        assert out[w] == [100 * x + i for x in remote for _ in range(n_send(i))]
