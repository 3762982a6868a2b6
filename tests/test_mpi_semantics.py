"""Values as MPI defines them: the same program under real mpiexec and under bsim."""

from __future__ import annotations

import json

import numpy as np
from conftest import needs_mpiexec, run_mpiexec

import bsim

REDUCE_SCATTER_UNEQUAL = '''
import json
import numpy as np
from mpi4py import MPI


def main():
    comm = MPI.COMM_WORLD
    r = comm.rank
    send = np.arange(6, dtype="d") + 10 * r
    recv = np.zeros(r + 1)                  # 1, 2, 3 elements: unequal counts
    comm.Reduce_scatter(send, recv, recvcounts=None, op=MPI.SUM)
    return recv.tolist()
'''


def _bsim(code: str, ranks: int) -> list:
    namespace: dict = {}
    exec(compile(code, "<program>", "exec"), namespace)
    return bsim.simulate(namespace["main"], ranks).returns


def test_reduce_scatter_without_counts_by_hand():
    """recvcounts=None: each rank receives as many elements as its receive buffer holds
    (mpi4py gathers them): the sums 30, 33, ..., 45 split 1 / 2 / 3."""
    assert _bsim(REDUCE_SCATTER_UNEQUAL, 3) == [[30.0], [33.0, 36.0], [39.0, 42.0, 45.0]]


@needs_mpiexec
def test_reduce_scatter_without_counts_equals_real_mpi():
    code = REDUCE_SCATTER_UNEQUAL + '''
out = MPI.COMM_WORLD.gather(main(), root=0)
if MPI.COMM_WORLD.rank == 0:
    print(json.dumps(out))
'''
    proc = run_mpiexec(3, code)
    assert proc.returncode == 0, proc.stderr
    real = json.loads(proc.stdout.strip().splitlines()[-1])
    assert real == _bsim(REDUCE_SCATTER_UNEQUAL, 3)
    assert np.allclose(sum(real, []), [30, 33, 36, 39, 42, 45])


def test_a_freed_communicator_equals_comm_null_for_the_rank_that_freed_it():
    """mpi4py sets a handle to COMM_NULL on Free(): ``comm == COMM_NULL`` afterwards, falsy;
    a rank that has not freed its handle still sees a communicator."""
    def main():
        from mpi4py import MPI
        world = MPI.COMM_WORLD
        dup = world.Dup()
        before = (dup == MPI.COMM_NULL, bool(dup))
        if world.rank == 0:
            dup.Free()
        after = (dup == MPI.COMM_NULL, dup != MPI.COMM_NULL, bool(dup))
        world.Barrier()
        return before, after, dup == world

    out = bsim.simulate(main, 2).returns
    assert out[0] == ((False, True), (True, False, False), False)
    assert out[1] == ((False, True), (False, True, True), False)
