"""Every name of mpi4py's MPI module exists in bsim's: programs import; the families bsim
does not simulate raise NotSimulatedError, naming the call and why, only where used."""

from __future__ import annotations

import pytest

import bsim
from bsim import MPI
from bsim.errors import MPIUsageError
from bsim.mpi.common.namespace import NotSimulatedError, is_stand_in


def test_every_public_name_of_mpi4py_exists():
    real = pytest.importorskip("mpi4py.MPI")
    missing = [n for n in dir(real) if not n.startswith("_") and not hasattr(MPI, n)]
    assert missing == []


def test_constants_and_datatypes_are_usable():
    """Fortran and sized datatypes carry their sizes; constants are distinct ints."""
    assert MPI.INTEGER.Get_size() == 4 and MPI.DOUBLE_PRECISION.Get_size() == 8
    assert MPI.COMPLEX16.Get_size() == 16
    with pytest.raises(MPI.Exception) as err:   # as under MPICH: the null datatype has no size
        MPI.DATATYPE_NULL.Get_size()
    assert err.value.Get_error_class() == MPI.ERR_TYPE
    assert isinstance(MPI.ERR_ARG, int) and MPI.ERR_ARG != MPI.ERR_RANK
    assert MPI.get_vendor()[0] == "bsim"

    def main():
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        out = bsim.buffer(4, MPI.INTEGER)
        comm.Allreduce(bsim.buffer(4, MPI.INTEGER), out)
        return MPI.INTEGER.Get_size()

    assert bsim.simulate(main, 4).returns == [4] * 4


@pytest.mark.parametrize("use,why", [
    (lambda: bsim.simulate(lambda: MPI.COMM_SELF.Spawn("/bin/true"), 1),
     r"Spawn.* is not simulated"),
])
def test_a_family_not_simulated_raises_where_it_is_used(use, why):
    with pytest.raises(NotSimulatedError, match=why):
        use()
    assert issubclass(NotSimulatedError, MPIUsageError)
    assert issubclass(NotSimulatedError, NotImplementedError)


def test_stand_ins_import_and_compare():
    """A program may import and pass the handles around (e.g. as defaults)."""
    from bsim.MPI import ERRORS_RETURN, FILE_NULL, Grequest  # noqa: F401
    assert FILE_NULL is MPI.FILE_NULL and FILE_NULL != MPI.SESSION_NULL
    assert is_stand_in(MPI.InPlaceType) and not is_stand_in(MPI.Comm)
    assert not is_stand_in(MPI.Open_port)
    assert not is_stand_in(Grequest)
    assert not is_stand_in(MPI.File) and not is_stand_in(MPI.FILE_NULL)
    assert not is_stand_in(MPI.Win) and not is_stand_in(MPI.WIN_NULL)
    assert not is_stand_in(MPI.Info) and not is_stand_in(MPI.INFO_NULL)


def test_in_a_run_the_error_names_the_rank_and_line():
    def main():
        from mpi4py import MPI
        MPI.COMM_WORLD.Spawn("/bin/true")

    with pytest.raises(NotSimulatedError,
                       match=r"rank 0: .*Spawn.* is not simulated.*test_mpi_namespace.py:\d+"):
        bsim.simulate(main, 2)
