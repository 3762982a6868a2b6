"""Buffer specifications as mpi4py takes them: inferred counts, displacements and datatypes
(``None`` items), vector specs, Fortran order, byte order, DLPack device pointers.

The program runs under real ``mpiexec`` and under bsim and must return the same values.
"""

from __future__ import annotations

from typing import Any

from conftest import needs_mpiexec, real_mpi_returns

import bsim

PROGRAM = '''
import numpy as np
from mpi4py import MPI


def main():
    comm = MPI.COMM_SELF
    out = {}

    def sr(s, r):
        comm.Sendrecv(s, 0, 0, r, 0, 0)

    s = np.arange(6, dtype="i")
    got = []
    for spec in (lambda b: [b, None], lambda b: [b, 4, None], lambda b: [b, (3, None), "i"],
                 lambda b: [b, (None, 2)], lambda b: [b, 2, None, MPI.INT],
                 lambda b: [b, (2, 1), None]):
        r = np.full(6, -1, "i")
        sr(spec(s), spec(r))
        got.append(r.tolist())
    out["simple"] = got
    f = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    rf = np.zeros((2, 3), order="F")
    sr(f, rf)
    out["fortran"] = rf.tolist()
    swapped = np.arange(3, dtype=">i4" if np.little_endian else "<i4")
    try:
        sr(swapped, np.zeros(3, swapped.dtype))
        out["byteorder"] = "accepted"
    except BufferError:
        out["byteorder"] = "BufferError"
    rs = np.zeros(3, swapped.dtype)
    sr([swapped, MPI.INT], [rs, MPI.INT])
    out["byteorder_typed"] = rs.tolist()
    errors = []
    for bad in ([bytearray(5), None, 0, "i"], [bytearray(5), 0, "\\0"]):
        try:
            sr(bad, [None, 0, "B"])
            errors.append("none")
        except KeyError:
            errors.append("KeyError")
        except ValueError:
            errors.append("ValueError")
    out["errors"] = errors
    v = []
    for spec in (lambda b: [b, None, None], lambda b: [b, ([2], [1])],
                 lambda b: [b, 3, [2], "i"], lambda b: [b, (np.int64(2), [np.int64(3)])],
                 lambda b: [b, np.array(4), "i"]):
        r = np.full(6, -1, "i")
        comm.Alltoallv(spec(s), spec(r))
        v.append(r.tolist())
    out["vector"] = v
    return out
'''


def _bsim(nprocs: int) -> list[Any]:
    namespace: dict[str, Any] = {}
    exec(compile(PROGRAM, "<program>", "exec"), namespace)
    return bsim.simulate(namespace["main"], nprocs).returns


@needs_mpiexec
def test_buffer_specs_as_real_mpi() -> None:
    assert _bsim(1) == real_mpi_returns(1, PROGRAM)


def test_buffer_specs_values() -> None:
    out = _bsim(1)[0]
    assert out["simple"][1] == [0, 1, 2, 3, -1, -1]
    assert out["byteorder"] == "BufferError"
    assert out["errors"] == ["ValueError", "KeyError"]
    assert out["vector"][1] == [-1, 1, 2, -1, -1, -1]
