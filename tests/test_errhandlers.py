"""Error handlers (bsim/mpi/common/errhandlers.py): mpi4py's handle rules and MPI's inheritance."""

from __future__ import annotations

import pickle

import pytest

import bsim
from bsim import MPI


def test_get_set_free_and_inheritance_per_rank():
    def main():
        w = MPI.COMM_WORLD
        first = w.Get_errhandler()
        default_is_return = first == MPI.ERRORS_RETURN and first is not MPI.ERRORS_RETURN
        if w.rank == 0:
            w.Set_errhandler(MPI.ERRORS_ARE_FATAL)
        dup = w.Dup()
        got = dup.Get_errhandler()
        same = got == (MPI.ERRORS_ARE_FATAL if w.rank == 0 else MPI.ERRORS_RETURN)
        got.Free()
        first.Free()
        return default_is_return, same, got == MPI.ERRHANDLER_NULL, bool(got)

    assert bsim.simulate(main, 2).returns == [(True, True, True, False)] * 2


def test_user_handler_called_and_fatal_ends_the_run():
    seen = []

    def main():
        w = MPI.COMM_WORLD
        eh = MPI.Intracomm.Create_errhandler(lambda comm, code: seen.append((comm.rank, code)))
        w.Set_errhandler(eh)
        w.Call_errhandler(MPI.ERR_OTHER)
        w.Set_errhandler(MPI.ERRORS_RETURN)
        w.Call_errhandler(MPI.ERR_OTHER)      # returns: nothing happens
        eh.Free()
        return eh == MPI.ERRHANDLER_NULL

    assert bsim.simulate(main, 2).returns == [True, True]
    assert sorted(seen) == [(0, MPI.ERR_OTHER), (1, MPI.ERR_OTHER)]

    def fatal():
        MPI.COMM_WORLD.Set_errhandler(MPI.ERRORS_ARE_FATAL)
        MPI.COMM_WORLD.Call_errhandler(MPI.ERR_OTHER)

    with pytest.raises(bsim.SimulationError, match="ERRORS_ARE_FATAL"):
        bsim.simulate(fatal, 1)


def test_handles_pickle_as_mpi4py():
    assert pickle.loads(pickle.dumps(MPI.ERRORS_RETURN)) is MPI.ERRORS_RETURN
    copy = MPI.Errhandler(MPI.ERRORS_RETURN)
    back = pickle.loads(pickle.dumps(copy))
    assert back == MPI.ERRORS_RETURN and back is not MPI.ERRORS_RETURN
    assert MPI.Errhandler.fromint(MPI.ERRORS_ARE_FATAL.toint()) == MPI.ERRORS_ARE_FATAL
    assert not MPI.ERRHANDLER_NULL and MPI.ERRORS_ABORT


def test_mpi_exception_accessors():
    def main():
        try:
            MPI.COMM_WORLD.send(1, dest=5)
        except MPI.Exception as exc:
            return exc.Get_error_class(), exc.Get_error_code(), "dest" in exc.Get_error_string()

    # MPI 4.1, section 9.4: an invalid rank is ERR_RANK (MPICH: class 6, code 6)
    assert bsim.simulate(main, 1).returns == [(MPI.ERR_RANK, MPI.ERR_RANK, True)]
