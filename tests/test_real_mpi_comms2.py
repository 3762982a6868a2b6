"""Communicator names, info hints, predefined attributes, tags and a few error classes give
what mpi4py + MPICH give (an outside review, /tmp/rv_comm items 3, 11, 13, 14).

Each program's ``main()`` returns plain values; the literal expectations were read off
real ``mpiexec -n N`` (MPICH 5.0.2, mpi4py 4.1.2); they are compared again with real MPI
when mpiexec and mpi4py are installed.
"""

from __future__ import annotations

import pytest
from conftest import needs_mpiexec, real_mpi_returns, simulated_returns

ATTRIBUTES = '''
from mpi4py import MPI


def error_class(fn):
    try:
        fn()
        return "ok"
    except MPI.Exception as exc:
        return exc.Get_error_class()


def main():
    world = MPI.COMM_WORLD
    out = [[comm.Get_attr(k) for k in (MPI.TAG_UB, MPI.WTIME_IS_GLOBAL, MPI.UNIVERSE_SIZE,
                                       MPI.APPNUM, MPI.IO)]
           for comm in (world, MPI.COMM_SELF, world.Dup())]
    peer, ub = 1 - world.Get_rank(), 536870911
    byte = [bytearray(1), MPI.BYTE]
    out += [error_class(lambda: world.send(1, dest=peer, tag=ub + 1)),
            error_class(lambda: world.Send(byte, dest=peer, tag=ub + 1)),
            error_class(lambda: world.Isend(byte, dest=peer, tag=ub + 1)),
            error_class(lambda: world.Recv(byte, source=peer, tag=ub + 1)),
            error_class(lambda: world.Irecv(byte, source=peer, tag=ub + 1)),
            error_class(lambda: world.Iprobe(source=peer, tag=ub + 1)),
            error_class(lambda: world.Sendrecv(byte, peer, ub + 1, byte, peer, 0)),
            error_class(lambda: world.Create_group(world.group, tag=ub + 1))]
    world.Sendrecv(byte, peer, ub, byte, peer, ub)          # TAG_UB itself is valid
    return out + [error_class(lambda: world.Create_group(world.group, tag=ub))]
'''


def test_predefined_attributes_and_tag_ub_are_mpichs():
    """``TAG_UB`` is MPICH's 536870911 on every communicator and a larger tag is
    ``ERR_TAG`` (4) in every call; ``WTIME_IS_GLOBAL`` 0 and ``UNIVERSE_SIZE`` None under
    MPICH's mpiexec (MPI 4.1 Sec. 9.1.1, 11.10.1); bsim gave 2**31 - 1, True and the
    world size, and accepted tags up to 2**31 - 1."""
    row = [[536870911, 0, None, 0, -2]] * 3 + [4] * 8 + ["ok"]   # IO: ANY_SOURCE
    assert simulated_returns(2, ATTRIBUTES) == [row, row]

SAME_AS_REAL = {"attributes": (ATTRIBUTES, 2)}


@needs_mpiexec
@pytest.mark.parametrize("case", SAME_AS_REAL)
def test_the_program_returns_what_real_mpi_returns(case):
    code, n = SAME_AS_REAL[case]
    assert real_mpi_returns(n, code) == simulated_returns(n, code, as_json=True)
