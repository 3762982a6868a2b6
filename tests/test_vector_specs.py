"""Vector buffer specs of the v and w collectives as mpi4py reads them: one integer
displacement *d* is the strided ``0, d, 2d, ...``; a buffer without counts splits into
blocks whose first ``count % size`` are one element longer; ``MPI.BOTTOM`` with
datatypes at absolute addresses (``MPI.Get_address``) in ``Alltoallw``.

The program runs under real ``mpiexec`` and under bsim and must return the same values;
the hand-derived expectations below say the same in closed form.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import needs_mpiexec, real_mpi_returns, simulated_returns

PROGRAM = '''
import numpy as np
from mpi4py import MPI


def main():
    comm = MPI.COMM_WORLD
    size, rank = comm.size, comm.rank
    out = {}
    strided = []
    for count in range(size):
        s = np.full(size, rank + 1, "i")
        r = np.full(size * size, -1, "i")
        comm.Allgatherv([s, count, MPI.INT], [r, (count, size), MPI.INT])
        strided.append(r.tolist())
    out["allgatherv_strided"] = strided
    s = np.arange(size * size, dtype="i") + 100 * rank
    r = np.full(size * size, -1, "i")
    comm.Alltoallv([s, (1, size)], [r, (1, size)])
    out["alltoallv_strided"] = r.tolist()
    n = 2 * size + 1          # not a multiple of size: uneven blocks
    s = np.arange(n, dtype="i") + 100 * rank
    r = np.full(n // size + (rank < n % size), -1, "i")
    comm.Scatterv([s, None] if rank == 0 else None, r, 0)
    out["scatterv_uneven"] = r.tolist()
    k = 2
    sb = np.full(size * k, rank + 1, "i")
    rb = np.full(size * k, -1, "i")
    sa, ra = MPI.Get_address(sb), MPI.Get_address(rb)
    st = [MPI.Datatype.Create_struct([k], [sa + 4 * k * i], [MPI.INT]).Commit()
          for i in range(size)]
    rt = [MPI.Datatype.Create_struct([k], [ra + 4 * k * i], [MPI.INT]).Commit()
          for i in range(size)]
    comm.Alltoallw((MPI.BOTTOM, ([1] * size, [0] * size), st),
                   (MPI.BOTTOM, ([1] * size, [0] * size), rt))
    for t in st + rt:
        t.Free()
    out["alltoallw_bottom"] = rb.tolist()
    return out
'''


def _bsim(nprocs: int) -> list[Any]:
    return simulated_returns(nprocs, PROGRAM)


@needs_mpiexec
def test_vector_specs_as_real_mpi() -> None:
    assert _bsim(3) == real_mpi_returns(3, PROGRAM)


@pytest.mark.parametrize("size", [1, 2, 3])
def test_vector_specs_values(size: int) -> None:
    for rank, out in enumerate(_bsim(size)):
        for count, row in enumerate(out["allgatherv_strided"]):
            # block of rank i: count values i+1 at element i*size, the rest untouched
            want = [-1] * (size * size)
            for i in range(size):
                want[i * size:i * size + count] = [i + 1] * count
            assert row == want
        # rank i's block for j is element j*size of its send buffer, at element i*size here
        want = [-1] * (size * size)
        for i in range(size):
            want[i * size] = 100 * i + rank * size
        assert out["alltoallv_strided"] == want
        n = 2 * size + 1
        lengths = [n // size + (i < n % size) for i in range(size)]
        start = sum(lengths[:rank])
        assert out["scatterv_uneven"] == list(range(start, start + lengths[rank]))
        assert out["alltoallw_bottom"] == [i // 2 + 1 for i in range(2 * size)]


CHECKS = '''
import numpy as np
from mpi4py import MPI


def main():
    comm = MPI.COMM_SELF
    s, r = np.zeros(4, "i"), np.zeros(4, "i")
    out = []
    for call in (lambda: comm.Reduce([s, 1, MPI.INT], [r, 1, MPI.FLOAT], MPI.SUM, 0),
                 lambda: comm.Allreduce([s, 1, MPI.INT], [r, 2, MPI.INT]),
                 lambda: comm.Reduce_scatter([s, 2, MPI.INT], [r, 1, MPI.INT], [1]),
                 lambda: comm.Reduce_scatter(MPI.IN_PLACE, [r, 1, MPI.INT], [2]),
                 lambda: comm.Alltoallw([s], [r]),
                 lambda: comm.Alltoallw([MPI.BOTTOM, None, [0], [MPI.BYTE]],
                                        [r, [0], [0], [MPI.BYTE]]),
                 lambda: MPI.COMM_WORLD.Alltoall([np.zeros(1, "i"), None, "i"],
                                                 [None, 0, "B"])):
        try:
            call()
            out.append("accepted")
        except ValueError:
            out.append("ValueError")
    for bad in (lambda: MPI.COMM_WORLD.reduce(1, root=MPI.COMM_WORLD.size),
                lambda: MPI.COMM_WORLD.send(1, dest=MPI.COMM_WORLD.size),
                lambda: MPI.COMM_WORLD.send(1, dest=0, tag=-5)):
        try:
            bad()
        except MPI.Exception as exc:
            out.append(exc.Get_error_class())
    return out
'''


def _bsim_checks(nprocs: int) -> list[Any]:
    return simulated_returns(nprocs, CHECKS)


@needs_mpiexec
def test_reduction_checks_as_real_mpi() -> None:
    assert _bsim_checks(2) == real_mpi_returns(2, CHECKS)


def test_reduction_checks_values() -> None:
    from bsim import MPI
    out = _bsim_checks(2)[0]
    assert out[:7] == ["ValueError"] * 7
    assert out[7:] == [MPI.ERR_ROOT, MPI.ERR_RANK, MPI.ERR_TAG]
