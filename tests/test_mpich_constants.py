"""MPI's rank and tag constants have MPICH's values (bsim/constants.py).

mpi4py on MPICH: ``PROC_NULL = -1``, ``ANY_SOURCE = -2``, ``ANY_TAG = -1``,
``ROOT = -3``, ``UNDEFINED = -32766``.  A program prints them (a Cartesian
shift off the grid's edge gives ``PROC_NULL``), and the wildcard and the null
process must still act as such when passed as the literal numbers.
"""

from __future__ import annotations

from conftest import needs_mpiexec, real_mpi_returns, simulated_returns

PROGRAM = '''
import numpy as np
from mpi4py import MPI


def main():
    comm = MPI.COMM_WORLD
    r, n = comm.rank, comm.size
    values = [MPI.PROC_NULL, MPI.ANY_SOURCE, MPI.ANY_TAG, MPI.ROOT, MPI.UNDEFINED]
    cart = comm.Create_cart([n], periods=[False])
    shift = list(cart.Shift(0, 1))
    cart.Free()
    # the literal numbers act as the constants: -1 the null process, -2 any source
    got = comm.sendrecv(r, dest=(r + 1) % n, source=-2)
    status = MPI.Status()
    buf = np.full(1, 7.0)
    comm.Recv(buf, source=-1, status=status)
    comm.Send(buf, dest=-1)
    null = [status.Get_source(), status.Get_tag(), status.Get_count(MPI.DOUBLE), buf[0]]
    fresh = MPI.Status()
    return [values, shift, got, null, [fresh.Get_source(), fresh.Get_tag()]]
'''


def _expected(n: int) -> list[list[object]]:
    """PROC_NULL past either edge of the non-periodic line; the left neighbour's rank."""
    return [[[-1, -2, -1, -3, -32766], [r - 1 if r else -1, r + 1 if r < n - 1 else -1],
             (r - 1) % n, [-1, -1, 0, 7.0], [-2, -1]] for r in range(n)]


def test_constants_and_shift_have_mpichs_values():
    """3 ranks on a line: rank 0's left and rank 2's right neighbours are PROC_NULL (-1)."""
    assert simulated_returns(3, PROGRAM, as_json=True) == _expected(3)


@needs_mpiexec
def test_the_same_under_mpiexec():
    """The literal expectations are real MPICH's."""
    assert real_mpi_returns(3, PROGRAM) == _expected(3)
