"""Executors in the ranks, run the usual ways: ``concurrent.futures.ThreadPoolExecutor``,
``bsim run -m mpi4py.futures prog.py`` (and ``-m mpi4py``), an ``MPIPoolExecutor`` fed
from a task queue, and a rank spinning on ``while not future.done(): pass``.  Expected
outputs are worked out by hand from the programs."""

from __future__ import annotations

import textwrap

import pytest

from bsim.cli.main import main as bsim_main

NET = ["--network", "hockney:latency=1e-06,bandwidth=1e9", "--protocol", "bsim"]

THREAD_POOL = """
from concurrent.futures import ThreadPoolExecutor
from mpi4py import MPI
comm = MPI.COMM_WORLD
with ThreadPoolExecutor(max_workers=2) as ex:
    res = list(ex.map(lambda x: x * x + comm.rank, range(5)))
print(comm.rank, res, comm.allreduce(sum(res)))
"""

FUTURES_MAIN = """
from mpi4py.futures import MPIPoolExecutor
def sq(x):
    return x * x
if __name__ == "__main__":
    with MPIPoolExecutor() as ex:
        print(list(ex.map(sq, range(6))))
"""

TASK_QUEUE = """
import queue
from mpi4py.futures import MPIPoolExecutor, as_completed
def work(x):
    return x, sum(i * i for i in range(x))
if __name__ == "__main__":
    tasks = queue.Queue()
    for i in range(8):
        tasks.put(i)
    out = {}
    with MPIPoolExecutor() as ex:
        futs = []
        while not tasks.empty():
            futs.append(ex.submit(work, tasks.get()))
        for f in as_completed(futs):
            k, v = f.result()
            out[k] = v
    print(sorted(out.items()))
"""

SPIN = """
from mpi4py.futures import MPIPoolExecutor
def cube(x):
    return x ** 3
if __name__ == "__main__":
    ex = MPIPoolExecutor(max_workers=1)
    f = ex.submit(cube, 5)
    while not f.done():
        pass
    print("done", f.result())
    ex.shutdown()
"""

PLAIN = """
from mpi4py import MPI
comm = MPI.COMM_WORLD
print(comm.rank, comm.allreduce(comm.rank + 1))
"""


def _run(tmp_path, capsys, source: str, *args: str) -> list[str]:
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent(source))
    argv = [a if a != "PROG" else str(prog) for a in args]
    status = bsim_main(["run", *argv, "--quiet", *NET])
    out, err = capsys.readouterr()
    assert status == 0, err
    return sorted(out.splitlines())


def test_thread_pool_executor_in_each_rank(tmp_path, capsys) -> None:
    """Before: the workers blocked the host thread in queue.SimpleQueue.get (a hang ended
    by the 60 s host-block watchdog).  Rank r: [r, 1 + r, 4 + r, 9 + r, 16 + r]; the
    allreduce over 2 ranks: (30 + 0) + (30 + 5) = 65."""
    assert _run(tmp_path, capsys, THREAD_POOL, "PROG", "-n", "2") == [
        "0 [0, 1, 4, 9, 16] 65", "1 [1, 2, 5, 10, 17] 65"]


def test_python_m_mpi4py_futures(tmp_path, capsys) -> None:
    """bsim run -m mpi4py.futures prog.py -n 3 (as mpiexec -n 3 python -m
    mpi4py.futures prog.py): rank 0 runs the script, ranks 1-2 are the shared pool.
    Before: -m was not an option, and the shared pool was one for all ranks
    (AssertionError: SharedPool is self)."""
    assert _run(tmp_path, capsys, FUTURES_MAIN, "-m", "mpi4py.futures", "PROG",
                "-n", "3") == ["[0, 1, 4, 9, 16, 25]"]


def test_task_queue_through_the_shared_pool(tmp_path, capsys) -> None:
    """A queue.Queue of tasks submitted to the pool; sum(i*i for i < x) by hand."""
    want = [(0, 0), (1, 0), (2, 1), (3, 5), (4, 14), (5, 30), (6, 55), (7, 91)]
    assert _run(tmp_path, capsys, TASK_QUEUE, "-m", "mpi4py.futures", "PROG",
                "-n", "3") == [str(want)]


def test_thread_pool_executor_imported_before_the_run(tmp_path, capsys, monkeypatch) -> None:
    """``concurrent.futures.thread`` imported before the run (by bsim's own sweep, a test,
    a notebook) has a host lock at module level that ``submit`` holds while it starts a
    worker; a rank switch there left rank 1 blocked in the host (before: 'blocked in the
    host call submit() for 60 s')."""
    import concurrent.futures.thread  # noqa: F401
    monkeypatch.setenv("BSIM_HOST_BLOCK_TIMEOUT", "10")   # a blocked host fails in 10 s
    assert _run(tmp_path, capsys, THREAD_POOL, "PROG", "-n", "2") == [
        "0 [0, 1, 4, 9, 16] 65", "1 [1, 2, 5, 10, 17] 65"]


def test_mpi4py_futures_imported_before_the_run_stays_outside_it(tmp_path, capsys) -> None:
    """The real ``mpi4py.futures`` already imported in the process (a test before, a
    notebook) is not the run's: each rank imports its own, so the shared pool is per
    rank (before: the module's name counted as shared from before the run, and the
    pool's ``assert SharedPool is self`` failed in rank 0)."""
    pytest.importorskip("mpi4py")
    import mpi4py.futures  # noqa: F401   # the real one, outside any run
    want = [(0, 0), (1, 0), (2, 1), (3, 5), (4, 14), (5, 30), (6, 55), (7, 91)]
    assert _run(tmp_path, capsys, TASK_QUEUE, "-m", "mpi4py.futures", "PROG",
                "-n", "3") == [str(want)]


@pytest.mark.parametrize("how", [["PROG", "-n", "1"],
                                 ["-m", "mpi4py.futures", "PROG", "-n", "2"]])
def test_spinning_on_done_advances(tmp_path, capsys, how: list[str]) -> None:
    """``while not f.done(): pass`` polls (the future's lock, taken in a row at one clock)
    so the pool's contexts run; before it never ended."""
    assert _run(tmp_path, capsys, SPIN, *how) == ["done 125"]


def test_python_m_mpi4py(tmp_path, capsys) -> None:
    """bsim run -m mpi4py prog.py: mpi4py's runner (before: the shim had no __spec__,
    runpy refused it).  allreduce(rank + 1) over 2 ranks = 3."""
    assert _run(tmp_path, capsys, PLAIN, "-m", "mpi4py", "PROG", "-n", "2") == [
        "0 3", "1 3"]


EVENT_SPIN = """
import threading
import time
from mpi4py import MPI

ev = threading.Event()


def setter():
    time.sleep(0.001)
    ev.set()


t = threading.Thread(target=setter)
t.start()
while not ev.is_set():
    pass
t.join()
print(MPI.COMM_WORLD.rank, "set", MPI.Wtime() >= 0.001)
"""


def test_spinning_on_event_is_set_advances(tmp_path, capsys) -> None:
    """``while not event.is_set(): pass`` (no lock taken) polls as well, so the thread that
    sets the event after 1 ms of simulated sleep runs; before it never ended."""
    assert _run(tmp_path, capsys, EVENT_SPIN, "PROG", "-n", "2") == ["0 set True",
                                                                     "1 set True"]
