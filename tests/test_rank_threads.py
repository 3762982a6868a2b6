"""Python threads of a rank making MPI calls (``bsim/engine/rank_threads.py``): the same
program under real mpiexec and bsim, and the timing rules by hand."""

from __future__ import annotations

import threading

import pytest
from conftest import needs_mpiexec, real_mpi_returns, simulated_returns

import bsim
from bsim import MPI
from bsim.errors import DeadlockError

PROGRAM = """
import queue
import threading
from mpi4py import MPI

def main():
    comm = MPI.COMM_WORLD
    rank, size = comm.rank, comm.size
    got = {}

    def receiver():                       # a thread receives while the main thread sends
        got["ring"] = comm.recv(source=(rank - 1) % size, tag=7)
        got["name"] = threading.current_thread().name

    t = threading.Thread(target=receiver, name="rx")
    t.start()
    comm.send(rank * 10, dest=(rank + 1) % size, tag=7)
    t.join()
    tasks, results = queue.Queue(), queue.Queue()
    dup = comm.Dup()

    def worker():                         # collectives from a worker thread
        while (item := tasks.get()) is not None:
            results.put(dup.allreduce(item))

    w = threading.Thread(target=worker)
    w.start()
    for i in range(3):
        tasks.put(rank + i)
    tasks.put(None)
    w.join()
    sums = [results.get() for _ in range(3)]
    lock, counter = threading.Lock(), [0]

    def add():
        for _ in range(100):
            with lock:
                counter[0] += 1

    adders = [threading.Thread(target=add) for _ in range(4)]
    for a in adders:
        a.start()
    for a in adders:
        a.join()
    ready = threading.Event()
    threading.Thread(target=ready.set).start()
    ready.wait()
    dup.Free()
    return [got["ring"], got["name"], sums, counter[0], ready.is_set(),
            threading.current_thread() is threading.main_thread(), t.is_alive()]
"""


def _expected(size: int, rank: int) -> list:
    """From the program's text: what MPI says each rank returns."""
    total = size * (size - 1) // 2
    return [((rank - 1) % size) * 10, "rx", [total + i * size for i in range(3)], 400,
            True, True, False]


@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_threads_of_a_rank_make_mpi_calls(ranks: int):
    assert simulated_returns(ranks, PROGRAM, as_json=True) == [
        _expected(ranks, r) for r in range(ranks)]


@needs_mpiexec
@pytest.mark.parametrize("ranks", [2, 3])
def test_equal_real_mpi(ranks: int):
    assert simulated_returns(ranks, PROGRAM, as_json=True) == real_mpi_returns(ranks, PROGRAM)


def test_a_thread_overlaps_the_main_threads_computation(hockney_spec: str):
    """Rank 0's thread receives what rank 1 sends at t = 0.5 (1000 bytes: l + s/w = 3 us)
    while rank 0's main thread computes 1 s: the thread's receive ends at 0.5 + 3 us, the
    rank at 1 s (its join waits for nothing).  A thread computing 2 s that the main thread
    never joins still holds the rank until it ends (the interpreter waits at exit); a
    daemon thread does not."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 1:
            bsim.add_time(0.5)
            comm.Send(bsim.buffer(1000, MPI.BYTE), dest=0)
            return None
        seen = []

        def rx():
            comm.Recv(bsim.buffer(1000, MPI.BYTE), source=1)
            seen.append(MPI.Wtime())

        t = threading.Thread(target=rx)
        t.start()
        bsim.add_time(1.0)
        t.join()
        threading.Thread(target=bsim.add_time, args=(2.0,)).start()
        threading.Thread(target=bsim.add_time, args=(5.0,), daemon=True).start()
        return seen[0], MPI.Wtime()

    res = bsim.simulate(main, 2, network=hockney_spec)
    received, after_join = res.returns[0]
    assert received == pytest.approx(0.5 + 2e-6 + 1000 / 1e9)
    assert after_join == pytest.approx(1.0)
    assert res.finish[0] == pytest.approx(3.0)      # the non-daemon 2 s thread, from t = 1
    assert res.ops[0] >= 1                          # the thread's receive counts for rank 0


def test_a_contended_lock_waits_in_simulated_time():
    """A thread takes the lock at t = 0 and computes 1 s holding it; the main thread asks
    at t = 0.25 and gets it at 1 s: 0.75 s of wait."""
    def main():
        lock = threading.Lock()
        held = threading.Event()

        def holder():
            with lock:
                held.set()
                bsim.add_time(1.0)

        t = threading.Thread(target=holder)
        t.start()
        held.wait()
        bsim.add_time(0.25)
        before = MPI.Wtime()
        with lock:
            got = MPI.Wtime()
        t.join()
        return before, got, lock.acquire(timeout=0.5)

    res = bsim.simulate(main, 1)
    before, got, again = res.returns[0]
    assert (before, got, again) == (pytest.approx(0.25), pytest.approx(1.0), True)
    assert res.wait[0] == pytest.approx(0.75)


def test_a_lock_timeout_is_in_simulated_seconds():
    def main():
        lock = threading.Lock()
        lock.acquire()
        got = []
        t = threading.Thread(target=lambda: got.append((lock.acquire(timeout=0.5),
                                                        MPI.Wtime())))
        t.start()
        t.join()
        return got[0]

    assert bsim.simulate(main, 1).returns[0] == (False, pytest.approx(0.5))


def test_threads_waiting_forever_end_in_a_deadlock_report_naming_them():
    def main():
        never = threading.Event()
        t = threading.Thread(target=never.wait, name="waiter")
        t.start()
        t.join()

    with pytest.raises(DeadlockError, match=r"1 of 1 ranks blocked(.|\n)*in thread waiter"):
        bsim.simulate(main, 1)
    assert threading.Lock is not None and threading.get_ident() == threading.main_thread().ident


def test_sleep_spends_simulated_time_and_locals_are_per_rank_and_thread():
    """``time.sleep(0.25)`` in a rank: 0.25 s of simulated wait, no host time to speak of;
    a ``threading.local`` set by each rank's main thread is not seen by its thread (a new
    namespace) nor by the other rank."""
    import time

    def main():
        local = threading.local()
        local.x = MPI.COMM_WORLD.rank
        seen = []

        def peek():
            seen.append(getattr(local, "x", None))
            local.x = "thread"

        t = threading.Thread(target=peek)
        t.start()
        t.join()
        t0 = MPI.Wtime()
        time.sleep(0.25)
        return local.x, seen, MPI.Wtime() - t0

    start = time.monotonic()
    res = bsim.simulate(main, 2)
    assert time.monotonic() - start < 0.25 * 2
    assert res.returns == [(0, [None], pytest.approx(0.25)), (1, [None], pytest.approx(0.25))]
    assert list(res.wait) == [pytest.approx(0.25)] * 2
