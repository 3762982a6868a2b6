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


BUFFER_FORMS = '''
import json
import numpy as np
from mpi4py import MPI


class DLPack:
    """A host array seen only through DLPack (as mpi4py's own tests wrap arrays)."""
    def __init__(self, a):
        self.a = a
    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()
    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


class CAI:
    """A host array seen only through __cuda_array_interface__ (mpi4py's test fake)."""
    def __init__(self, a):
        self.a = a
        self.__cuda_array_interface__ = {"version": 0, "typestr": a.dtype.str,
                                         "shape": a.shape, "data": (a.ctypes.data, False)}


def main():
    comm = MPI.COMM_WORLD
    r, other = comm.rank, 1 - comm.rank
    out = {}
    # displacement in datatype entries: [buf, (count, displ), type] and [buf, count, displ, type]
    src = np.arange(10, dtype="i") + 100 * r
    got = np.zeros(10, dtype="i")
    comm.Sendrecv([src, (3, 4), MPI.INT], other, 0, [got, 3, 5, MPI.INT], other, 0)
    out["displ"] = got.tolist()
    # DLPack and CUDA-interface objects as buffers
    a = np.full(4, 1.5 + r)
    b = np.zeros(4)
    comm.Sendrecv(DLPack(a), other, 1, CAI(b), other, 1)
    out["foreign"] = b.tolist()
    # None as the send buffer of a collective is IN_PLACE (mpi4py)
    c = np.array([r + 1.0, 10.0 * (r + 1)])
    comm.Allreduce(None, c, MPI.SUM)
    g = np.zeros(2, dtype="i")
    g[r] = 7 + r
    comm.Allgather(None, [g, MPI.INT])
    out["inplace"] = c.tolist() + g.tolist()
    # [None, datatype] is an empty message
    st = MPI.Status()
    comm.Sendrecv([None, MPI.INT], other, 2, [None, MPI.INT], other, 2, st)
    out["empty"] = st.Get_count(MPI.INT)
    return out
'''


def test_buffer_forms_by_hand():
    """Entries 4..6 of the peer's 0..9 (+100 r) land at entries 5..7; DLPack -> CUDA
    interface carries 1.5 + peer; None in Allreduce / Allgather works in place (sums
    1+2, 10+20; blocks 7, 8); [None, INT] moves 0 elements."""
    out = _bsim(BUFFER_FORMS, 2)
    assert out[0]["displ"] == [0, 0, 0, 0, 0, 104, 105, 106, 0, 0]
    assert out[1]["displ"] == [0, 0, 0, 0, 0, 4, 5, 6, 0, 0]
    assert out[0]["foreign"] == [2.5] * 4 and out[1]["foreign"] == [1.5] * 4
    assert out[0]["inplace"] == out[1]["inplace"] == [3.0, 30.0, 7, 8]
    assert out[0]["empty"] == out[1]["empty"] == 0


@needs_mpiexec
def test_buffer_forms_equal_real_mpi():
    code = BUFFER_FORMS + '''
out = MPI.COMM_WORLD.gather(main(), root=0)
if MPI.COMM_WORLD.rank == 0:
    print(json.dumps(out))
'''
    proc = run_mpiexec(2, code)
    assert proc.returncode == 0, proc.stderr
    real = json.loads(proc.stdout.strip().splitlines()[-1])
    assert real == _bsim(BUFFER_FORMS, 2)
