"""One-sided communication (``MPI.Win``): the data real MPI gives, and the documented times.

The data cases run one program under real ``mpiexec`` and under bsim and compare every
rank's values (each value is independent of the order in which concurrent operations
happen, so real MPI gives it deterministically).  The timing cases derive the clocks by
hand from the rules of ``docs/rma.md`` on Hockney with l = 2 us, w = 1 GB/s (conftest):
an empty message costs ``c0 = 2 us``, 1000 bytes ``c = 3 us``.
"""

from __future__ import annotations

import pytest
from conftest import needs_mpiexec, real_mpi_returns

import bsim
from bsim.errors import DeadlockError, MPIUsageError

PROGRAM = '''
import numpy as np
from mpi4py import MPI
from mpi4py.util import sync


def main():
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    out = {}
    # Create + Fence: every rank puts its id into slot `rank` of every window
    mem = np.full(size + 3, -1, dtype="i")
    win = MPI.Win.Create(mem, mem.itemsize, MPI.INFO_NULL, comm)
    win.Fence()
    for t in range(size):
        win.Put(np.array([rank * 10], dtype="i"), t, rank)
    win.Fence()
    out["put"] = mem.tolist()
    got = np.zeros(size, dtype="i")
    win.Get(got, (rank + 1) % size, (0, size, MPI.INT))
    win.Fence()
    out["get"] = got.tolist()
    # a strided target: a vector of 2 x 1 int, stride 2, at displacement 1
    vec = MPI.INT.Create_vector(2, 1, 2).Commit()
    win.Put(np.array([7, 8], dtype="i"), (rank + 1) % size, (1, 1, vec))
    win.Fence()
    out["vector"] = mem[:4].tolist()
    # Accumulate from everyone into rank 0 (atomic per element), MAX too
    win.Accumulate(np.full(size, rank + 1, dtype="i"), 0, 0, MPI.SUM)
    win.Accumulate(np.array([rank], dtype="i"), 0, size, MPI.MAX)
    win.Fence(MPI.MODE_NOSUCCEED)
    out["acc"] = mem.tolist() if rank == 0 else None
    win.Free()
    out["freed"] = win == MPI.WIN_NULL
    # Allocate + passive target: a counter at rank 0, Fetch_and_op under a shared lock
    w = MPI.Win.Allocate(8 if rank == 0 else 0, 4, MPI.INFO_NULL, comm)
    if rank == 0:
        np.frombuffer(w.tomemory(), dtype="i")[:] = [100, 0]
    comm.Barrier()
    prev = np.zeros(1, dtype="i")
    w.Lock(0, MPI.LOCK_SHARED)
    w.Fetch_and_op(np.array([1], dtype="i"), prev, 0, 0, MPI.SUM)
    w.Unlock(0)
    out["fetched_in_range"] = 100 <= int(prev[0]) < 100 + size
    comm.Barrier()
    w.Lock(0)
    w.Get(prev, 0, 0)
    w.Unlock(0)
    out["counter"] = int(prev[0])
    # Compare_and_swap: exactly one rank swaps 0 -> its rank + 1
    old = np.zeros(1, dtype="i")
    w.Lock(0)
    w.Compare_and_swap(np.array([rank + 1], dtype="i"), np.array([0], dtype="i"), old, 0, 1)
    w.Unlock(0)
    out["swapped"] = comm.allreduce(int(old[0] == 0))
    # Get_accumulate and the request-based forms under Lock_all
    comm.Barrier()
    w.Lock_all()
    res = np.zeros(1, dtype="i")
    w.Rget_accumulate(np.array([0], dtype="i"), res, 0, 0, MPI.NO_OP).Wait()
    w.Raccumulate(np.array([2], dtype="i"), 0, 0, MPI.SUM).Wait()
    w.Flush(0)
    w.Unlock_all()
    out["no_op_read"] = int(res[0]) >= 100 + size
    comm.Barrier()
    if rank == 0:
        out["final"] = np.frombuffer(w.tomemory(), dtype="i")[0].item()
    w.Free()
    # PSCW: a ring, each rank puts into its right neighbour
    mem = np.zeros(1, dtype="d")
    win = MPI.Win.Create(mem, 8, MPI.INFO_NULL, comm)
    group = win.Get_group()
    left, right = group.Incl([(rank - 1) % size]), group.Incl([(rank + 1) % size])
    win.Post(left)
    win.Start(right)
    win.Put(np.array([rank + 0.5]), (rank + 1) % size)
    win.Complete()
    win.Wait()
    out["pscw"] = mem.tolist()
    win.Free()
    # a dynamic window: addresses exchanged by allgather
    w = MPI.Win.Create_dynamic(MPI.INFO_NULL, comm)
    buf = MPI.Alloc_mem(16)
    buf[:] = bytes(16)
    w.Attach(buf)
    addrs = comm.allgather(MPI.Get_address(buf))
    w.Fence()
    w.Put(bytearray([rank + 1] * 4), (rank + 1) % size, addrs[(rank + 1) % size] + 4)
    w.Fence()
    out["dynamic"] = list(bytes(buf))
    w.Detach(buf)
    w.Free()
    # mpi4py.util.sync: a counter and a mutex over RMA
    counter = sync.Counter(comm=comm)
    mine = [counter.next() for _ in range(3)]
    total = comm.allreduce(sum(mine))
    counter.free()
    out["counter_sum"] = total
    mutex = sync.Mutex(comm=comm)
    with mutex:
        out["mutex"] = mutex.locked()
    mutex.free()
    return out
'''


def _bsim(n: int) -> list:
    namespace: dict = {}
    exec(compile(PROGRAM, "<program>", "exec"), namespace)
    return bsim.simulate(namespace["main"], n, protocol="bsim").returns


@needs_mpiexec
@pytest.mark.parametrize("n", [2, 3])
def test_data_as_real_mpi(n):
    """Put/Get (fence, vector targets), accumulates, atomics, PSCW, dynamic windows and
    mpi4py.util.sync give real MPI's values."""
    assert _bsim(n) == real_mpi_returns(n, PROGRAM)


@pytest.mark.parametrize("n", [1, 2, 4])
def test_data_by_hand(n):
    """The same program's values, derived from MPI's rules, at several sizes."""
    outs = _bsim(n)
    acc = [10 * r for r in range(n)] + [-1, -1, -1]
    acc[1], acc[3] = 7, 8                     # rank n-1's vector put into rank 0
    for i in range(n):
        acc[i] += n * (n + 1) // 2            # SUM of rank + 1 over the ranks
    acc[n] = max(acc[n], n - 1)               # MAX of the ranks
    assert outs[0]["acc"] == acc
    assert outs[0]["final"] == 100 + n + 2 * n   # Fetch_and_op +1, Raccumulate +2 each
    for rank, out in enumerate(outs):
        assert out["put"] == [10 * r for r in range(n)] + [-1, -1, -1]
        assert out["vector"][1] == 7 and out["vector"][3] == 8
        assert out["get"] == [10 * r for r in range(n)]
        assert out["counter"] == 100 + n and out["fetched_in_range"]
        assert out["swapped"] == 1 and out["no_op_read"]
        assert out["pscw"] == [(rank - 1) % n + 0.5]
        assert out["dynamic"] == [0] * 4 + [(rank - 1) % n + 1] * 4 + [0] * 8
        assert out["counter_sum"] == sum(range(3 * n)) and out["mutex"] and out["freed"]


NET = "hockney:latency=2e-6,bandwidth=1e9"


def _clocks(main, n=2, net=NET):
    res = bsim.simulate(main, n, network=net, protocol="bsim")
    return [round(r * 1e6, 9) for r in res.returns]


def test_lock_put_unlock_time():
    """Lock: 2 + 2 us; Put 1000 B applied at 4 + 3; Unlock: 7 + 2 + 2 = 11 us."""
    def main():
        import numpy as np
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        w = MPI.Win.Allocate(1000, 1, MPI.INFO_NULL, comm)
        t0 = MPI.Wtime()
        if comm.rank == 0:
            w.Lock(1)
            t1 = MPI.Wtime()
            w.Put(np.zeros(1000, dtype="u1"), 1)
            t2 = MPI.Wtime()
            w.Unlock(1)
            t = [t1 - t0, t2 - t0, MPI.Wtime() - t0]
        else:
            t = [0.0, 0.0, 0.0]
        return t
    res = bsim.simulate(main, 2, network=NET, protocol="bsim").returns
    assert [round(x * 1e6, 9) for x in res[0]] == [4.0, 4.0, 11.0]


def test_get_time():
    """Get 1000 B after the lock (4 us): request 2 us, reply 3 us -> 9; Unlock -> 13 us."""
    def main():
        import numpy as np
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        w = MPI.Win.Allocate(1000, 1, MPI.INFO_NULL, comm)
        t0 = MPI.Wtime()
        out = []
        if comm.rank == 0:
            buf = np.zeros(1000, dtype="u1")
            w.Lock(1, MPI.LOCK_SHARED)
            w.Get(buf, 1)
            w.Flush(1)
            out.append(MPI.Wtime() - t0)
            w.Unlock(1)
            out.append(MPI.Wtime() - t0)
        return out
    res = bsim.simulate(main, 2, network=NET, protocol="bsim").returns
    assert [round(x * 1e6, 9) for x in res[0]] == [9.0, 13.0]


def test_lock_contention_time():
    """Rank 1 holds rank 0's lock 2..16 us; rank 2 asks at 3 us, is granted at 16 (wait
    13 us) and returns at 18; its Unlock ends at 22 us (calc 1, wait 13, comm 8)."""
    def main():
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        w = MPI.Win.Allocate(8, 1, MPI.INFO_NULL, comm)
        t0 = MPI.Wtime()
        if comm.rank == 1:
            w.Lock(0)
            bsim.add_time(10e-6)
            w.Unlock(0)
        elif comm.rank == 2:
            bsim.add_time(1e-6)
            w.Lock(0)
            w.Unlock(0)
        return MPI.Wtime() - t0

    res = bsim.simulate(main, 3, network=NET, protocol="bsim")
    assert [round(t * 1e6, 9) for t in res.returns] == [0.0, 18.0, 22.0]


def test_fence_time():
    """Fence = barrier T_b; a 1000-byte Put between two fences: 2 T_b + 3 us for both."""
    def barrier():
        from mpi4py import MPI
        MPI.COMM_WORLD.Barrier()
        return MPI.Wtime()

    def main():
        import numpy as np
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        w = MPI.Win.Allocate(1000, 1, MPI.INFO_NULL, comm)
        t0 = MPI.Wtime()
        w.Fence()
        if comm.rank == 0:
            w.Put(np.zeros(1000, dtype="u1"), 1)
        w.Fence()
        return MPI.Wtime() - t0

    tb = bsim.simulate(barrier, 2, network=NET, protocol="bsim").returns[0]
    got = bsim.simulate(main, 2, network=NET, protocol="bsim").returns
    assert got == pytest.approx([2 * tb + 3e-6] * 2, rel=1e-12)


def test_pscw_time():
    """Post at 0 reaches the origin at 2 us (Start returns); Put 1000 B applied at 5;
    Complete at 5 sends a notice arriving at 7 us, when the target's Wait returns."""
    def main():
        import numpy as np
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        w = MPI.Win.Allocate(1000, 1, MPI.INFO_NULL, comm)
        t0 = MPI.Wtime()
        g = w.Get_group()
        if comm.rank == 0:
            w.Start(g.Incl([1]))
            w.Put(np.zeros(1000, dtype="u1"), 1)
            w.Complete()
        else:
            w.Post(g.Incl([0]))
            w.Wait()
        return MPI.Wtime() - t0

    assert _clocks(main) == [5.0, 7.0]


def test_deterministic():
    """Two runs of a contended program give identical clocks and values."""
    def main():
        import numpy as np
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        w = MPI.Win.Allocate(4, 4, MPI.INFO_NULL, comm)
        prev = np.zeros(1, dtype="i")
        for _ in range(3):
            w.Lock(0, MPI.LOCK_SHARED)
            w.Fetch_and_op(np.array([1], dtype="i"), prev, 0)
            w.Unlock(0)
        return int(prev[0]), MPI.Wtime()
    assert bsim.simulate(main, 4, network=NET, protocol="bsim").returns == \
        bsim.simulate(main, 4, network=NET, protocol="bsim").returns


def _fails(body: str, n: int = 2):
    lines = "".join(f"    {line.strip()}\n" for line in body.split(";"))
    src = ("def main():\n    from mpi4py import MPI\n    import numpy as np\n"
           "    comm = MPI.COMM_WORLD\n" + lines)
    ns: dict = {}
    exec(compile(src, "<bad>", "exec"), ns)
    return lambda: bsim.simulate(ns["main"], n, protocol="bsim")


@pytest.mark.parametrize("body,match", [
    ("w = MPI.Win.Allocate(4, 1, MPI.INFO_NULL, comm); w.Unlock(0)",
     r"rank \d: Win.Unlock: rank 0 of the window is not locked"),
    ("w = MPI.Win.Allocate(4, 1, MPI.INFO_NULL, comm); w.Put(bytearray(4), 0)",
     r"Win.Put: no access epoch to rank 0"),
    ("w = MPI.Win.Allocate(4, 1, MPI.INFO_NULL, comm); w.Fence(); w.Put(bytearray(8), 1)",
     r"Win.Put: bytes 0..8 lie past the end of rank 1's window \(4 bytes\)"),
    ("w = MPI.Win.Allocate(4, 1, MPI.INFO_NULL, comm); w.Lock_all(); w.Get(bytearray(1), 5)",
     r"Win.Get: target rank 5 is not in the window's group"),
    ("w = MPI.Win.Allocate(4, 1, MPI.INFO_NULL, comm); w.Free(); w.Fence()",
     r"Win.Fence on WIN_NULL"),
    ("w = MPI.Win.Allocate(4, 1, MPI.INFO_NULL, comm); w.Lock(1); w.Free()",
     r"Win.Free with an open epoch \(locks held on ranks \[1\]\)"),
])
def test_bad_use_is_one_clear_error(body, match):
    with pytest.raises(MPIUsageError, match=match):
        _fails(body)()


def test_start_without_post_is_a_deadlock_report():
    """An origin waiting for a Post that never comes ends as a deadlock naming Win.Start."""
    run = _fails("w = MPI.Win.Allocate(4, 1, MPI.INFO_NULL, comm); g = w.Get_group(); "
                 "w.Start(g.Incl([1 - comm.rank])) if comm.rank == 0 else None")
    with pytest.raises(DeadlockError, match="Win.Start"):
        run()


def test_placeholder_window_costs_the_same_and_moves_nothing():
    """A skeleton's window of bsim.Buffer placeholders: no memory, the same timing rules
    and bounds checks as real buffers."""
    def main():
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        w = MPI.Win.Create(bsim.Buffer(1000), 1, MPI.INFO_NULL, comm)
        t0 = MPI.Wtime()
        if comm.rank == 0:
            w.Lock(1)
            w.Put(bsim.Buffer(1000), 1)
            w.Get(bsim.Buffer(10, MPI.DOUBLE), 1, 8)
            w.Unlock(1)
            t = MPI.Wtime() - t0
            try:
                w.Fence()
                w.Put(bsim.Buffer(8), 1, 996)
            except MPI.Exception as exc:
                return t, str(exc)
        else:
            w.Fence()
        return (MPI.Wtime() - t0, w.Get_attr(MPI.WIN_SIZE))

    out = bsim.simulate(main, 2, network=NET, protocol="bsim").returns
    # the Get (80 B) reaches rank 1 at 6 us but is applied after the Put (7 us, FIFO per
    # pair); its reply takes 2.08 us (-> 9.08); Unlock: + 2 + 2 = 13.08 us
    assert out[0][0] == pytest.approx(13.08e-6, rel=1e-12)
    assert "bytes 996..1004 lie past the end of rank 1's window (1000 bytes)" in out[0][1]
    assert out[1][1] == 1000


def test_handle_semantics_as_mpi4py():
    """WIN_NULL pickles and copies to itself; windows are unhashable, unordered, not
    picklable while in use, equal to their copies and to fromhandle(handle); a freed
    window equals WIN_NULL; errors on WIN_NULL have the class ERR_WIN."""
    import copy
    import pickle

    from bsim import MPI

    assert pickle.loads(pickle.dumps(MPI.WIN_NULL)) is MPI.WIN_NULL
    assert copy.deepcopy(MPI.WIN_NULL) is MPI.WIN_NULL and MPI.Win() == MPI.WIN_NULL
    with pytest.raises(TypeError):
        hash(MPI.WIN_NULL)
    with pytest.raises(TypeError):
        MPI.Win(1234)

    def main():
        import numpy as np
        w = MPI.Win.Create(np.zeros(4), 8, MPI.INFO_NULL, MPI.COMM_WORLD)
        out = [MPI.Win(w) == w, MPI.Win.fromhandle(w.handle) == w, w != MPI.WIN_NULL,
               MPI.Get_address(w.tomemory()) == w.Get_attr(MPI.WIN_BASE)]
        try:
            pickle.dumps(w)
        except ValueError:
            out.append(True)
        w.Free()
        try:
            MPI.WIN_NULL.Free()
        except MPI.Exception as exc:
            out.append(exc.Get_error_class() == MPI.ERR_WIN)
        return out + [w == MPI.WIN_NULL, MPI.Aint_diff(MPI.Aint_add(100, 8), 100)]

    assert bsim.simulate(main, 2, protocol="bsim").returns == [[True] * 7 + [8]] * 2
