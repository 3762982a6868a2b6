"""ULFM calls without failures (``bsim/mpi/comms/fault_tolerance.py``): the same program under
real ``mpiexec`` (MPICH implements ULFM's agreement and shrink) and under bsim must return
the same values.  ``Revoke`` is not implemented in the MPICH build of the test extra
(``NotImplementedError``), so its semantics are checked against the ULFM chapter alone:
every later communication call on the communicator fails with ``ERR_REVOKED``."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import needs_mpiexec, real_mpi_returns, simulated_returns

import bsim
from bsim import MPI

PROGRAM = '''
import array
from mpi4py import MPI


def main():
    comm = MPI.COMM_WORLD.Dup()
    comm.Set_errhandler(MPI.ERRORS_RETURN)
    rank = comm.Get_rank()
    out = {"agree": comm.Agree(0b1111 if rank else 0b1011)}
    flag = array.array("i", [0b1101 if rank else 0b0111])
    comm.Iagree(flag).Wait()
    out["iagree"] = flag[0]
    shrunk = comm.Shrink()
    out["shrink"] = (shrunk.Get_size(), shrunk.Get_rank())
    shrunk.Free()
    failed = comm.Get_failed()
    out["failed"] = failed.Get_size()
    failed.Free()
    out["acked"] = comm.Ack_failed()
    comm.Free()
    return out
'''


def _bsim(nprocs: int) -> list[Any]:
    return simulated_returns(nprocs, PROGRAM)


@needs_mpiexec
def test_ulfm_without_failures_as_real_mpi() -> None:
    import json
    assert json.loads(json.dumps(_bsim(2))) == real_mpi_returns(2, PROGRAM)


@pytest.mark.parametrize("size", [1, 3])
def test_ulfm_values(size: int) -> None:
    for rank, out in enumerate(_bsim(size)):
        assert out["agree"] == (0b1011 if size == 1 else 0b1011 & 0b1111)
        assert out["iagree"] == (0b0111 if size == 1 else 0b0111 & 0b1101)
        assert out["shrink"] == (size, rank)
        assert out["failed"] == 0 and out["acked"] == 0


REVOKE = '''
from mpi4py import MPI


def main():
    comm = MPI.COMM_WORLD.Dup()
    before = comm.Is_revoked()
    comm.Barrier()
    if comm.Get_rank() == 0:
        comm.Revoke()    # one member revokes: every member sees it
    codes = []
    for call in (comm.Barrier, lambda: comm.Send([None, 0, MPI.BYTE], MPI.PROC_NULL),
                 lambda: comm.Recv([None, 0, MPI.BYTE], MPI.PROC_NULL)):
        try:
            call()
            codes.append(MPI.SUCCESS)
        except MPI.Exception as exc:
            codes.append(exc.Get_error_class())
    flag = comm.Agree(1)               # agreement and shrink still work
    shrunk = comm.Shrink()
    out = (before, comm.Is_revoked(), codes, comm.Get_size(), flag, shrunk.Get_size())
    shrunk.Barrier()
    shrunk.Free()
    comm.Free()
    return out
'''


def test_revoke_refuses_communication_for_every_member() -> None:
    namespace: dict[str, Any] = {}
    exec(compile(REVOKE, "<revoke>", "exec"), namespace)
    for before, after, codes, size, flag, shrunk in bsim.simulate(namespace["main"], 3).returns:
        assert (before, after) == (False, True)
        assert codes == [MPI.ERR_REVOKED] * 3
        assert (size, flag, shrunk) == (3, 1, 3)


def test_predefined_communicators_are_not_revoked() -> None:
    def main() -> None:
        MPI.COMM_WORLD.Revoke()
    with pytest.raises(bsim.errors.MPIUsageError, match="revoke a Dup"):
        bsim.simulate(main, 2)
