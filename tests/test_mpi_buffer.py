"""MPI.buffer shares the memory it is made from, as mpi4py's: the same program under real
mpiexec and under bsim gives the same values."""

from __future__ import annotations

import json

from conftest import needs_mpiexec, real_mpi_returns

import bsim

PROGRAM = '''
import array
from mpi4py import MPI


def errors(fn):
    try:
        fn()
    except Exception as exc:
        return type(exc).__name__
    return "no error"


def main():
    out = {}
    obj = array.array("B", [1, 2, 3])
    buf = MPI.buffer.frombuffer(obj)
    buf[:] = 9
    buf[1:] = b"ab"
    out["shared"] = list(obj)
    out["props"] = [buf.nbytes, buf.readonly, buf.format, buf.itemsize, len(buf),
                    buf.address == obj.buffer_info()[0], buf.obj is obj]
    ro = MPI.buffer(b"xyz")
    out["readonly"] = [ro.readonly, errors(lambda: ro.__setitem__(0, 1)),
                       buf.toreadonly().readonly]
    mem = MPI.Alloc_mem(8)
    out["alloc"] = [type(mem).__name__, mem.address != 0, mem.nbytes, mem[0]]
    ints = mem.cast("i")
    ints[0], ints[1] = 7, 8
    out["cast"] = list(mem.cast("i", (2,)))
    out["sequence"] = [errors(lambda: mem[8]), errors(lambda: mem[::2]),
                       errors(lambda: mem[None]), errors(lambda: mem.__delitem__(0))]
    MPI.COMM_WORLD.Bcast([mem, MPI.BYTE], root=0)
    MPI.Free_mem(mem)
    out["freed"] = [mem.address, mem.nbytes, mem.readonly]
    empty = MPI.buffer()
    out["empty"] = [empty.address, empty.obj is None, empty.nbytes,
                    errors(lambda: MPI.buffer(None)), errors(lambda: MPI.buffer([]))]
    return out
'''


def _simulate(ranks: int) -> bsim.Result:
    namespace: dict = {}
    exec(compile(PROGRAM, "<program>", "exec"), namespace)
    return bsim.simulate(namespace["main"], ranks)


def test_buffer_by_hand():
    out = _simulate(2).returns[0]
    assert out["shared"] == [9, 97, 98]              # writes go to the array's memory
    assert out["props"] == [3, False, "B", 1, 3, True, True]
    assert out["readonly"] == [True, "TypeError", True]
    assert out["alloc"] == ["buffer", True, 8, 0]
    assert out["cast"] == [7, 8]
    assert out["sequence"] == ["IndexError", "IndexError", "TypeError", "NotImplementedError"]
    assert out["freed"] == [0, 0, False]
    assert out["empty"] == [0, True, 0, "TypeError", "TypeError"]


@needs_mpiexec
def test_buffer_equals_real_mpi():
    assert real_mpi_returns(2, PROGRAM) == json.loads(json.dumps(_simulate(2).returns))
