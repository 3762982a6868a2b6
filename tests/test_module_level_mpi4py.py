"""A program whose module imports mpi4py at the top, as real applications do.

Before ``bsim.simulate`` runs it, its ``MPI`` is the real mpi4py module; inside the
simulation it must be bsim's (every virtual rank its own), never silently real.
"""

from __future__ import annotations

import importlib
import sys
import textwrap

import pytest

import bsim

mpi4py = pytest.importorskip("mpi4py.MPI")


def _module(tmp_path, name, body):
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(body))
    sys.path.insert(0, str(tmp_path))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(tmp_path))


def test_module_level_import_is_bsims_during_the_run_and_restored_after(tmp_path):
    app = _module(tmp_path, "app_top_import", """
        from mpi4py import MPI

        def main():
            comm = MPI.COMM_WORLD
            comm.Barrier()
            return comm.Get_rank(), comm.Get_size()
    """)
    real = app.MPI
    assert real is sys.modules["mpi4py.MPI"] and real is not bsim.MPI
    res = bsim.simulate(app.main, 4)
    assert res.returns == [(0, 4), (1, 4), (2, 4), (3, 4)]
    assert app.MPI is real      # restored: the module works under real MPI afterwards


def test_a_real_communicator_made_at_import_is_refused_naming_it(tmp_path):
    app = _module(tmp_path, "app_top_comm", """
        from mpi4py import MPI
        comm = MPI.COMM_WORLD

        def main():
            return comm.Get_rank()
    """)
    with pytest.raises(ValueError, match=r"app_top_comm.comm is a real mpi4py object "
                                         r"\(Intracomm\).*comm = MPI.COMM_WORLD in main"):
        bsim.simulate(app.main, 4)
