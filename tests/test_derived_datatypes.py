"""Derived datatypes move the bytes their layout names, as real MPI does.

Each case sends part of a numpy array through a derived datatype and receives it
into another (often through a different datatype); the expected arrays are derived
by hand from MPI 4.0 section 5.1 and the same program is compared with real mpiexec.
Bounds (size, extent, true extent) are compared with real mpi4py's.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_mpiexec, real_mpi_returns

import bsim

PROGRAM = '''
import json
import numpy as np
from mpi4py import MPI


def main():
    comm = MPI.COMM_WORLD
    D, I = MPI.DOUBLE, MPI.INT
    out = {}
    a = np.arange(20, dtype="d")
    cases = {
        # name: (send type, send count, receive type, receive count)
        "vector": (D.Create_vector(3, 2, 5), 1, D, 6),
        "hvector": (D.Create_hvector(2, 3, 80), 1, D, 6),
        "indexed": (D.Create_indexed([1, 3], [2, 10]), 1, D, 4),
        "indexed_block": (D.Create_indexed_block(2, [0, 7, 14]), 1, D, 6),
        "subarray_c": (D.Create_subarray([4, 5], [2, 3], [1, 1]), 1, D, 6),
        "subarray_f": (D.Create_subarray([4, 5], [2, 3], [1, 1], order=MPI.ORDER_FORTRAN),
                       1, D, 6),
        "resized_2": (D.Create_vector(2, 1, 3).Create_resized(0, 8), 2, D, 4),
        "to_vector": (D, 6, D.Create_vector(3, 2, 5), 1),
    }
    for name, (st, sc, rt, rc) in cases.items():
        st.Commit(); rt.Commit()
        recv = np.full(20, -1.0)
        if comm.rank == 0:
            comm.Send([a, sc, st], dest=1, tag=1)
        elif comm.rank == 1:
            comm.Recv([recv, rc, rt], source=0, tag=1)
            out[name] = recv.tolist()
    # an array of C structs {double x; int n;}: 16 bytes each (the struct's padding)
    rec = np.zeros(3, dtype=[("x", "f8"), ("n", "i4"), ("pad", "i4")])
    st = MPI.Datatype.Create_struct([1, 1], [0, 8], [D, I]).Commit()
    if comm.rank == 0:
        rec["x"], rec["n"], rec["pad"] = [1.5, 2.5, 3.5], [7, 8, 9], [-5, -5, -5]
        comm.Send([rec, 3, st], dest=1, tag=2)
    elif comm.rank == 1:
        comm.Recv([rec, 3, st], source=0, tag=2)
        out["struct"] = [rec["x"].tolist(), rec["n"].tolist(), rec["pad"].tolist()]
    # a collective through a derived type: rank 0's column 1 of a 4x3 array
    grid = np.arange(12, dtype="d").reshape(4, 3) + 100 * comm.rank
    col = D.Create_vector(4, 1, 3).Commit()
    comm.Bcast([grid.reshape(-1)[1:], 1, col], root=0)
    out["bcast_column"] = grid.tolist()
    bounds = {}
    for name, t in (("vector", D.Create_vector(3, 2, 5)),
                    ("struct", MPI.Datatype.Create_struct([1, 1], [0, 8], [D, I])),
                    ("resized", D.Create_resized(-8, 32)),
                    ("subarray", D.Create_subarray([4, 5], [2, 3], [1, 1]))):
        bounds[name] = [t.Get_size(), *t.Get_extent(), *t.Get_true_extent()]
    out["bounds"] = bounds
    return out
'''


def _bsim() -> list:
    namespace: dict = {}
    exec(compile(PROGRAM, "<program>", "exec"), namespace)
    return bsim.simulate(namespace["main"], 2).returns


def _filled(pairs) -> list:
    recv = np.full(20, -1.0)
    for i, v in pairs:
        recv[i] = v
    return recv.tolist()


def test_derived_datatypes_by_hand():
    out = _bsim()[1]
    seq = lambda values: _filled(enumerate(values))   # noqa: E731
    # vector(3, 2, 5): elements 0 1, 5 6, 10 11
    assert out["vector"] == seq([0, 1, 5, 6, 10, 11])
    # hvector(2, 3, 80 bytes = 10 doubles): 0 1 2, 10 11 12
    assert out["hvector"] == seq([0, 1, 2, 10, 11, 12])
    assert out["indexed"] == seq([2, 10, 11, 12])
    assert out["indexed_block"] == seq([0, 1, 7, 8, 14, 15])
    # 4x5 C array, rows 1-2, columns 1-3: 6 7 8, 11 12 13
    assert out["subarray_c"] == seq([6, 7, 8, 11, 12, 13])
    # Fortran order: dim 0 (size 4) varies fastest; element (i, j) at i + 4 j:
    # i in 1..2, j in 1..3 -> 5 6, 9 10, 13 14
    assert out["subarray_f"] == seq([5, 6, 9, 10, 13, 14])
    # vector(2,1,3) resized to extent 8: element k covers k and k + 3
    assert out["resized_2"] == seq([0, 3, 1, 4])
    # six doubles received through vector(3, 2, 5): the gaps keep their -1
    assert out["to_vector"] == _filled([(0, 0), (1, 1), (5, 2), (6, 3), (10, 4), (11, 5)])
    # the struct's padding bytes are not moved
    assert out["struct"] == [[1.5, 2.5, 3.5], [7, 8, 9], [0, 0, 0]]
    grid = (np.arange(12).reshape(4, 3) + 100.0)
    grid[:, 1] = [1, 4, 7, 10]                        # rank 0's column 1
    assert out["bcast_column"] == grid.tolist()
    assert out["bounds"] == {"vector": [48, 0, 96, 0, 96], "struct": [12, 0, 16, 0, 12],
                             "resized": [8, -8, 32, 0, 8],
                             "subarray": [48, 0, 160, 48, 64]}


@needs_mpiexec
def test_derived_datatypes_equal_real_mpi():
    assert real_mpi_returns(2, PROGRAM) == _bsim()


def test_a_datatype_that_reaches_past_the_buffer_is_one_line():
    def main():
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            comm.Send([np.zeros(10), 1, MPI.DOUBLE.Create_vector(3, 2, 5).Commit()], dest=1)
        else:
            comm.Recv(np.zeros(6), source=0)
    with pytest.raises(bsim.MPIUsageError, match=r"rank 0: Send.*spans 96 bytes.*80 bytes"):
        bsim.simulate(main, 2)


def test_v_collectives_size_blocks_of_gapped_types_by_their_data():
    """A block of one vector(2, 1, 2) of doubles holds 16 bytes of data (its extent is
    24): 3 doubles sent into it are truncated (gapped types are moved through their
    layout now, tests/test_real_mpi_values.py)."""
    def main():
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        vec = MPI.DOUBLE.Create_vector(2, 1, 2).Commit()
        comm.Allgatherv(np.zeros(3), [np.zeros(6 * comm.size), [1] * comm.size, None, vec])
    with pytest.raises(bsim.MPIUsageError, match="sends 24 bytes but its receive block "
                                                 "holds 16 bytes"):
        bsim.simulate(main, 2)


def test_get_elements_counts_basic_elements_of_a_derived_datatype():
    """MPI 4.0 Sec. 4.1.11: Get_elements counts basic elements.  A vector of 3 blocks of 2
    doubles holds 6: 6 doubles received are 1 copy and 6 elements, 5 doubles are no whole
    copy (Get_count UNDEFINED) but 5 elements; 7 ints probed as pairs of ints are 3.5
    pairs, 7 elements; 3 bytes are not a whole int (UNDEFINED).  Get_elements returned
    the derived count (1, UNDEFINED, UNDEFINED)."""
    from bsim import MPI
    U = MPI.UNDEFINED

    def main():
        comm = MPI.COMM_WORLD
        vec = MPI.DOUBLE.Create_vector(3, 2, 4).Commit()
        two = MPI.INT.Create_contiguous(2).Commit()
        if comm.rank == 0:
            for tag, data in ((1, np.arange(6.0)), (2, np.arange(5.0)),
                              (3, np.arange(7, dtype="i")), (4, np.zeros(3, dtype="u1"))):
                comm.Send(data, dest=1, tag=tag)
            return None
        st, out = MPI.Status(), []
        for tag in (1, 2):
            comm.Recv([np.zeros(12), 1, vec], source=0, tag=tag, status=st)
            out.append((st.Get_elements(vec), st.Get_count(vec)))
        comm.Probe(source=0, tag=3, status=st)
        out.append((st.Get_elements(two), st.Get_count(two)))
        comm.Recv(np.zeros(7, dtype="i"), source=0, tag=3)
        comm.Probe(source=0, tag=4, status=st)
        out.append((st.Get_elements(MPI.INT), st.Get_elements(MPI.DOUBLE_INT)))
        comm.Recv(np.zeros(3, dtype="u1"), source=0, tag=4)
        return out

    res = bsim.simulate(main, ranks=2)
    assert res.returns[1] == [(6, 1), (5, U), (7, U), (U, U)]


def test_an_uncommitted_datatype_carries_no_data():
    """A derived type must be committed before a message uses it (MPI 4.0 Sec. 5.1.9;
    MPICH: "Datatype has not been committed"): one line naming the rank, the call and the
    type. Commit() on any handle of the type commits it; Dup keeps the state."""
    def main():
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        vec = MPI.DOUBLE.Create_vector(3, 2, 5)
        assert not vec.committed and MPI.DOUBLE.committed
        if comm.rank == 0:
            comm.Send([np.zeros(16), 1, vec], dest=1)
        else:
            comm.Recv(np.zeros(6), source=0)

    with pytest.raises(bsim.MPIUsageError,
                       match=r"rank 0: Send: .*vector\(DOUBLE\) is not committed"):
        bsim.simulate(main, 2)

    def committed():
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        vec = MPI.DOUBLE.Create_vector(3, 2, 5)
        MPI.Datatype(vec).Commit()            # another handle of the same type
        assert vec.committed and vec.Dup().committed
        if comm.rank == 0:
            comm.Send([np.zeros(16), 1, vec], dest=1)
        else:
            comm.Recv(np.zeros(6), source=0)
    bsim.simulate(committed, 2)
