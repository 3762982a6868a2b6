"""MPI datatypes: names, sizes, layouts and numpy equivalents (mpi4py's ``MPI.DOUBLE`` ...).

The simulator charges a message by its size; the layout (``bsim/mpi/typemap.py``)
moves a real buffer's bytes where a derived datatype puts them, and the numpy
dtype lets reductions interpret predefined types.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..constants import ERR_TYPE, ORDER_C, ORDER_FORTRAN
from ..errors import MPIUsageError
from .attributes import (
    copy_attrs,
    create_keyval,
    delete_attr,
    drop_attrs,
    free_keyval,
    get_attr,
    set_attr,
)
from .typemap import Layout, combine

__all__ = ["Datatype", "PREDEFINED", "from_typecode", "from_numpy", "mark_predefined"]


class Datatype:
    """An MPI datatype: a name, a size in bytes, a memory layout and (for predefined
    ones) a numpy dtype."""

    __slots__ = ("name", "size", "extent", "dtype", "typecode", "committed", "layout")

    def __init__(self, name: str, size: int, dtype: str | None = None,
                 typecode: str | None = None, extent: int | None = None,
                 layout: Layout | None = None) -> None:
        self.name = name
        if layout is None:
            align = np.dtype(dtype).alignment if dtype is not None else min(int(size), 8)
            layout = Layout([(0, int(size))], 0, int(size if extent is None else extent),
                            max(align, 1))
        self.layout = layout
        self.size = layout.size
        self.extent = layout.extent
        self.dtype = np.dtype(dtype) if dtype is not None else None
        self.typecode = typecode
        self.committed = True

    @property
    def lb(self) -> int:
        """Lower bound in bytes."""
        return self.layout.lb

    @property
    def ub(self) -> int:
        """Upper bound in bytes (``lb + extent``)."""
        return self.layout.lb + self.layout.extent

    @property
    def true_lb(self) -> int:
        """Lowest byte the data covers."""
        return self.layout.true_lb

    @property
    def true_ub(self) -> int:
        """One past the highest byte the data covers."""
        return self.layout.true_ub

    @property
    def true_extent(self) -> int:
        """``true_ub - true_lb``."""
        return self.layout.true_ub - self.layout.true_lb

    def Get_true_extent(self) -> tuple[int, int]:
        """(true lower bound, true extent) in bytes."""
        return self.true_lb, self.true_extent

    # mpi4py surface -------------------------------------------------------
    def Get_size(self) -> int:
        """Size in bytes of the data in one element."""
        return self.size

    def Get_extent(self) -> tuple[int, int]:
        """(lower bound, extent) in bytes."""
        return self.layout.lb, self.extent

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

    @property
    def typechar(self) -> str:
        """The one-character typecode of a predefined datatype (``""`` for the others)."""
        code = self.typecode or ""
        if len(code) == 1 or not code:
            return code
        return self.dtype.char if self.dtype is not None else ""

    def Get_name(self) -> str:
        """The datatype's name."""
        return self.name

    @property
    def extent_(self) -> int:  # pragma: no cover - alias kept small
        return self.extent

    def _derived(self, kind: str, layout: Layout) -> Datatype:
        return Datatype(f"{kind}({self.name})", layout.size, layout=layout)

    def Create_contiguous(self, count: int) -> Datatype:
        """A datatype of *count* consecutive elements."""
        _check_counts("Create_contiguous", [count])
        return self._derived("contiguous", combine([(self.layout, 0, count)]))

    def Create_vector(self, count: int, blocklength: int, stride: int) -> Datatype:
        """*count* blocks of *blocklength* elements, *stride* elements apart."""
        return self.Create_hvector(count, blocklength, stride * self.extent, "vector")

    def Create_hvector(self, count: int, blocklength: int, stride: int,
                       _kind: str = "hvector") -> Datatype:
        """*count* blocks of *blocklength* elements, *stride* bytes apart."""
        _check_counts(f"Create_{_kind}", [count, blocklength])
        return self._derived(_kind, combine([(self.layout, i * stride, blocklength)
                                             for i in range(count)]))

    def Create_indexed(self, blocklengths: Sequence[int],
                       displacements: Sequence[int]) -> Datatype:
        """Blocks of *blocklengths* elements at *displacements* (in extents)."""
        return self.Create_hindexed(blocklengths, [d * self.extent for d in displacements],
                                    "indexed")

    def Create_hindexed(self, blocklengths: Sequence[int], displacements: Sequence[int],
                        _kind: str = "hindexed") -> Datatype:
        """Blocks of *blocklengths* elements at *displacements* (in bytes)."""
        if len(blocklengths) != len(displacements):
            raise ValueError(f"Create_{_kind}: {len(blocklengths)} block lengths but "
                             f"{len(displacements)} displacements")
        _check_counts(f"Create_{_kind}", blocklengths)
        return self._derived(_kind, combine([(self.layout, int(d), int(n))
                                             for n, d in zip(blocklengths, displacements)]))

    def Create_indexed_block(self, blocklength: int,
                             displacements: Sequence[int]) -> Datatype:
        """Blocks of *blocklength* elements at *displacements* (in extents)."""
        return self.Create_hindexed([blocklength] * len(displacements),
                                    [d * self.extent for d in displacements],
                                    "indexed_block")

    def Create_hindexed_block(self, blocklength: int,
                              displacements: Sequence[int]) -> Datatype:
        """Blocks of *blocklength* elements at *displacements* (in bytes)."""
        return self.Create_hindexed([blocklength] * len(displacements), displacements,
                                    "hindexed_block")

    def Create_resized(self, lb: int, extent: int) -> Datatype:
        """The same data with lower bound *lb* and extent *extent* (bytes)."""
        return self._derived("resized", Layout(self.layout.blocks, lb, extent,
                                               self.layout.align))

    def Create_subarray(self, sizes: Sequence[int], subsizes: Sequence[int],
                        starts: Sequence[int], order: int = ORDER_C) -> Datatype:
        """The ``subsizes`` block at ``starts`` of a ``sizes`` array (C or Fortran order)."""
        if not len(sizes) == len(subsizes) == len(starts) or not sizes:
            raise ValueError("Create_subarray: sizes, subsizes and starts need one entry "
                             "per dimension")
        if any(n <= 0 or sub < 0 or st < 0 or st + sub > n
               for n, sub, st in zip(sizes, subsizes, starts)):
            raise ValueError(f"Create_subarray: subarray {list(subsizes)} at {list(starts)} "
                             f"does not fit in {list(sizes)}")
        dims = list(zip(sizes, subsizes, starts))
        if order == ORDER_FORTRAN:
            dims.reverse()
        elif order != ORDER_C:
            raise ValueError(f"Create_subarray: order must be ORDER_C or ORDER_FORTRAN, "
                             f"got {order!r}")
        strides, acc = [], self.extent
        for n, _, _ in reversed(dims):
            strides.append(acc)
            acc *= n
        strides.reverse()
        offsets = [0]
        for (_, sub, st), stride in zip(dims[:-1], strides[:-1]):
            offsets = [o + (st + i) * stride for o in offsets for i in range(sub)]
        _, last_sub, last_st = dims[-1]
        entries = [(self.layout, o + last_st * self.extent, last_sub) for o in offsets]
        total = combine(entries)
        return self._derived("subarray", Layout(total.blocks, 0, acc, total.align))

    @staticmethod
    def Create_struct(blocklengths: Sequence[int], displacements: Sequence[int],
                      datatypes: Sequence[Datatype]) -> Datatype:
        """Blocks of *blocklengths* elements of *datatypes* at *displacements* (bytes)."""
        if not len(blocklengths) == len(displacements) == len(datatypes):
            raise ValueError("Create_struct: blocklengths, displacements and datatypes "
                             "need one entry per block")
        _check_counts("Create_struct", blocklengths)
        layout = combine([(t.layout, int(d), int(n))
                          for n, d, t in zip(blocklengths, displacements, datatypes)], pad=True)
        names = ",".join(t.name for t in datatypes)
        return Datatype(f"struct({names})", layout.size, layout=layout)

    def _not_null(self, call: str) -> None:
        """``ERR_TYPE`` for a call on ``DATATYPE_NULL``."""
        if self.name == "DATATYPE_NULL" and self.size == 0:
            raise MPIUsageError(f"Datatype.{call} on DATATYPE_NULL", error_class=ERR_TYPE)

    def Commit(self) -> Datatype:
        """Commit the datatype (a no-op here); returns it."""
        self._not_null("Commit")
        self.committed = True
        return self

    def Free(self) -> None:
        """Free the datatype (its attributes' delete callbacks run); ``ERR_TYPE`` for a
        predefined one."""
        self._not_null("Free")
        if id(self) in _PREDEFINED_IDS:
            raise MPIUsageError(f"Datatype.Free(): cannot free the predefined {self.name}",
                                error_class=ERR_TYPE)
        drop_attrs(self)

    def Dup(self) -> Datatype:
        """A copy of the datatype (attributes copied by their keys' copy callbacks)."""
        self._not_null("Dup")
        new = Datatype(self.name, self.size, None, self.typecode, layout=self.layout)
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


def _check_counts(call: str, counts: Sequence[int]) -> None:
    if any(not isinstance(c, (int, np.integer)) or c < 0 for c in counts):
        raise ValueError(f"{call}: counts must be ints >= 0, got {list(counts)}")


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

_PREDEFINED_IDS: set[int] = set()   # ids of the predefined datatypes (never freed)


def mark_predefined(dt: Datatype) -> Datatype:
    """Record *dt* as a predefined datatype (its ``Free`` is an error); returns it."""
    _PREDEFINED_IDS.add(id(dt))
    return dt


PREDEFINED: dict[str, Datatype] = {}
for _name, _size, _dtype, _code in _TABLE:
    try:
        PREDEFINED[_name] = Datatype(_name, _size, _dtype, _code)
    except TypeError:  # e.g. f16 unsupported on a platform
        PREDEFINED[_name] = Datatype(_name, _size, None, _code)

for _dt in PREDEFINED.values():
    mark_predefined(_dt)

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
