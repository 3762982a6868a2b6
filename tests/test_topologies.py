"""Graph and distributed-graph topologies and the neighbourhood collectives on every
topology (``bsim/mpi/topologies/``).

The same programs run under real ``mpiexec`` (MPICH) and under bsim and must return the
same values; the timing of one neighbourhood collective is checked against a hand
derivation.
"""

from __future__ import annotations

import pytest
from conftest import needs_mpiexec, real_mpi_returns

import bsim
from bsim import MPI

NET = "hockney:latency=2e-6,bandwidth=1e9"   # a 1000-byte message costs 3 us

INQUIRIES = '''
import json
from mpi4py import MPI


def main():
    world = MPI.COMM_WORLD
    size, rank = world.Get_size(), world.Get_rank()
    out = {}
    # a ring as a graph, in the 'standard' adjacency form with a leading 0
    index, edges = [0], []
    for i in range(size):
        index.append(index[-1] + 2)
        edges += [(i - 1) % size, (i + 1) % size]
    g = world.Create_graph(index, edges)
    out["graph"] = [g.Get_topology() == MPI.GRAPH, g.dims, g.topo, g.nnodes, g.nedges,
                    g.neighbors, g.nneighbors, g.Get_neighbors(0), g.degrees, g.inoutedges,
                    g.is_topo]
    gd = g.Dup()
    out["graph_dup"] = [type(gd).__name__, gd.topo]
    gd.Free()
    g.Free()
    # a path over all ranks but the last: that rank gets COMM_NULL and UNDEFINED
    n = size - 1
    path_index, path_edges, acc = [], [], 0
    for i in range(n):
        nb = [j for j in (i - 1, i + 1) if 0 <= j < n]
        path_edges += nb
        acc += len(nb)
        path_index.append(acc)
    p = world.Create_graph(path_index, path_edges)
    out["path"] = [p == MPI.COMM_NULL, world.Graph_map(path_index, path_edges) == MPI.UNDEFINED,
                   None if p == MPI.COMM_NULL else p.neighbors]
    if p != MPI.COMM_NULL:
        p.Free()
    out["cart_map"] = [world.Cart_map([size - 1]) == MPI.UNDEFINED, world.Cart_map([size])]
    # distributed graphs
    src, dst = [(rank - 1) % size, (rank + 2) % size], [(rank + 1) % size]
    d = world.Create_dist_graph_adjacent(src, dst, [7, 8], [9])
    out["adjacent"] = [d.Get_topology() == MPI.DIST_GRAPH, d.Get_dist_neighbors_count(),
                       d.Get_dist_neighbors(), d.indegree, d.outdegree, d.inedges,
                       d.outedges]
    d.Free()
    u = world.Create_dist_graph_adjacent(src, None, MPI.UNWEIGHTED, None)
    out["unweighted"] = [u.Get_dist_neighbors_count(), u.Get_dist_neighbors()]
    u.Free()
    e = world.Create_dist_graph_adjacent([], [], MPI.WEIGHTS_EMPTY, MPI.WEIGHTS_EMPTY)
    out["empty"] = [e.Get_dist_neighbors_count(), e.Get_dist_neighbors()]
    e.Free()
    # each rank names two edges leaving it; MPI leaves the neighbour order open: sort
    c = world.Create_dist_graph([rank], [2], [(rank + 1) % size, (rank + 3) % size],
                                [rank + 1, 10 * rank + 1])
    ins, outs, (iw, ow) = c.Get_dist_neighbors()
    out["general"] = [c.Get_dist_neighbors_count(), sorted(zip(ins, iw)), sorted(zip(outs, ow))]
    c.Free()
    try:
        world.Create_dist_graph_adjacent([0], [0], MPI.WEIGHTS_EMPTY, MPI.WEIGHTS_EMPTY)
    except ValueError:
        out["weights_empty_error"] = True
    try:
        MPI.Graphcomm(world.Create_cart([size]))
    except TypeError:
        out["constructor_error"] = True
    return json.loads(json.dumps(out))
'''

EXCHANGES = '''
import json
import numpy as np
from mpi4py import MPI


def comms(world):
    size, rank = world.Get_size(), world.Get_rank()
    yield "cart_open", world.Create_cart([size], periods=[False])
    yield "cart_2d", world.Create_cart(MPI.Compute_dims(size, 2), periods=[True, False])
    index, edges = [], []
    for i in range(size):
        edges += [(i + 1) % size, (i - 1) % size, i]
        index.append(len(edges))
    yield "graph", world.Create_graph(index, edges)
    yield "dist", world.Create_dist_graph_adjacent(
        [(rank - 1) % size, (rank - 2) % size, (rank - 1) % size],
        [(rank + 1) % size, (rank + 1) % size, (rank + 2) % size])


def main():
    world = MPI.COMM_WORLD
    rank = world.Get_rank()
    out = {}
    for name, comm in comms(world):
        nin, nout = comm.indegree, comm.outdegree
        res = {"degrees": [nin, nout]}
        res["allgather_obj"] = comm.neighbor_allgather({"from": rank})
        res["alltoall_obj"] = comm.neighbor_alltoall([(rank, k) for k in range(nout)])
        r = np.full(2 * nin, -1, "i4")
        comm.Neighbor_allgather(np.array([rank, -rank], "i4"), r)
        res["allgather"] = r.tolist()
        r = np.full(nin, -1, "f8")
        comm.Neighbor_alltoall(np.arange(nout, dtype="f8") + 100 * rank, r)
        res["alltoall"] = r.tolist()
        # v forms: out-neighbour k gets k + 1 elements; in-neighbour k sends as many as
        # its own position of this rank in its out-list says: the receive counts come
        # from an alltoall of the counts first
        counts = comm.neighbor_alltoall([k + 1 for k in range(nout)])
        rcounts = [0 if c is None else c for c in counts]
        send = np.concatenate([np.full(k + 1, 10 * rank + k, "i8") for k in range(nout)]
                              or [np.zeros(0, "i8")])
        recv = np.full(sum(rcounts) + 1, -1, "i8")
        rdispls = list(np.cumsum([0] + rcounts[:-1])) if rcounts else []
        comm.Neighbor_alltoallv([send, [k + 1 for k in range(nout)]], [recv, (rcounts,
                                rdispls)])
        res["alltoallv"] = recv.tolist()
        recv = np.full(3 * nin, -1, "i2")
        comm.Ineighbor_allgatherv(np.full(3, rank, "i2"), [recv, [3] * nin]).Wait()
        res["iallgatherv"] = recv.tolist()
        # w form: int32 blocks to even positions, float64 to odd ones (byte displacements)
        types = [MPI.INT if k % 2 == 0 else MPI.DOUBLE for k in range(nout)]
        sbuf = bytearray(8 * max(nout, 1))
        for k, t in enumerate(types):
            np.frombuffer(sbuf, "i4" if t == MPI.INT else "f8", 1, 8 * k)[0] = rank + k
        rbuf = bytearray(b"\\xff" * 8 * max(nin, 1))
        peer_types = comm.neighbor_alltoall([t == MPI.INT for t in types])
        rtypes = [MPI.INT if (t is None or t) else MPI.DOUBLE for t in peer_types]
        rcounts_w = [0 if t is None else 1 for t in peer_types]
        comm.Neighbor_alltoallw([sbuf, ([1] * nout, [8 * k for k in range(nout)]), types],
                                [rbuf, ([*rcounts_w], [8 * k for k in range(nin)]), rtypes])
        res["alltoallw"] = [None if t is None else
                            float(np.frombuffer(rbuf, "i4" if t else "f8", 1, 8 * k)[0])
                            for k, t in enumerate(peer_types)]
        # persistent: started three times, the send buffer changed between starts
        sbuf = np.zeros(nout, "i4")
        rbuf = np.full(nin, -1, "i4")
        req = comm.Neighbor_alltoall_init(sbuf, rbuf)
        seen = []
        for step in range(3):
            sbuf[:] = 1000 * step + rank
            req.Start()
            req.Wait()
            seen.append(rbuf.tolist())
        req.Free()
        res["persistent"] = seen
        out[name] = res
        comm.Free()
    return json.loads(json.dumps(out))
'''


def _simulate(code: str, ranks: int) -> list:
    namespace: dict = {}
    exec(compile(code, "<program>", "exec"), namespace)
    return bsim.simulate(namespace["main"], ranks, network=NET, protocol="bsim").returns


@needs_mpiexec
@pytest.mark.parametrize("ranks", [3, 4])
def test_topology_inquiries_match_real_mpi(ranks):
    """Graph and distributed-graph creation and inquiries return what MPICH returns."""
    assert _simulate(INQUIRIES, ranks) == real_mpi_returns(ranks, INQUIRIES)


@needs_mpiexec
@pytest.mark.parametrize("ranks", [2, 4])
def test_neighbour_collectives_match_real_mpi(ranks):
    """Every form on open and periodic grids, a graph with repeated and self edges and a
    distributed graph: the received blocks are MPICH's (PROC_NULL blocks untouched)."""
    assert _simulate(EXCHANGES, ranks) == real_mpi_returns(ranks, EXCHANGES)


def test_inquiries_by_hand():
    """A 3-ring graph: rank 1's neighbours are 0 and 2; the last rank of a 2-node graph
    gets COMM_NULL."""
    out = _simulate(INQUIRIES, 3)
    assert out[1]["graph"][5] == [0, 2]
    assert out[2]["path"][:2] == [True, True]
    assert out[0]["adjacent"][2] == [[2, 2], [1], [[7, 8], [9]]]


def _ring_alltoall(nonblocking: bool, late: float):
    import numpy as np

    def main():
        cart = MPI.COMM_WORLD.Create_cart([3], periods=[True])
        t0 = MPI.Wtime()
        if cart.rank == 0:
            bsim.add_time(late)
        send, recv = np.zeros(2 * 250, "i4"), np.zeros(2 * 250, "i4")   # 1000 bytes each way
        if nonblocking:
            cart.Ineighbor_alltoall(send, recv).Wait()
        else:
            cart.Neighbor_alltoall(send, recv)
        return MPI.Wtime() - t0

    return bsim.simulate(main, 3, network=NET, protocol="bsim")


@pytest.mark.parametrize("nonblocking", [False, True])
def test_neighbour_alltoall_timing_by_hand(nonblocking):
    """A periodic 3-ring, 1000 bytes to each of 2 neighbours, l = 2 us, w = 1 GB/s: each
    message costs l + s/w = 3 us and a rank handles its two receives one after the other
    in order of sending (the Waitall rule).  All start together: 2 x 3 = 6 us each.
    Rank 0 computes 10 us first: ranks 1 and 2 take their other neighbour's message
    (0 -> 3 us) then rank 0's (max(3, 10) + 3 = 13 us, 7 us of it waiting); rank 0 finds
    both messages sent at 0: 10 + 3 + 3 = 16 us."""
    res = _ring_alltoall(nonblocking, 0.0)
    assert res.returns == pytest.approx([6e-6] * 3, abs=1e-12)
    res = _ring_alltoall(nonblocking, 10e-6)
    assert res.returns == pytest.approx([16e-6, 13e-6, 13e-6], abs=1e-12)
    assert list(res.wait[1:]) == pytest.approx([7e-6, 7e-6], abs=1e-12)


def test_bad_neighbour_calls_name_the_rank_and_call():
    """Wrong object counts, IN_PLACE and a short receive block are usage errors."""
    import numpy as np

    def count():
        MPI.COMM_WORLD.Create_cart([2], periods=[True]).neighbor_alltoall([1])

    with pytest.raises(bsim.MPIUsageError, match=r"rank 0: neighbor_alltoall: pass 2 objects"):
        bsim.simulate(count, 2, network=NET, protocol="bsim")

    def in_place():
        c = MPI.COMM_WORLD.Create_cart([2], periods=[True])
        c.Neighbor_allgather(MPI.IN_PLACE, np.zeros(2, "i4"))

    with pytest.raises(bsim.MPIUsageError, match="Neighbor_allgather: MPI.IN_PLACE"):
        bsim.simulate(in_place, 2, network=NET, protocol="bsim")

    def short():
        c = MPI.COMM_WORLD.Create_cart([2], periods=[True])
        c.Neighbor_allgatherv(np.zeros(4, "i4"), [np.zeros(4, "i4"), [2, 2]])

    with pytest.raises(bsim.MPIUsageError, match="message truncated"):
        bsim.simulate(short, 2, network=NET, protocol="bsim")

    def bad_graph():
        MPI.COMM_WORLD.Create_graph([1, 2], [1, 5])

    with pytest.raises(bsim.MPIUsageError, match=r"rank 0: Create_graph: edges name nodes"):
        bsim.simulate(bad_graph, 2, network=NET, protocol="bsim")
