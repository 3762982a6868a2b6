"""MPI datatypes: names, sizes and numpy equivalents (mpi4py's ``MPI.DOUBLE`` ...).

Only the size matters to the simulator; the numpy dtype lets buffers be
interpreted when a program passes real arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .attributes import (
    copy_attrs,
    create_keyval,
    delete_attr,
    drop_attrs,
    free_keyval,
    get_attr,
    set_attr,
)

__all__ = ["Datatype", "PREDEFINED", "from_typecode", "from_numpy"]


class Datatype:
    """An MPI datatype: a name, a size in bytes and (for predefined ones) a numpy dtype."""

    __slots__ = ("name", "size", "extent", "dtype", "typecode", "committed")

    def __init__(self, name: str, size: int, dtype: str | None = None,
                 typecode: str | None = None, extent: int | None = None) -> None:
        self.name = name
        self.size = int(size)
        self.extent = int(size if extent is None else extent)
        self.dtype = np.dtype(dtype) if dtype is not None else None
        self.typecode = typecode
        self.committed = True

    # mpi4py surface -------------------------------------------------------
    def Get_size(self) -> int:
        """Size in bytes of the data in one element."""
        return self.size

    def Get_extent(self) -> tuple[int, int]:
        """(lower bound, extent) in bytes."""
        return 0, self.extent

    @classmethod
    def fromcode(cls, code: str) -> Datatype:
        """The predefined datatype of a typecode (``"d"``, ``"i4"``, ``"F"``, ...)."""
        try:
            return from_typecode(code)
        except (TypeError, ValueError):
            raise ValueError(f"cannot map typecode {code!r} to an MPI datatype") from None

    def tocode(self) -> str:
        """The typecode of a predefined datatype (``ValueError`` for the others)."""
        if not self.typecode:
            raise ValueError(f"cannot map {self.name} to a typecode")
        return self.typecode

    def Get_name(self) -> str:
        """The datatype's name."""
        return self.name

    @property
    def extent_(self) -> int:  # pragma: no cover - alias kept small
        return self.extent

    def Create_contiguous(self, count: int) -> Datatype:
        """A datatype of *count* consecutive elements."""
        if count < 0:
            raise ValueError(f"Create_contiguous: negative count {count}")
        return Datatype(f"contiguous({count},{self.name})", self.size * count,
                        extent=self.extent * count)

    def Create_vector(self, count: int, blocklength: int, stride: int) -> Datatype:
        """*count* blocks of *blocklength* elements, *stride* elements apart."""
        if count < 0 or blocklength < 0:
            raise ValueError(f"Create_vector: negative count {count} or blocklength {blocklength}")
        extent = ((count - 1) * stride + blocklength) * self.extent if count else 0
        return Datatype(f"vector({count},{blocklength},{stride},{self.name})",
                        self.size * count * blocklength, extent=extent)

    def Commit(self) -> Datatype:
        """Commit the datatype (a no-op here); returns it."""
        self.committed = True
        return self

    def Free(self) -> None:
        """Free the datatype (its attributes' delete callbacks run)."""
        drop_attrs(self)

    def Dup(self) -> Datatype:
        """A copy of the datatype (attributes copied by their keys' copy callbacks)."""
        new = Datatype(self.name, self.size, None, self.typecode, self.extent)
        new.dtype = self.dtype
        copy_attrs(self, new)
        return new

    @staticmethod
    def Create_keyval(copy_fn: Any = None, delete_fn: Any = None,
                      nopython: bool = False) -> int:
        """A new attribute key (``bsim/mpi/attributes.py``)."""
        return create_keyval(copy_fn, delete_fn, nopython)

    @staticmethod
    def Free_keyval(keyval: int) -> int:
        """Forget *keyval*; returns ``KEYVAL_INVALID``."""
        return free_keyval(keyval)

    def Get_attr(self, keyval: int) -> Any:
        """The calling rank's attribute value for *keyval*, or None."""
        return get_attr(self, keyval)

    def Set_attr(self, keyval: int, attrval: Any) -> None:
        """Set the calling rank's attribute value for *keyval*."""
        set_attr(self, keyval, attrval)

    def Delete_attr(self, keyval: int) -> None:
        """Delete the calling rank's attribute value for *keyval*."""
        delete_attr(self, keyval)

    def __repr__(self) -> str:
        return f"<Datatype {self.name} size={self.size}>"


_TABLE = [
    # name, size, numpy dtype, typecode
    ("BYTE", 1, "u1", "B"), ("CHAR", 1, "S1", "c"), ("SIGNED_CHAR", 1, "i1", "b"),
    ("UNSIGNED_CHAR", 1, "u1", "B"), ("BOOL", 1, "?", "?"), ("C_BOOL", 1, "?", "?"),
    ("SHORT", 2, "i2", "h"), ("UNSIGNED_SHORT", 2, "u2", "H"),
    ("INT", 4, "i4", "i"), ("UNSIGNED", 4, "u4", "I"), ("UNSIGNED_INT", 4, "u4", "I"),
    ("LONG", 8, "i8", "l"), ("UNSIGNED_LONG", 8, "u8", "L"),
    ("LONG_LONG", 8, "i8", "q"), ("UNSIGNED_LONG_LONG", 8, "u8", "Q"),
    ("INT8_T", 1, "i1", "i1"), ("INT16_T", 2, "i2", "i2"), ("INT32_T", 4, "i4", "i4"),
    ("INT64_T", 8, "i8", "i8"), ("UINT8_T", 1, "u1", "u1"), ("UINT16_T", 2, "u2", "u2"),
    ("UINT32_T", 4, "u4", "u4"), ("UINT64_T", 8, "u8", "u8"),
    ("FLOAT", 4, "f4", "f"), ("DOUBLE", 8, "f8", "d"), ("LONG_DOUBLE", 16, "f16", "g"),
    ("COMPLEX", 8, "c8", "F"), ("C_FLOAT_COMPLEX", 8, "c8", "F"),
    ("DOUBLE_COMPLEX", 16, "c16", "D"), ("C_DOUBLE_COMPLEX", 16, "c16", "D"),
    ("WCHAR", 4, "U1", "u"), ("PACKED", 1, "u1", None),
    ("INT_INT", 8, None, None), ("FLOAT_INT", 8, None, None),
    ("DOUBLE_INT", 12, None, None), ("LONG_INT", 12, None, None),
    ("SHORT_INT", 6, None, None), ("TWOINT", 8, None, None),
]

PREDEFINED: dict[str, Datatype] = {}
for _name, _size, _dtype, _code in _TABLE:
    try:
        PREDEFINED[_name] = Datatype(_name, _size, _dtype, _code)
    except TypeError:  # e.g. f16 unsupported on a platform
        PREDEFINED[_name] = Datatype(_name, _size, None, _code)

_BY_CODE: dict[str, Datatype] = {}
for _dt in PREDEFINED.values():
    if _dt.typecode and _dt.typecode not in _BY_CODE:
        _BY_CODE[_dt.typecode] = _dt


def from_typecode(code: str) -> Datatype:
    """The datatype for an array typecode such as ``"d"``, ``"i"``, ``"B"``."""
    try:
        return _BY_CODE[code]
    except KeyError:
        try:
            return from_numpy(np.dtype(code))
        except TypeError:
            raise ValueError(f"unknown datatype typecode {code!r}") from None


def from_numpy(dtype: np.dtype) -> Datatype:
    """The predefined datatype matching a numpy dtype, else an anonymous one of its size."""
    for dt in PREDEFINED.values():
        if dt.dtype is not None and dt.dtype == dtype and dt.dtype.kind == dtype.kind:
            return dt
    return Datatype(f"numpy:{dtype}", dtype.itemsize, dtype.str)
