"""Intercommunicators: the same program under real mpiexec and under bsim gives the same
values (creation, point-to-point, every collective form, management), and the timing
rules of ``docs/collectives.md`` ("Intercommunicators") checked by hand."""

from __future__ import annotations

import json

import pytest
from conftest import LATENCY, needs_mpiexec, real_mpi_returns

import bsim
from bsim.errors import MPIUsageError, RankError

PROGRAM = '''
import numpy as np
from mpi4py import MPI


def rooted(ic, color, call, *args):
    """Run a rooted collective with root 0 of group 0; the receiving side's result."""
    if color == 0:
        return call(*args, root=MPI.ROOT if ic.rank == 0 else MPI.PROC_NULL)
    return call(*args, root=0)


def main():
    world = MPI.COMM_WORLD
    rank, size = world.rank, world.size
    color = 0 if rank < size // 2 else 1
    local = world.Split(color, 0)
    ic = MPI.Intracomm.Create_intercomm(local, 0, world, size // 2 if color == 0 else 0, 7)
    out = {"ids": [ic.Is_inter(), ic.is_intra, ic.rank, ic.size, ic.remote_size,
                   ic.Get_remote_group().size, ic.Get_group().size]}
    # point-to-point: ranks are those of the remote group; status gives the sender's
    st = MPI.Status()
    if ic.rank < ic.remote_size:
        req = ic.isend([rank, "x"], dest=ic.rank, tag=3)
        got = ic.recv(source=MPI.ANY_SOURCE, tag=3, status=st) if ic.rank < ic.remote_size \\
            else None
        req.wait()
        out["p2p"] = [got, st.source, st.tag]
    buf = np.zeros(3, "d")
    if ic.rank == 0:
        ic.Sendrecv(np.full(3, rank, "d"), 0, 4, buf, 0, 4)
    out["sendrecv"] = buf.tolist()
    # object collectives
    out["bcast"] = rooted(ic, color, ic.bcast, {"r": rank} if ic.rank == 0 else None)
    out["gather"] = rooted(ic, 1 - color, ic.gather, rank * 2)
    out["scatter"] = rooted(ic, color, ic.scatter,
                            [i * 3 for i in range(ic.remote_size)] if ic.rank == 0 else None)
    out["reduce"] = rooted(ic, 1 - color, ic.reduce, rank + 1, MPI.PROD)
    out["allgather"] = ic.allgather(rank)
    out["allreduce"] = ic.allreduce(rank, MPI.MAX)
    out["alltoall"] = ic.alltoall([(rank, j) for j in range(ic.remote_size)])
    ic.barrier()
    # buffer collectives
    b = np.full(4, rank if ic.rank == 0 and color == 0 else -1, "i")
    rooted(ic, color, ic.Bcast, b)
    out["Bcast"] = b.tolist()
    g = np.zeros(2 * ic.remote_size, "i") if color == 0 and ic.rank == 0 else None
    if color == 0:
        ic.Gather(None, g, root=MPI.ROOT if ic.rank == 0 else MPI.PROC_NULL)
    else:
        ic.Gather(np.array([rank, rank * 10], "i"), None, root=0)
    out["Gather"] = g.tolist() if g is not None else None
    r = np.zeros(2, "i")
    if color == 0:
        s = np.arange(2 * ic.remote_size, dtype="i") if ic.rank == 0 else None
        ic.Scatter(s, None, root=MPI.ROOT if ic.rank == 0 else MPI.PROC_NULL)
    else:
        ic.Scatter(None, r, root=0)
    out["Scatter"] = r.tolist()
    a = np.zeros(ic.remote_size, "l")
    ic.Allgather(np.array([rank], "l"), a)
    out["Allgather"] = a.tolist()
    s = np.zeros(2, "d")
    ic.Allreduce(np.array([rank, 1.0]), s, MPI.SUM)
    out["Allreduce"] = s.tolist()
    t = np.zeros(ic.remote_size, "i")
    ic.Alltoall(np.array([rank * 100 + j for j in range(ic.remote_size)], "i"), t)
    out["Alltoall"] = t.tolist()
    counts = [j + 1 for j in range(ic.remote_size)]
    v = np.zeros(sum(counts), "i")
    ic.Allgatherv(np.full(ic.rank + 1, rank, "i"), [v, counts])
    out["Allgatherv"] = v.tolist()
    if ic.size == ic.remote_size:   # MPICH: each group sends (local size) x recvcount
        rs = np.zeros(1, "i")
        ic.Reduce_scatter_block(np.arange(ic.size, dtype="i") + rank, rs, MPI.SUM)
        out["Reduce_scatter_block"] = rs.tolist()
    nb = np.zeros(2, "i")
    req = ic.Iallreduce(np.array([rank, 2], "i"), nb, MPI.MIN)
    req.Wait()
    out["Iallreduce"] = nb.tolist()
    # management
    merged = ic.Merge(high=(color == 0))
    out["merge"] = [merged.rank, merged.size, merged.allgather(rank)]
    dup = ic.Dup()
    out["compare"] = [MPI.Comm.Compare(ic, dup), MPI.Comm.Compare(ic, ic),
                      MPI.Comm.Compare(ic, world)]
    half = ic.Split(ic.rank % 2, -ic.rank)
    out["split"] = None if half == MPI.COMM_NULL else [half.rank, half.size, half.remote_size]
    try:
        ic.bcast(None, root=ic.remote_size)
    except MPI.Exception as exc:
        out["badroot"] = exc.Get_error_class() == MPI.ERR_ROOT
    try:
        MPI.Intracomm(ic)
    except TypeError:
        out["ctor"] = "TypeError"
    for c in (dup, merged, ic, local) + ((half,) if half != MPI.COMM_NULL else ()):
        c.Free()
    grp = world.Get_group()
    low = grp.Range_incl([(0, size // 2 - 1, 1)])
    high = grp.Range_incl([(size // 2, size - 1, 1)])
    mine, other = (low, high) if color == 0 else (high, low)
    fg = MPI.Intercomm.Create_from_groups(mine, 0, other, 0)
    out["from_groups"] = [fg.rank, fg.size, fg.remote_size, fg.allreduce(rank)]
    fg.Free()
    return out
'''


def _simulate(ranks: int, **kwargs: object) -> bsim.Result:
    namespace: dict = {}
    exec(compile(PROGRAM, "<program>", "exec"), namespace)
    return bsim.simulate(namespace["main"], ranks, **kwargs)  # type: ignore[arg-type]


def test_by_hand_at_two_ranks():
    zero, one = _simulate(2).returns
    assert zero["ids"] == [True, False, 0, 1, 1, 1, 1]
    assert zero["p2p"] == [[1, "x"], 0, 3] and one["p2p"] == [[0, "x"], 0, 3]
    assert one["bcast"] == {"r": 0} and zero["bcast"] is None
    assert zero["allgather"] == [1] and one["allreduce"] == 0
    assert zero["merge"] == [1, 2, [1, 0]] and one["merge"] == [0, 2, [1, 0]]
    assert zero["compare"] == [1, 0, 3] and zero["badroot"] and zero["ctor"] == "TypeError"
    assert zero["from_groups"] == [0, 1, 1, 1]


@needs_mpiexec
@pytest.mark.parametrize("ranks", [2, 3, 4])
def test_equal_real_mpi(ranks: int):
    sim = json.loads(json.dumps(_simulate(ranks).returns))   # tuples as JSON has them
    assert sim == real_mpi_returns(ranks, PROGRAM)


def test_timing_by_hand(hockney_spec: str):
    """Hockney l = 2 us, w = 1 GB/s; 4 ranks, groups {0, 1} and {2, 3}, analytic collectives.

    Rank 0 broadcasts 1000 bytes with ``root=ROOT``: its send is free under the bsim
    protocol; remote rank 0 (world 2) receives it at ``l + s/w = 3 us``, then the local
    bcast over 2 ranks costs ``T_bcast(2, 1000)``: world 2 and 3 end at ``3 us + T``.
    Rank 1 (``PROC_NULL``) pays nothing."""
    from bsim import MPI
    from bsim.engine.collective_costs import CollectiveCosts  # noqa: F401

    def main():
        world = MPI.COMM_WORLD
        color = world.rank // 2
        local = world.Split(color, 0)
        ic = MPI.Intracomm.Create_intercomm(local, 0, world, 2 if color == 0 else 0)
        world.Barrier()
        t0 = MPI.Wtime()
        buf = bsim.buffer(1000, MPI.BYTE)
        if color == 0:
            ic.Bcast(buf, root=MPI.ROOT if ic.rank == 0 else MPI.PROC_NULL)
        else:
            ic.Bcast(buf, root=0)
        t1 = MPI.Wtime() - t0
        local.Barrier()
        t2 = MPI.Wtime()
        local.Bcast(buf, root=0)
        return t1, MPI.Wtime() - t2

    out = bsim.simulate(main, 4, network=hockney_spec, protocol="bsim").returns
    bcast_cost = out[2][1]        # T_bcast(2, 1000) as the model prices it
    assert bcast_cost > 0
    assert out[0][0] == 0.0 and out[1][0] == 0.0
    assert out[2][0] == pytest.approx(LATENCY + 1000 / 1e9 + bcast_cost)
    assert out[3][0] == pytest.approx(LATENCY + 1000 / 1e9 + bcast_cost)


def test_bad_input_names_rank_and_call():
    from bsim import MPI

    def main():
        world = MPI.COMM_WORLD
        local = world.Split(world.rank, 0)
        MPI.Intracomm.Create_intercomm(local, 3, world, 1 - world.rank)

    with pytest.raises((MPIUsageError, RankError), match=r"rank \d: Create_intercomm"):
        bsim.simulate(main, 2, protocol="bsim")


def test_null_intercommunicator_calls_are_err_comm():
    from bsim import MPI

    def main():
        null = MPI.Intercomm()
        out = []
        for call, args in ((null.Get_remote_size, ()), (null.Dup, ()), (null.Merge, (True,)),
                           (null.Split, (0, 0)), (null.Create, (MPI.GROUP_EMPTY,)),
                           (null.barrier, ()), (null.bcast, (1, 0)), (null.Disconnect, ())):
            try:
                call(*args)
                out.append("no error")
            except MPI.Exception as exc:
                out.append(exc.Get_error_class() == MPI.ERR_COMM)
        return out

    assert bsim.simulate(main, 2, protocol="bsim").returns == [[True] * 8] * 2


DYNAMIC = '''
import socket
from mpi4py import MPI


def main():
    world = MPI.COMM_WORLD
    rank = world.rank
    out = {}
    port = MPI.Open_port()
    MPI.Publish_name(f"svc-{rank}", port)
    out["names"] = MPI.Lookup_name(f"svc-{rank}") == port
    MPI.Unpublish_name(f"svc-{rank}", port)
    MPI.Close_port(port)
    try:
        MPI.Lookup_name(f"svc-{rank}")
    except MPI.Exception as exc:
        out["unpublished"] = exc.Get_error_class() == MPI.ERR_NAME
    rest = world.Create(world.Get_group().Excl([0]))
    if rank == 0:
        port = MPI.Open_port()
        world.send(port, dest=1)
        ic = MPI.COMM_SELF.Accept(port)
        MPI.Close_port(port)
    else:
        ic = rest.Connect(world.recv(source=0) if rank == 1 else None, root=0)
    out["accept"] = [ic.rank, ic.size, ic.remote_size,
                     ic.bcast([1, "a"] if rank == 0 else None, MPI.ROOT if rank == 0 else 0),
                     ic.allgather(rank)]
    merged = ic.Merge(rank != 0)
    out["merge"] = [merged.rank, merged.size]
    merged.Free()
    ic.Disconnect()
    out["disconnected"] = ic == MPI.COMM_NULL
    if rest != MPI.COMM_NULL:
        rest.Free()
    # Join: rank 1 connects before rank 0 accepts (no rank blocks in the host OS)
    if rank == 0:
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        world.send(server.getsockname(), dest=1)
        world.recv(source=1)
        sock = server.accept()[0]
        server.close()
    elif rank == 1:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.connect(tuple(world.recv(source=0)))
        world.send(True, dest=0)
    if rank < 2:
        joined = MPI.Comm.Join(sock.fileno())
        sock.close()
        out["join"] = [joined.rank, joined.size, joined.remote_size,
                       joined.allreduce(rank + 10)]
        joined.Disconnect()
    return out
'''


def _simulate_dynamic(ranks: int) -> list:
    namespace: dict = {}
    exec(compile(DYNAMIC, "<program>", "exec"), namespace)
    return json.loads(json.dumps(bsim.simulate(namespace["main"], ranks, protocol="bsim").returns))


def test_dynamic_by_hand():
    zero, one, two = _simulate_dynamic(3)
    assert zero["names"] and zero["unpublished"] and zero["disconnected"]
    assert zero["accept"] == [0, 1, 2, None, [1, 2]]
    assert two["accept"] == [1, 2, 1, [1, "a"], [0]]
    assert zero["merge"] == [0, 3] and two["merge"] == [2, 3]
    assert zero["join"] == [0, 1, 1, 11] and one["join"] == [0, 1, 1, 10]
    assert "join" not in two


@needs_mpiexec
@pytest.mark.parametrize("ranks", [2, 3])
def test_dynamic_equal_real_mpi(ranks: int):
    assert _simulate_dynamic(ranks) == real_mpi_returns(ranks, DYNAMIC)


def test_accept_connect_timing_by_hand(hockney_spec: str):
    """``Connect``'s root sends its group to the port's owner, which replies with its own:
    two messages of ``8 * (members + 4)`` bytes, ``l + s/w`` each under the bsim protocol
    (sends are free).  With one rank on each side, both calling at t = 0: the acceptor
    ends when the request has arrived, ``l + 40 / w``; the connector when the reply, sent
    then, has arrived, ``2 * (l + 40 / w)``."""
    from bsim import MPI

    def main():
        world = MPI.COMM_WORLD
        if world.rank == 0:
            port = MPI.Open_port()
            MPI.Publish_name("svc", port)
            world.Barrier()
            t0 = MPI.Wtime()
            ic = MPI.COMM_SELF.Accept(port)
        else:
            world.Barrier()
            t0 = MPI.Wtime()
            ic = MPI.COMM_SELF.Connect(MPI.Lookup_name("svc"))
        return MPI.Wtime() - t0, ic.remote_size

    out = bsim.simulate(main, 2, network=hockney_spec, protocol="bsim").returns
    one = LATENCY + 40 / 1e9
    assert out[0] == pytest.approx((one, 1)) and out[1] == pytest.approx((2 * one, 1))
