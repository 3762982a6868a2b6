"""mpi4py's pure-Python utilities (``mpi4py.util``) run on bsim's MPI inside a simulation.

``from mpi4py.util import pkl5`` inside a simulation loads mpi4py's own module bound to
bsim's ``MPI``; after the run ``sys.modules`` holds what it held before, so real MPI
code outside the simulation is untouched. Values are checked by hand and against
real ``mpiexec``; the messages pkl5 makes (a header, the pickle, each large buffer)
are counted.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from conftest import needs_mpiexec, real_mpi_returns

import bsim

pytest.importorskip("mpi4py")

PROGRAM = '''
import json
import numpy as np
from mpi4py import MPI
from mpi4py.util import pkl5


def main():
    comm = pkl5.Intracomm(MPI.COMM_WORLD)
    rank, size = comm.Get_rank(), comm.Get_size()
    out = {}
    big = np.arange(100_000, dtype="i4") * (rank + 1)        # 400 kB: out of band
    if rank == 0:
        comm.send({"small": [1, 2.5, "x"], "big": big}, dest=1, tag=7)
    elif rank == 1:
        got = comm.recv(source=0, tag=7)
        out["p2p"] = [got["small"], int(got["big"].sum()), got["big"].dtype.str]
    req = comm.isend(rank * 10, dest=(rank + 1) % size, tag=3)
    out["ring"] = comm.recv(source=(rank - 1) % size, tag=3)
    req.wait()
    out["bcast"] = comm.bcast({"root": 0, "n": 5} if rank == 0 else None, root=0)
    out["gather"] = comm.gather(rank ** 2, root=0)
    out["scatter"] = comm.scatter([f"item{i}" for i in range(size)] if rank == 0 else None,
                                  root=0)
    out["allgather"] = comm.allgather(rank + 100)
    out["alltoall"] = comm.alltoall([(rank, j) for j in range(size)])
    return json.loads(json.dumps(out))
'''


def _simulate(ranks: int = 3) -> bsim.Result:
    namespace: dict = {}
    exec(compile(PROGRAM, "<program>", "exec"), namespace)
    return bsim.simulate(namespace["main"], ranks)


def test_pkl5_values_by_hand():
    returns = _simulate().returns
    assert returns[1]["p2p"] == [[1, 2.5, "x"], sum(range(100_000)), "<i4"]
    assert [r["ring"] for r in returns] == [20, 0, 10]
    assert all(r["bcast"] == {"root": 0, "n": 5} for r in returns)
    assert returns[0]["gather"] == [0, 1, 4] and returns[1]["gather"] is None
    assert [r["scatter"] for r in returns] == ["item0", "item1", "item2"]
    assert all(r["allgather"] == [100, 101, 102] for r in returns)
    assert [r["alltoall"] for r in returns] == [[[j, i] for j in range(3)] for i in range(3)]


def test_pkl5_sends_the_header_the_pickle_and_each_large_buffer_as_messages():
    """pkl5's send of one object with one out-of-band buffer is three messages: the
    header (two 8-byte lengths), the pickle (under 1 kB here) and the 400 kB buffer."""
    def main():
        from mpi4py import MPI
        from mpi4py.util import pkl5
        comm = pkl5.Intracomm(MPI.COMM_WORLD)
        if comm.Get_rank() == 0:
            comm.send(np.zeros(50_000), dest=1)
        else:
            return comm.recv(source=0).nbytes
    result = bsim.simulate(main, 2)
    assert result.returns[1] == 400_000
    assert result.total_messages == 3
    assert 400_000 + 16 < result.total_bytes < 400_000 + 16 + 1_000


def test_sys_modules_is_restored_after_the_run():
    before = {k: v for k, v in sys.modules.items() if k.startswith("mpi4py")}
    _simulate(2)
    after = {k: v for k, v in sys.modules.items() if k.startswith("mpi4py")}
    assert after == before


@needs_mpiexec
def test_pkl5_equals_real_mpi():
    real = real_mpi_returns(3, PROGRAM)
    assert real == _simulate(3).returns
    assert np.isclose(real[1]["p2p"][1], sum(range(100_000)))


FUTURES = """
import math
import operator
from mpi4py import MPI
from mpi4py.futures import MPICommExecutor, MPIPoolExecutor
from mpi4py.util.pool import Pool

def main():
    out = []
    if MPI.COMM_WORLD.rank == 0:                 # workers spawned for this rank alone
        with MPIPoolExecutor(max_workers=2) as ex:
            out.append(list(ex.map(pow, [2, 3, 4], [5, 5, 5])))
            out.append(ex.submit(math.factorial, 6).result())
        with Pool(2) as pool:
            out.append(pool.starmap(operator.mul, [(1, 2), (3, 4)]))
    with MPICommExecutor(MPI.COMM_WORLD, root=0) as ex:   # the world's other ranks work
        if ex is not None:
            out.append(list(ex.map(abs, [-1, -2, 3])))
    return out
"""


@pytest.mark.parametrize("ranks", [1, 3])
def test_mpi4py_futures_runs_its_tasks_on_spawned_and_world_ranks(ranks):
    from conftest import simulated_returns
    got = simulated_returns(ranks, FUTURES, as_json=True)
    assert got[0] == [[32, 243, 1024], 720, [2, 12], [1, 2, 3]]
    assert got[1:ranks] == [[]] * (ranks - 1)


@needs_mpiexec
def test_mpi4py_futures_gives_what_real_mpi_gives():
    from conftest import simulated_returns
    assert simulated_returns(3, FUTURES, as_json=True)[:3] == real_mpi_returns(3, FUTURES)


def test_a_pool_runs_tasks_in_simulated_time():
    """Six tasks of 0.5 s on two spawned workers: three rounds, 1.5 s, plus the messages
    (microseconds on the default network) and the client's polling: mpi4py.futures polls
    with a back-off of up to 1 ms (``BACKOFF``), which ``time.sleep`` spends in simulated
    time, so each round may be seen up to 1 ms late.  The workers are ranks 1 and 2."""
    def main():
        from mpi4py.futures import MPIPoolExecutor
        with MPIPoolExecutor(max_workers=2) as ex:
            list(ex.map(bsim.add_time, [0.5] * 6))
        return bsim.MPI.Wtime()

    res = bsim.simulate(main, 1)
    assert res.ranks == 3 and 1.5 < res.returns[0] < 1.5 + 3 * 1e-3 + 1e-4
    assert sorted(res.calc[1:]) == pytest.approx([1.5, 1.5])


def test_host_level_helpers_are_the_real_packages():
    """mpi4py.get_include() and mpi4py.profile touch no MPI: inside a run they are the
    installed package's (the same include directory); MPI.Is_thread_main() is True on the
    thread every rank runs on."""
    import mpi4py as real

    def main():
        import mpi4py
        from mpi4py import MPI
        return mpi4py.get_include(), callable(mpi4py.profile), MPI.Is_thread_main()

    assert bsim.simulate(main, 1).returns == [(real.get_include(), True, True)]


def test_the_package_inside_a_run_has_the_installed_packages_file():
    """mpi4py.__file__ names the installed package's __init__.py (its typing stubs and
    headers sit beside it), as programs and mpi4py's own tests expect."""
    import mpi4py as real

    def main():
        import mpi4py
        return mpi4py.__file__

    assert bsim.simulate(main, 1).returns == [real.__file__]
