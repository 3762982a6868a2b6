"""The nonblocking v/w, scan and reduce-scatter collectives: the blocking call's data and time.

Values by hand for 3 ranks; times equal to the blocking call's (a nonblocking
collective posted and waited at once is charged the same formula).
"""

from __future__ import annotations

import numpy as np
import pytest

import bsim
from bsim import MPI

NET = "loggp:L=2e-6,o=1e-6,g=1e-6,G=1e-9"


def _calls(blocking: bool):
    def main():
        comm = MPI.COMM_WORLD
        r, n = comm.rank, comm.size
        out = {}

        def call(name, *args, **kw):
            if blocking:
                getattr(comm, name)(*args, **kw)
            else:
                getattr(comm, "I" + name.lower())(*args, **kw).Wait()

        x = np.zeros(1)
        call("Scan", np.array([r + 1.0]), x, MPI.SUM)
        out["scan"] = x.tolist()
        x = np.full(1, -1.0)
        call("Exscan", np.array([r + 1.0]), x, MPI.SUM)
        out["exscan"] = x.tolist()
        x = np.zeros(1)
        call("Reduce_scatter_block", np.arange(n, dtype="d") * (r + 1), x, MPI.SUM)
        out["rsb"] = x.tolist()
        x = np.zeros(r + 1)
        call("Reduce_scatter", np.ones(n * (n + 1) // 2), x, recvcounts=list(range(1, n + 1)))
        out["rs"] = x.tolist()
        counts = [1, 2, 3][:n]
        g = np.zeros(sum(counts))
        call("Gatherv", np.full(counts[r], float(r)), [g, counts], root=0)
        out["gatherv"] = g.tolist()
        s = np.zeros(counts[r])
        call("Scatterv", [np.arange(sum(counts), dtype="d"), counts], s, root=0)
        out["scatterv"] = s.tolist()
        a = np.zeros(sum(counts))
        call("Allgatherv", np.full(counts[r], 10.0 + r), [a, counts])
        out["allgatherv"] = a.tolist()
        sc = np.zeros(1)
        call("Scatter", np.arange(n, dtype="d") * 5, sc, root=1)
        out["scatter"] = sc.tolist()
        send = np.arange(n, dtype="d") + 10 * r
        recv = np.zeros(n)
        call("Alltoallv", [send, [1] * n], [recv, [1] * n])
        out["alltoallv"] = recv.tolist()
        out["t"] = MPI.Wtime()
        return out
    return main


@pytest.mark.parametrize("blocking", [True, False])
def test_values_by_hand(blocking):
    res = bsim.simulate(_calls(blocking), 3, network=NET).returns
    assert [o["scan"] for o in res] == [[1.0], [3.0], [6.0]]
    assert [o["exscan"] for o in res][1:] == [[1.0], [3.0]] and res[0]["exscan"] == [-1.0]
    assert [o["rsb"] for o in res] == [[0.0], [6.0], [12.0]]       # i * (1+2+3)
    assert [o["rs"] for o in res] == [[3.0], [3.0, 3.0], [3.0, 3.0, 3.0]]
    assert res[0]["gatherv"] == [0.0, 1.0, 1.0, 2.0, 2.0, 2.0]
    assert [o["scatterv"] for o in res] == [[0.0], [1.0, 2.0], [3.0, 4.0, 5.0]]
    assert all(o["allgatherv"] == [10.0, 11.0, 11.0, 12.0, 12.0, 12.0] for o in res)
    assert [o["scatter"] for o in res] == [[0.0], [5.0], [10.0]]
    assert [o["alltoallv"] for o in res] == [[0.0, 10.0, 20.0], [1.0, 11.0, 21.0],
                                             [2.0, 12.0, 22.0]]


def test_nonblocking_posted_and_waited_costs_the_blocking_time():
    blocking = bsim.simulate(_calls(True), 3, network=NET).returns
    nonblocking = bsim.simulate(_calls(False), 3, network=NET).returns
    assert [o["t"] for o in nonblocking] == pytest.approx([o["t"] for o in blocking], rel=1e-12)
    assert blocking[0]["t"] > 0


def test_persistent_collectives_restart_with_fresh_data_and_the_nonblocking_time():
    """Allreduce_init started 3 times sums the send buffer as it is at each Start; the
    clock after each round equals the same program with Iallreduce."""
    def main(persistent):
        comm = MPI.COMM_WORLD
        send, recv, out = np.zeros(2), np.zeros(2), []
        req = comm.Allreduce_init(send, recv, MPI.SUM) if persistent else None
        for k in range(3):
            send[:] = [comm.rank + k, 1.0]
            bsim.add_time(1e-6 * comm.rank)
            if persistent:
                req.Start()
                req.Wait()
            else:
                comm.Iallreduce(send, recv, MPI.SUM).Wait()
            out.append((recv.tolist(), MPI.Wtime()))
        if persistent:
            assert bool(req)    # inactive, not freed: still a request
            req.Free()
        return out

    per = bsim.simulate(main, 3, network=NET, args=(True,)).returns
    nb = bsim.simulate(main, 3, network=NET, args=(False,)).returns
    for k in range(3):
        assert per[0][k][0] == [0 + 1 + 2 + 3 * k, 3.0]
    assert per == nb


def test_every_persistent_collective_runs():
    from bsim.mpi.collectives.persistent import PERSISTENT

    def main():
        comm = MPI.COMM_WORLD
        n = comm.size
        b = [np.zeros(n), np.zeros(n)]
        args = {"Barrier_init": (), "Bcast_init": (b[0],), "Gather_init": (b[0][:1], b[1]),
                "Gatherv_init": (b[0][:1], b[1]), "Scatter_init": (b[0], b[1][:1]),
                "Scatterv_init": (b[0], b[1][:1]), "Allgather_init": (b[0][:1], b[1]),
                "Allgatherv_init": (b[0][:1], b[1]), "Alltoall_init": (b[0], b[1]),
                "Alltoallv_init": (b[0], b[1]),
                "Alltoallw_init": ([b[0], [8] * n, [8 * i for i in range(n)], [MPI.BYTE] * n],
                                   [b[1], [8] * n, [8 * i for i in range(n)], [MPI.BYTE] * n]),
                "Reduce_init": (b[0], b[1]), "Allreduce_init": (b[0], b[1]),
                "Reduce_scatter_block_init": (b[0], b[1][:1]),
                "Reduce_scatter_init": (b[0], b[1][:1]), "Scan_init": (b[0], b[1]),
                "Exscan_init": (b[0], b[1])}
        assert set(args) == set(PERSISTENT)
        reqs = [getattr(comm, name)(*a) for name, a in args.items()]
        for _ in range(2):
            MPI.Prequest.Startall(reqs)
            MPI.Request.Waitall(reqs)
        return len(reqs)

    assert bsim.simulate(main, 2, network=NET).returns == [17, 17]
