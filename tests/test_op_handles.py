"""Reduction operations as mpi4py has them, under real mpiexec and under bsim: null and
copied handles, pickling, predefined-ness, the 32-operation limit, Reduce_local."""

from __future__ import annotations

import json
import sys
import types

from conftest import needs_mpiexec, real_mpi_returns

import bsim

PROGRAM = '''
import array
import pickle
from mpi4py import MPI


def add3(a, b, dt):
    if dt is None:
        for i in range(len(a)):
            b[i] = a[i] + b[i]
        return b
    x = memoryview(a).cast("i")
    y = memoryview(b).cast("i")
    for i in range(len(y)):
        y[i] = x[i] + y[i]


def main():
    out = {}
    out["null"] = [bool(MPI.Op()), MPI.Op() == MPI.OP_NULL, MPI.Op(MPI.SUM) == MPI.SUM,
                   pickle.loads(pickle.dumps(MPI.MAX)) is MPI.MAX,
                   pickle.loads(pickle.dumps(MPI.Op(MPI.MAX))) == MPI.MAX,
                   MPI.SUM.is_predefined, MPI.OP_NULL.is_predefined]
    mine = MPI.Op.Create(add3, True)
    other = pickle.loads(pickle.dumps(mine))
    out["user"] = [mine.is_predefined, other == mine, other.Is_commutative(),
                   list(other(array.array("i", [1, 2]), array.array("i", [10, 20])))]
    a = array.array("i", [1, 2, 3])
    b = array.array("i", [10, 20, 30])
    MPI.SUM.Reduce_local([a, MPI.INT], [b, MPI.INT])
    mine.Reduce_local([a, MPI.INT], [b, MPI.INT])
    out["local"] = list(b)
    try:
        MPI.SUM.Reduce_local([a, 2, MPI.INT], [b, 3, MPI.INT])
        out["mismatch"] = "no error"
    except ValueError:
        out["mismatch"] = "ValueError"
    ops = [MPI.Op.Create(add3) for _ in range(30)]   # with mine and other: 32 live
    try:
        MPI.Op.Create(add3)
        out["limit"] = "no error"
    except RuntimeError:
        out["limit"] = "RuntimeError"
    for op in ops + [mine, other]:
        op.Free()
    out["freed"] = mine == MPI.OP_NULL
    return out
'''


def _simulate(ranks: int) -> bsim.Result:
    # a module pickle can find add3 in (the program is __main__ under mpiexec)
    module = types.ModuleType("bsim_test_op_program")
    sys.modules[module.__name__] = module
    try:
        exec(compile(PROGRAM, "<program>", "exec"), module.__dict__)
        return bsim.simulate(module.main, ranks)
    finally:
        del sys.modules[module.__name__]


def test_ops_by_hand():
    outs = _simulate(2).returns
    assert outs[0] == outs[1]      # the limit counts each rank's operations, not the run's
    out = outs[0]
    assert out["null"] == [False, True, True, True, True, True, True]
    assert out["user"] == [False, False, True, [11, 22]]
    assert out["local"] == [12, 24, 36]     # 10 + 1 + 1, ...
    assert out["mismatch"] == "ValueError" and out["limit"] == "RuntimeError"
    assert out["freed"]


@needs_mpiexec
def test_ops_equal_real_mpi():
    assert real_mpi_returns(2, PROGRAM) == json.loads(json.dumps(_simulate(2).returns))


def test_operations_not_freed_do_not_leak_into_the_next_run():
    """The limit of 32 live user operations is per rank of one run: a run that leaves 20
    unfreed does not make the next run's 20 fail (they lived in that run's ranks)."""
    from bsim import MPI

    def main():
        return len([MPI.Op.Create(lambda a, b, dt=None: b) for _ in range(20)])

    assert bsim.simulate(main, 2).returns == [20, 20]
    assert bsim.simulate(main, 2).returns == [20, 20]
