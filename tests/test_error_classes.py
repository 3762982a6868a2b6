"""Error classes: an erroneous call raises MPI.Exception with MPI's error class, as under
real MPI (mpi4py + MPICH), and bsim's table of classes agrees with mpi4py's numbers."""

from __future__ import annotations

from conftest import ERROR_CLASS_PRELUDE, needs_mpiexec, real_mpi_returns

import bsim
from bsim import MPI, constants

PROGRAM = ERROR_CLASS_PRELUDE + '''

def main():
    MPI.COMM_SELF.Set_errhandler(MPI.ERRORS_RETURN)
    info = MPI.Info.Create()
    out = {
        "comm_null_size": cls(MPI.COMM_NULL.Get_size),
        "comm_null_compare": cls(MPI.Comm.Compare, MPI.COMM_NULL, MPI.COMM_WORLD),
        "comm_null_free": cls(MPI.COMM_NULL.Free),
        "keyval_invalid": cls(MPI.COMM_WORLD.Get_attr, MPI.KEYVAL_INVALID),
        "group_null_size": cls(MPI.GROUP_NULL.Get_size),
        "datatype_null_dup": cls(MPI.DATATYPE_NULL.Dup),
        "datatype_predefined_free": cls(MPI.INT.Free),
        "status_null_type": cls(MPI.Status().Get_count, MPI.DATATYPE_NULL),
        "op_predefined_free": cls(MPI.SUM.Free),
        "request_null_free": cls(MPI.REQUEST_NULL.Free),
        "info_null_get": cls(MPI.INFO_NULL.Get, "k"),
        "info_delete_missing": cls(info.Delete, "k"),
        "errhandler_null_set": cls(MPI.COMM_SELF.Set_errhandler, MPI.ERRHANDLER_NULL),
    }
    info.Free()
    return out
'''

# where mpi4py's own suite accepts either class (MPICH gives the second), bsim gives the
# class the MPI standard names for the object (ERR_INFO for an invalid info, ...)
ALLOWED = {"keyval_invalid": {"ERR_KEYVAL", "ERR_OTHER"},
           "errhandler_null_set": {"ERR_ERRHANDLER", "ERR_ARG"},
           "info_null_get": {"ERR_INFO", "ERR_ARG"}}


def _simulate(ranks: int) -> bsim.Result:
    namespace: dict = {}
    exec(compile(PROGRAM, "<program>", "exec"), namespace)
    return bsim.simulate(namespace["main"], ranks)


def test_error_classes_by_name():
    out = _simulate(1).returns[0]
    assert out == {
        "comm_null_size": "ERR_COMM", "comm_null_compare": "ERR_COMM",
        "comm_null_free": "ERR_COMM", "keyval_invalid": "ERR_KEYVAL",
        "group_null_size": "ERR_GROUP", "datatype_null_dup": "ERR_TYPE",
        "datatype_predefined_free": "ERR_TYPE", "status_null_type": "ERR_TYPE",
        "op_predefined_free": "ERR_OP", "request_null_free": "ERR_REQUEST",
        "info_null_get": "ERR_ARG", "info_delete_missing": "ERR_INFO_NOKEY",
        "errhandler_null_set": "ERR_ERRHANDLER"}


def test_the_constants_are_mpi4pys_numbers():
    for name in ("ERR_TYPE", "ERR_COMM", "ERR_GROUP", "ERR_OP", "ERR_ARG", "ERR_REQUEST",
                 "ERR_INFO", "ERR_INFO_KEY", "ERR_INFO_VALUE", "ERR_INFO_NOKEY", "ERR_KEYVAL",
                 "ERR_ERRHANDLER", "ERR_OTHER"):
        assert getattr(constants, name) == getattr(MPI, name), name


@needs_mpiexec
def test_error_classes_equal_real_mpi():
    real = real_mpi_returns(1, PROGRAM)[0]
    sim = _simulate(1).returns[0]
    for key, value in real.items():
        assert sim[key] == value or {sim[key], value} <= ALLOWED.get(key, set()), key
