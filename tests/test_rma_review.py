"""RMA after the outside review: transfers share the network, wrong epochs are errors,
the counts are honest.

Times are derived by hand on Hockney with ``l = 1 us``, ``B = 1 GB/s`` and ``S = 1 MiB``
(``S/B = 1.048576 ms``), 8 ranks.  Under ``--contention fluid`` a flat model gives each rank
one sending and one receiving NIC link (``docs/networks.md``): 7 transfers of ``S`` into
(or out of) one rank at once each get ``B/7`` and all end ``7 S/B`` after they start, then
the latency: ``7 S/B + l = 7.341032 ms``, which is what the same traffic takes as
point-to-point messages.  Under ``loggp`` the origin's NIC injects one transfer at a time
(``gap = S/B``), so the k-th of a fan-out arrives at ``k S/B + l`` with or without
contention.
"""

from __future__ import annotations

import pytest
from conftest import ERROR_CLASS_PRELUDE, needs_mpiexec, real_mpi_returns

import bsim
from bsim.cli.main import main as cli
from bsim.errors import MPIUsageError

L, B, S, N = 1e-6, 1e9, 1 << 20, 8
NET = f"hockney:latency={L},bandwidth={B}"
ALL_AT_ONCE = 7 * S / B + L                 # 7.341032 ms
SETTINGS = [("bsim", "fluid"), ("loggp", "fluid"), ("loggp", "none"), ("bsim", "none")]


def _run(fn, protocol: str, contention: str) -> list:
    return bsim.simulate(fn, N, network=NET, protocol=protocol,
                         contention=contention).returns


def rma_incast():
    """Ranks 1..7 each Rput S bytes into rank 0's window at once; each returns how long
    its Put took to complete."""
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    win = MPI.Win.Create(bsim.Buffer(S * comm.size), 1, comm=comm)
    win.Lock_all()
    t = MPI.Wtime()
    if comm.rank:
        win.Rput(bsim.Buffer(S), 0, comm.rank * S).Wait()
    dt = MPI.Wtime() - t
    win.Unlock_all()
    win.Free()
    return dt


def p2p_incast():
    """The same bytes as messages: rank 0 receives S from each other rank."""
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    comm.Barrier()
    t = MPI.Wtime()
    if comm.rank == 0:
        MPI.Request.Waitall([comm.Irecv(bsim.Buffer(S), s) for s in range(1, comm.size)])
    else:
        comm.Send(bsim.Buffer(S), 0)
    return MPI.Wtime() - t


def rma_fanout():
    """Rank 0 Rputs S bytes to each other rank; returns each Put's completion time."""
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    win = MPI.Win.Create(bsim.Buffer(S), 1, comm=comm)
    win.Lock_all()
    t = MPI.Wtime()
    done = []
    if comm.rank == 0:
        for req in [win.Rput(bsim.Buffer(S), g) for g in range(1, comm.size)]:
            req.Wait()
            done.append(MPI.Wtime() - t)
    win.Unlock_all()
    win.Free()
    return done


def rma_get_fanin():
    """Ranks 1..7 each Rget S bytes from rank 0's window at once."""
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    win = MPI.Win.Create(bsim.Buffer(S), 1, comm=comm)
    win.Lock_all()
    t = MPI.Wtime()
    if comm.rank:
        win.Rget(bsim.Buffer(S), 0).Wait()
    dt = MPI.Wtime() - t
    win.Unlock_all()
    win.Free()
    return dt


def lone_put():
    """One Put of S bytes, alone in the network."""
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    win = MPI.Win.Create(bsim.Buffer(S), 1, comm=comm)
    win.Lock_all()
    t = MPI.Wtime()
    if comm.rank == 1:
        win.Rput(bsim.Buffer(S), 0).Wait()
    dt = MPI.Wtime() - t
    win.Unlock_all()
    win.Free()
    return dt


@pytest.mark.parametrize("protocol", ["bsim", "loggp"])
def test_an_incast_of_puts_shares_the_target_nic(protocol):
    """7 Puts of 1 MiB into one rank under fluid contention end at 7 S/B + l (7.341 ms),
    as the same messages do; before, each ended at S/B + l (1.05 ms) whatever the load."""
    got = _run(rma_incast, protocol, "fluid")
    assert got[1:] == pytest.approx([ALL_AT_ONCE] * 7, rel=1e-9)
    p2p = _run(p2p_incast, protocol, "fluid")[0]
    assert max(got) == pytest.approx(p2p, rel=2e-3)   # p2p: + the receive's own latency


@pytest.mark.parametrize("protocol,contention", SETTINGS[:3])
def test_a_fanout_of_puts_shares_the_origin_nic(protocol, contention):
    """Rank 0 putting 1 MiB to each of 7 ranks: under fluid with the bsim protocol the 7
    flows share its NIC and all end at 7 S/B + l; under loggp its NIC injects them one
    after another, the k-th arriving at k S/B + l (with or without contention)."""
    got = _run(rma_fanout, protocol, contention)[0]
    if protocol == "bsim":
        want = [ALL_AT_ONCE] * 7
    else:
        want = [k * S / B + L for k in range(1, 8)]
    assert got == pytest.approx(want, rel=1e-9)


def test_a_fanout_under_bsim_without_contention_is_unchanged():
    """The bsim protocol without contention keeps the documented rule: every Put
    completes at t + c(o, g, S) (no NIC is modelled, as for its sends)."""
    assert _run(rma_fanout, "bsim", "none")[0] == pytest.approx([S / B + L] * 7, rel=1e-9)


@pytest.mark.parametrize("protocol,contention", SETTINGS[:3])
def test_gets_from_one_rank_share_its_nic(protocol, contention):
    """7 Gets of 1 MiB from one rank: the request takes l, then the replies leave its
    NIC; they share it (bsim protocol, fluid: all complete at l + 7 S/B + l) or queue on
    it (loggp: the k-th completes at 2 l + k S/B)."""
    got = sorted(_run(rma_get_fanin, protocol, contention)[1:])
    if protocol == "bsim":
        want = [L + ALL_AT_ONCE] * 7
    else:
        want = [2 * L + k * S / B for k in range(1, 8)]
    assert got == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("protocol,contention", SETTINGS)
def test_a_lone_put_costs_the_model_alone(protocol, contention):
    """Alone in the network a Put costs c(o, g, S) = l + S/B under every setting."""
    assert _run(lone_put, protocol, contention)[1] == pytest.approx(L + S / B, rel=1e-12)


def test_puts_and_sends_share_links_with_each_other():
    """A Put and an eager message into the same rank at the same time share its NIC: both
    take 2 S/B + l, not S/B + l."""
    def main():
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        win = MPI.Win.Create(bsim.Buffer(S), 1, comm=comm)
        win.Lock_all()
        t = MPI.Wtime()
        if comm.rank == 1:
            win.Rput(bsim.Buffer(S), 0).Wait()
        elif comm.rank == 2:
            comm.Send(bsim.Buffer(S), 0)
        elif comm.rank == 0:
            comm.Recv(bsim.Buffer(S), 2)
        dt = MPI.Wtime() - t
        win.Unlock_all()
        win.Free()
        return dt
    got = bsim.simulate(main, 3, network=NET, protocol=f"loggp:eager_limit={S}",
                        contention="fluid").returns
    assert got[1] == pytest.approx(2 * S / B + L, rel=1e-9)
    assert got[0] == pytest.approx(2 * S / B + L, rel=1e-9)


# -- wrong epochs: one MPI_ERR_RMA_SYNC line, as MPICH -----------------------------------
R0 = "if comm.rank == 0: "
# line 5 of the program, after the window's creation on line 4: (statement, the rank that
# fails, what the line must contain)
ERRORS = {
    "start_in_lock": (R0 + "w.Lock(1); w.Start(g.Incl([1]))", 0,
                      "Win.Start: locks are held on ranks [1] (Unlock them first)"),
    "fence_in_lock": (R0 + "w.Lock(1); w.Fence()", 0,
                      "Win.Fence: locks are held on ranks [1] (Unlock them first)"),
    "fence_in_lock_all": (R0 + "w.Lock_all(); w.Fence()", 0,
                          "Win.Fence: a Lock_all epoch is open (close it with Unlock_all)"),
    "fence_in_start": ("w.Post(g.Incl([1 - comm.rank])); w.Start(g.Incl([1 - "
                       "comm.rank])); w.Fence() if comm.rank == 0 else w.Complete()", 0,
                       "Win.Fence: a Start epoch is open (close it with Complete)"),
    "fence_in_post": ("w.Post(g.Incl([1])) if comm.rank == 0 else None; w.Fence()", 0,
                      "Win.Fence: a Post epoch is open (close it with Wait or Test)"),
    "unlock_all_after_locks": (R0 + "w.Lock(0); w.Lock(1); w.Unlock_all()", 0,
                               "Win.Unlock_all: no Lock_all epoch is open (the locks on "
                               "ranks [0, 1] are Lock's: Unlock each)"),
    "unlock_in_lock_all": (R0 + "w.Lock_all(); w.Unlock(1)", 0,
                           "Win.Unlock: the locks are Lock_all's (close them with "
                           "Unlock_all)"),
    "lock_in_lock_all": (R0 + "w.Lock_all(); w.Lock(1)", 0,
                         "Win.Lock: a Lock_all epoch is open (close it with Unlock_all)"),
    "lock_all_in_lock": (R0 + "w.Lock(1); w.Lock_all()", 0,
                         "Win.Lock_all: locks are held on ranks [1] (Unlock them first)"),
    "flush_no_epoch": (R0 + "w.Flush(1)", 0,
                       "Win.Flush: no passive-target epoch is open"),
    "flush_in_fence": ("w.Fence(); w.Flush_all() if comm.rank == 0 else None", 0,
                       "Win.Flush_all: no passive-target epoch is open"),
    "sync_no_epoch": (R0 + "w.Sync()", 0, "Win.Sync: no passive-target epoch is open"),
    "complete_no_start": (R0 + "w.Complete()", 0,
                          "Win.Complete: no Start epoch is open"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_a_wrong_epoch_is_one_line_naming_rank_call_and_line(case, tmp_path, capsys):
    """Status 2 and one line ``rank R: Win.<call>: <what> (MPI_ERR_RMA_SYNC) (at
    prog.py:5)``; these were accepted (or, for Complete, gave ERR_OTHER)."""
    statement, rank, expected = ERRORS[case]
    prog = tmp_path / f"{case}.py"
    prog.write_text("import bsim\nfrom mpi4py import MPI\ncomm = MPI.COMM_WORLD\n"
                    "w = MPI.Win.Allocate(8, 1, comm=comm); g = w.Get_group()\n"
                    f"{statement}\n")
    status = cli(["run", str(prog), "-n", "2", "--network", NET])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("bsim: error:")]
    assert status == 2 and len(lines) == 1, err
    assert lines[0].startswith(f"bsim: error: rank {rank}: {expected}"), lines[0]
    assert lines[0].endswith(f" (MPI_ERR_RMA_SYNC) (at {prog}:5)"), lines[0]


def test_the_class_is_err_rma_sync():
    """mpi4py's Get_error_class() of an epoch error is ERR_RMA_SYNC, also for the errors
    that existed (an operation with no epoch, Unlock of a rank not locked)."""
    def main():
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        w = MPI.Win.Allocate(8, 1, comm=comm)
        out = []
        for bad in (lambda: w.Put(bytearray(8), 1 - comm.rank), lambda: w.Unlock(0),
                    w.Sync, w.Complete):
            try:
                bad()
            except MPI.Exception as exc:
                out.append(exc.Get_error_class() == MPI.ERR_RMA_SYNC)
        w.Free()
        return out
    assert bsim.simulate(main, 2).returns == [[True] * 4] * 2


def test_operations_on_proc_null_need_no_epoch():
    """MPICH 5 accepts Put, Get and Accumulate on PROC_NULL with no epoch open (checked with
    mpiexec), and so does bsim; Lock in a fence epoch is allowed too."""
    def main():
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        w = MPI.Win.Allocate(8, 1, comm=comm)
        w.Put(bytearray(8), MPI.PROC_NULL)
        w.Get(bytearray(8), MPI.PROC_NULL)
        w.Accumulate(bytearray(8), MPI.PROC_NULL)
        w.Fence()
        w.Lock(1 - comm.rank)
        w.Unlock(1 - comm.rank)
        w.Fence()
        w.Free()
        return True
    assert bsim.simulate(main, 2).returns == [True, True]


CLASSES = ERROR_CLASS_PRELUDE + '''

def main():
    comm = MPI.COMM_WORLD
    w = MPI.Win.Allocate(64, 1, comm=comm)
    w.Set_errhandler(MPI.ERRORS_RETURN)
    g = w.Get_group()
    b = bytearray(8)
    out = {}
    if comm.rank == 0:
        out["procnull_no_epoch"] = cls(w.Put, b, MPI.PROC_NULL)
        out["flush_no_epoch"] = cls(w.Flush, 1)
        out["sync_no_epoch"] = cls(w.Sync)
        out["complete_no_start"] = cls(w.Complete)
        out["unlock_not_locked"] = cls(w.Unlock, 1)
        w.Lock(1)
        out["start_in_lock"] = cls(w.Start, g.Incl([1]))
        out["fence_in_lock"] = cls(w.Fence)
        out["lock_all_in_lock"] = cls(w.Lock_all)
        out["lock_twice"] = cls(w.Lock, 1)
        w.Unlock(1)
        w.Lock(0, MPI.LOCK_SHARED)
        w.Lock(1, MPI.LOCK_SHARED)
        out["unlock_all_after_locks"] = cls(w.Unlock_all)
        w.Unlock(0)
        w.Unlock(1)
        w.Lock_all()
        out["unlock_in_lock_all"] = cls(w.Unlock, 1)
        out["lock_in_lock_all"] = cls(w.Lock, 1)
        w.Unlock_all()
    w.Fence()
    if comm.rank == 0:
        out["flush_in_fence"] = cls(w.Flush, 1)
        out["lock_in_fence"] = cls(w.Lock, 1)
        w.Unlock(1)
    w.Fence()
    comm.Barrier()
    w.Free()
    return out
'''


@needs_mpiexec
def test_the_epoch_checks_match_mpich():
    """Every case gives the class real MPICH gives (ERR_RMA_SYNC, or no error)."""
    namespace: dict = {}
    exec(compile(CLASSES, "<classes>", "exec"), namespace)
    simulated = bsim.simulate(namespace["main"], 2).returns
    assert simulated == real_mpi_returns(2, CLASSES)
    assert simulated[0]["start_in_lock"] == "ERR_RMA_SYNC"
    assert simulated[0]["procnull_no_epoch"] == "no error"


# -- counts ---------------------------------------------------------------------------
def test_counts_include_gets_and_synchronisation_messages():
    """Lock, Put 1000 B, Unlock, Lock, Get 1000 B, Unlock: 2000 bytes (the Get's were not
    counted) in 11 messages: each lock and unlock is 2 (request and reply), the Put 1,
    the Get 2 (request and data)."""
    def main():
        import numpy as np
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        win = MPI.Win.Create(np.zeros(1000, dtype=np.uint8), 1, comm=comm)
        if comm.rank == 0:
            win.Lock(1)
            win.Put(np.full(1000, 7, dtype=np.uint8), 1)
            win.Unlock(1)
            win.Lock(1)
            win.Get(np.zeros(1000, dtype=np.uint8), 1)
            win.Unlock(1)
        win.Free()
    res = bsim.simulate(main, 2, network=NET)
    assert res.bytes.tolist() == [2000, 0]
    assert res.messages.tolist()[0] - res.messages.tolist()[1] == 11


def test_pscw_notices_are_counted():
    """Post sends one notice per origin, Complete one per target."""
    def main():
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        w = MPI.Win.Allocate(8, 1, comm=comm)
        other = w.Get_group().Incl([1 - comm.rank])
        w.Post(other)
        w.Start(other)
        w.Complete()
        w.Wait()
        w.Free()
    res = bsim.simulate(main, 2, network=NET)
    plain = bsim.simulate(_create_free, 2, network=NET)
    assert (res.messages - plain.messages).tolist() == [2, 2]


def _create_free():
    from mpi4py import MPI
    MPI.Win.Allocate(8, 1, comm=MPI.COMM_WORLD).Free()


def test_procnull_put_still_needs_nothing_on_a_freed_window_check():
    """A freed window stays an error even for PROC_NULL (ERR_WIN)."""
    def main():
        from mpi4py import MPI
        w = MPI.Win.Allocate(8, 1, comm=MPI.COMM_WORLD)
        w.Free()
        w.Put(bytearray(8), MPI.PROC_NULL)
    with pytest.raises(MPIUsageError, match="Win.Put on WIN_NULL"):
        bsim.simulate(main, 2)
