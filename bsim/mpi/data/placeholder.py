# cython: annotation_typing=False
"""``Buffer``, the sized placeholder a skeleton passes instead of data, and the datatype
check it shares with the buffer specs (``buffers.py``, ``buffer_specs.py``).

Compiled with the hot path (``bsim/engine/compiled.py``): a skeleton makes a ``Buffer``
per call.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .buffer_info import BufInfo
from .datatype_records import NULL_REC
from .datatypes import PREDEFINED, Datatype, from_typecode

__all__ = ["Buffer", "COUNT_MAX"]

_BYTE = PREDEFINED["BYTE"]
COUNT_MAX = 2 ** 63 - 1   # MPI_Count, a signed 64-bit int: the largest count or byte size


def _too_large(count: int, dt: Datatype) -> str:
    """Why *count* elements of *dt* are out of ``MPI_Count``'s range (count or bytes)."""
    if count > COUNT_MAX:
        return f"count {count} exceeds MPI's largest count 2**63-1 (MPI_Count)"
    return (f"count {count} x {dt.label} = {count * dt.size} bytes exceeds MPI's largest "
            f"size 2**63-1 (MPI_Count)")


class Buffer(BufInfo):
    """A sized placeholder buffer: carries ``nbytes`` and no data.

    ``Buffer(nbytes)`` or ``Buffer(count, datatype)``.  Use it in skeletons
    where the real code would pass a large array: no memory is allocated.
    It is its own parsed spec, so passing one to a call costs nothing extra.
    """

    __slots__ = ()

    def __init__(self, count: int, datatype: Datatype | str | None = None) -> None:
        dt = _BYTE if datatype is None else _as_datatype(datatype)
        if type(count) is not int and isinstance(count, (int, np.integer)):
            count = int(count)   # (an exact int, the usual count, skips the conversion)
        if type(count) is not int or count < 0:
            raise ValueError(f"Buffer: count must be an int >= 0, got {count!r}")
        nbytes = count * dt.size
        if nbytes > COUNT_MAX or count > COUNT_MAX:
            raise ValueError(f"Buffer: {_too_large(count, dt)}")
        self.count = count
        self.datatype = dt
        self.nbytes = nbytes
        self.mem = None

    def __len__(self) -> int:
        return self.nbytes

    def __repr__(self) -> str:
        return f"<Buffer {self.count} x {self.datatype.label} = {self.nbytes} bytes>"


def _as_datatype(datatype: Any) -> Datatype:
    if isinstance(datatype, Datatype):
        rec = datatype._rec   # (what bool() and .committed read: a Buffer per call is hot)
        if rec is NULL_REC:
            raise ValueError("MPI.DATATYPE_NULL is not a datatype of data")
        if not rec.committed:   # as MPICH: "Datatype has not been committed"
            raise ValueError(f"datatype {datatype._rec.label} is not committed: call its "
                             f"Commit() before passing data with it")
        return datatype
    if isinstance(datatype, str):
        try:
            if not datatype.isprintable():   # numpy reads "\0" as bool; mpi4py refuses it
                raise ValueError(f"unknown datatype typecode {datatype!r}")
            return from_typecode(datatype)
        except ValueError as exc:
            raise KeyError(str(exc)) from None   # mpi4py: an unknown typecode is a KeyError
    raise TypeError(f"expected an MPI datatype or a typecode string, got {datatype!r}")
