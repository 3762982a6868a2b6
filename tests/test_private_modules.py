"""Each virtual rank its own copy of the program's own modules (bsim/engine/private_modules.py).

The same program under real mpiexec and under bsim: a module-level list that
each rank appends to holds only that rank's entries, as in separate processes.
"""

from __future__ import annotations

import json
import sys
import textwrap

import pytest
from conftest import needs_mpiexec, run_mpiexec

import bsim

COUNTER = textwrap.dedent("""
    hits = []

    class Token:
        def __init__(self, rank):
            self.rank = rank

    def bump(x):
        hits.append(x)
        return len(hits)
""")

PROGRAM = textwrap.dedent("""
    import json
    from mpi4py import MPI
    import pm_counter

    def main():
        comm = MPI.COMM_WORLD
        for _ in range(3):
            pm_counter.bump(comm.rank)
            comm.Barrier()
        # an instance of a class of the private module crosses to the next rank
        got = comm.sendrecv(pm_counter.Token(comm.rank), dest=(comm.rank + 1) % comm.size,
                            source=(comm.rank - 1) % comm.size)
        return [pm_counter.hits, got.rank, isinstance(got, pm_counter.Token)]
""")


@pytest.fixture
def program(tmp_path, monkeypatch):
    (tmp_path / "pm_counter.py").write_text(COUNTER)
    (tmp_path / "pm_prog.py").write_text(PROGRAM)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in ("pm_counter", "pm_prog"):
        sys.modules.pop(name, None)


def _main():
    import importlib
    return importlib.import_module("pm_prog").main()


def test_each_rank_has_its_own_module_state(program):
    out = bsim.simulate(_main, 3).returns
    assert out == [[[0, 0, 0], 2, True], [[1, 1, 1], 0, True], [[2, 2, 2], 1, True]]
    assert "pm_counter" not in sys.modules and "pm_prog" not in sys.modules   # the run's own


def test_shared_modules_on_request(program):
    out = bsim.simulate(_main, 3, private_modules=False).returns
    assert all(o[0] == [0, 1, 2] * 3 for o in out)


def test_modules_imported_before_the_run_and_installed_ones_stay_shared(program):
    import pm_counter  # imported before simulate: shared by every rank
    pm_counter.hits.clear()

    def main():
        import numpy
        import pm_counter as m
        from mpi4py import MPI
        m.bump(MPI.COMM_WORLD.rank)
        MPI.COMM_WORLD.Barrier()
        return id(m), id(numpy), len(m.hits)

    out = bsim.simulate(main, 3).returns
    assert len({o[0] for o in out}) == 1 and len({o[1] for o in out}) == 1
    assert all(o[2] == 3 for o in out)


@needs_mpiexec
def test_equals_real_mpi(program):
    code = f"import sys; sys.path.insert(0, {str(program)!r})\n" + PROGRAM + textwrap.dedent("""
        out = MPI.COMM_WORLD.gather(main(), root=0)
        if MPI.COMM_WORLD.rank == 0:
            print(json.dumps(out))
    """)
    proc = run_mpiexec(3, code)
    assert proc.returncode == 0, proc.stderr
    real = json.loads(proc.stdout.strip().splitlines()[-1])
    assert real == bsim.simulate(_main, 3).returns
