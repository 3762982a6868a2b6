"""Calls programs from the wild make that mpi4py on MPICH accepts: integral floats as
ranks, tags, colors and range triples (``size / 2``), and ``Get_topo``'s periods as the
0/1 ints MPI_Cart_get fills.  Literal expectations worked out by hand from the MPI
semantics; compared again with real ``mpiexec -n 4`` when it is installed."""

from __future__ import annotations

import pytest
from conftest import needs_mpiexec, real_mpi_returns, simulated_returns

PROGRAM = '''
from mpi4py import MPI


def main():
    comm = MPI.COMM_WORLD
    rank, size = comm.rank, comm.size
    half = size / 2                                  # 2.0 with 4 ranks
    group = comm.Get_group()
    low = group.Range_incl([(0, half - 1, 1)])       # ranks 0, 1
    high = group.Range_excl([(0, half - 1, 1)])      # ranks 2, 3
    ring = comm.Create(low if rank < half else high)
    r, s = ring.Get_rank(), ring.Get_size()
    token = ring.sendrecv(rank, dest=(r + 1.0) % s, source=(r - 1) % s, sendtag=3.0,
                          recvtag=3)
    split = comm.Split(rank // half, -rank)          # colors 0.0 / 1.0, keys reversed
    root = comm.bcast(rank, root=half)               # rank 2's value
    cart = comm.Create_cart([size], periods=[True])
    dims, periods, coords = cart.Get_topo()
    return [r, s, token, split.Get_rank(), root, dims, periods, coords,
            type(periods[0]).__name__, cart.periods, type(cart.periods[0]).__name__]
'''

# by hand: rings {0,1} and {2,3}, each rank receives its ring neighbour's world rank;
# Split by rank // 2 with key -rank reverses each pair; bcast from rank 2 gives 2
WANT = [
    [0, 2, 1, 1, 2, [4], [1], [0], "int", [1], "int"],
    [1, 2, 0, 0, 2, [4], [1], [1], "int", [1], "int"],
    [0, 2, 3, 1, 2, [4], [1], [2], "int", [1], "int"],
    [1, 2, 2, 0, 2, [4], [1], [3], "int", [1], "int"],
]


def test_integral_floats_and_topo_periods() -> None:
    """Before: Range_incl raised TypeError ('float' object cannot be interpreted as an
    integer), dest=1.0 and root=2.0 were refused, periods came back as True."""
    assert simulated_returns(4, PROGRAM, as_json=True) == WANT


@needs_mpiexec
def test_same_under_real_mpiexec() -> None:
    assert real_mpi_returns(4, PROGRAM) == WANT


@pytest.mark.parametrize("call, words", [
    ("comm.Split(0, key=1.5)", "must be integers"),
    ("comm.bcast(1, root=0.5)", "invalid root"),
    ("comm.Get_group().Range_incl([(0, 0.5, 1)])", "must be integers"),
])
def test_fractional_floats_still_refused(call: str, words: str) -> None:
    """A float with a fraction (which mpi4py would truncate silently) is still one clear
    error line."""
    import bsim
    from bsim import MPI

    def main() -> None:
        comm = MPI.COMM_WORLD   # noqa: F841 - used by the call's text
        exec(call)

    with pytest.raises(Exception, match=words):
        bsim.simulate(main, 2, network="hockney:latency=1e-06,bandwidth=1e9",
                      protocol="bsim")
