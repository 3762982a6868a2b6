"""The short paths of buffer parsing: a plain numpy array, and ``[array, datatype]``.

Programs with real buffers pass these two on every call, so ``parse_bufspec`` takes them
without its general checks.  Each case here is checked against what numpy and mpi4py say
the buffer is (its bytes, its element count, mpi4py's datatype for its typecode), not
against bsim's general path, and the cases that path must still refuse are refused.
"""

from __future__ import annotations

import numpy as np
import pytest

import bsim
from bsim import MPI
from bsim.errors import MPIUsageError
from bsim.mpi.data import datatypes
from bsim.mpi.data.buffers import parse_bufspec

CODES = ["d", "f", "i", "l", "q", "B", "b", "h", "H", "D", "F", "e", "?"]


def _expect(a: np.ndarray) -> tuple[int, int, bytes]:
    return a.nbytes, a.size, a.tobytes(order="A")


@pytest.mark.parametrize("code", CODES)
@pytest.mark.parametrize("shape,order", [((7,), "C"), ((3, 5), "C"), ((3, 5), "F"),
                                         ((), "C")])
def test_a_plain_array_is_its_bytes_count_and_mpi4py_type(code, shape, order):
    values = np.arange(int(np.prod(shape))) % 7   # (booleans: arange takes at most 2)
    a = np.asarray(values.astype(code).reshape(shape, order=order), order=order)
    info = parse_bufspec(a)
    nbytes, count, data = _expect(a)
    assert (info.nbytes, info.count) == (nbytes, count)
    assert info.datatype is MPI._typedict[a.dtype.char]
    assert bytes(info.mem) == data


@pytest.mark.parametrize("code", ["l", "q"])
def test_equal_dtypes_keep_their_own_typecode(code):
    """numpy's 'l' and 'q' dtypes compare (and hash) equal on LP64, yet mpi4py maps them to
    LONG and LONG_LONG: whichever comes first, each array gets its own."""
    other = "q" if code == "l" else "l"
    first = parse_bufspec(np.zeros(3, dtype=code)).datatype
    second = parse_bufspec(np.zeros(3, dtype=other)).datatype
    assert first is MPI._typedict[code]
    assert second is MPI._typedict[other]
    assert parse_bufspec([np.zeros(3, dtype=other), MPI.INT]).count == 6


def test_an_empty_array_has_no_memory():
    info = parse_bufspec(np.zeros(0))
    assert (info.nbytes, info.count, info.mem) == (0, 0, None)
    info = parse_bufspec([np.zeros(0), MPI.DOUBLE])
    assert (info.nbytes, info.count, info.mem) == (0, 0, None)


@pytest.mark.parametrize("dt,size", [("DOUBLE", 8), ("INT", 4), ("BYTE", 1), ("SHORT", 2)])
def test_array_with_a_datatype_counts_its_elements(dt, size):
    a = np.arange(12, dtype="d")
    info = parse_bufspec([a, getattr(MPI, dt)])
    assert (info.nbytes, info.count) == (96, 96 // size)
    assert info.datatype is getattr(MPI, dt)
    assert bytes(info.mem) == a.tobytes()


def test_array_with_a_pair_type_counts_by_extent():
    """DOUBLE_INT: 12 bytes of data, extent 16 (mpi4py counts a buffer by extent)."""
    info = parse_bufspec([np.zeros(8), MPI.DOUBLE_INT])
    assert (info.count, info.nbytes) == (4, 48)


def test_a_length_not_a_multiple_of_the_type_is_refused():
    with pytest.raises(ValueError, match="not a multiple of datatype extent 8"):
        parse_bufspec([np.zeros(3, dtype="i"), MPI.DOUBLE])


def test_what_the_general_path_refuses_is_still_refused():
    with pytest.raises(BufferError, match="not contiguous"):
        parse_bufspec(np.zeros((4, 4))[:, 1])
    swapped = np.arange(4, dtype=">f8")
    with pytest.raises(BufferError, match="non-native byte order"):
        parse_bufspec(swapped)
    info = parse_bufspec([swapped, MPI.DOUBLE])   # with a datatype: its bytes as they are
    assert (info.count, bytes(info.mem)) == (4, swapped.tobytes())
    with pytest.raises(KeyError):
        parse_bufspec(np.array([object()]))


def test_an_array_subclass_reads_as_its_data():
    class Tagged(np.ndarray):
        pass
    a = np.arange(6, dtype="d").view(Tagged)
    info = parse_bufspec(a)
    assert (info.nbytes, info.count, bytes(info.mem)) == (48, 6, a.tobytes())
    assert info.datatype is MPI.DOUBLE


def test_many_dtype_objects_are_remembered_up_to_a_bound():
    for k in range(datatypes._PLAIN_MAX + 50):
        dtype = np.dtype("f8", metadata={"k": k})   # a new dtype object each time
        info = parse_bufspec(np.zeros(2, dtype=dtype))
        assert (info.datatype, info.count) == (MPI.DOUBLE, 2)
    assert len(datatypes._PLAIN) <= datatypes._PLAIN_MAX


def _exchange() -> list[float]:
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    right, left = (rank + 1) % size, (rank - 1) % size
    got = np.zeros(3)
    got32 = np.zeros(2, dtype="i")
    reqs = [comm.Irecv(got, source=left, tag=1), comm.Irecv([got32, MPI.INT], source=left, tag=2),
            comm.Isend(np.full(3, float(rank)), dest=right, tag=1),
            comm.Isend([np.array([rank, -rank], dtype="i"), MPI.INT], dest=right, tag=2)]
    MPI.Request.Waitall(reqs)
    return [*got.tolist(), *got32.tolist()]


def test_real_data_moves_through_both_short_paths():
    res = bsim.simulate(_exchange, ranks=4)
    for rank, got in enumerate(res.returns):
        left = (rank - 1) % 4
        assert got == [left, left, left, left, -left]


def _into_read_only() -> None:
    comm = MPI.COMM_WORLD
    a = np.zeros(4)
    a.flags.writeable = False
    if comm.Get_rank() == 0:
        comm.Recv(a, source=1)
    else:
        comm.Send(np.ones(4), dest=0)


def test_a_read_only_receive_buffer_is_still_refused():
    with pytest.raises(MPIUsageError, match="read-only"):
        bsim.simulate(_into_read_only, ranks=2)
