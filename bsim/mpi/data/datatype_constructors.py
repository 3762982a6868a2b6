"""Derived datatype constructors (MPI 4.1, sections 5.1.2-5.1.4 and 5.1.7, 19.1.9).

:class:`DatatypeConstructors` is mixed into :class:`bsim.mpi.data.datatypes.Datatype`.  Each
constructor computes the new layout (``bsim/mpi/data/typemap.py``: copy ``k`` of block ``j``
of the old type at ``displ_j + k * extent(old)``) and records its envelope and contents
as MPICH gives them for mpi4py's large-count (``MPI_Type_*_c``) calls: counts and
displacements in the *large counts* array, ``ndims``/``order`` (subarray) and the
distribution (darray) in the *integers*.  ``Create_darray`` follows the standard's
definition (section 5.1.4): a row-major process grid, ``BLOCK`` blocks of
``ceil(gsize / psize)`` (or ``darg``) elements, ``CYCLIC`` rounds of ``darg`` (default
1), the element order of the local array in C or Fortran order, and an extent of the
whole global array.  The Fortran 90 kinds (``Create_f90_*``), ``Match_size`` and
``Get_value_index`` return predefined datatypes.  No constructor charges simulated time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np

from ...constants import ERR_ARG
from .datatype_records import COMBINER, NULL_REC, DatatypeBase, TypeRecord, type_error
from .typemap import Layout, combine

if TYPE_CHECKING:
    from .datatypes import Datatype

T = TypeVar("T", bound="DatatypeConstructors")
__all__ = ["DatatypeConstructors"]

ORDER_C, ORDER_FORTRAN = 56, 57
DISTRIBUTE_BLOCK, DISTRIBUTE_CYCLIC, DISTRIBUTE_NONE = 121, 122, 123
DISTRIBUTE_DFLT_DARG = -49767
TYPECLASS_REAL, TYPECLASS_INTEGER, TYPECLASS_COMPLEX, TYPECLASS_LOGICAL = 1, 2, 3, 4
ERR_COUNT = 2

_MATCH = {TYPECLASS_INTEGER: {1: "INTEGER1", 2: "INTEGER2", 4: "INTEGER4", 8: "INTEGER8"},
          TYPECLASS_REAL: {4: "REAL4", 8: "REAL8", 16: "REAL16"},
          TYPECLASS_COMPLEX: {8: "COMPLEX8", 16: "COMPLEX16", 32: "COMPLEX32"},
          TYPECLASS_LOGICAL: {4: "LOGICAL"}}
_PAIRS = {"SHORT": "SHORT_INT", "INT": "INT_INT", "LONG": "LONG_INT", "FLOAT": "FLOAT_INT",
          "DOUBLE": "DOUBLE_INT", "LONG_DOUBLE": "LONG_DOUBLE_INT"}
_CHARS = {"i": {1: "b", 2: "h", 4: "i", 8: "l"}, "f": {2: "e", 4: "f", 8: "d", 16: "g"},
          "c": {4: "E", 8: "F", 16: "D", 32: "G"}}
_F90: dict[tuple[int, ...], TypeRecord] = {}   # one predefined datatype per kind


def _counts(call: str, values: Sequence[Any], what: str = "counts") -> list[int]:
    out = []
    for v in values:
        if not isinstance(v, (int, np.integer)) or v < 0:
            raise type_error(call, f"{what} must be ints >= 0, got {list(values)}", ERR_COUNT)
        out.append(int(v))
    return out


def _ints(call: str, values: Sequence[Any], what: str) -> list[int]:
    try:
        return [int(v) for v in values]
    except (TypeError, ValueError):
        raise type_error(call, f"{what} must be ints, got {values!r}", ERR_ARG) from None


def _same_length(call: str, **arrays: Sequence[Any]) -> None:
    lengths = {name: len(a) for name, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise type_error(call, "needs one entry per block in " + ", ".join(
            f"{k} ({n})" for k, n in lengths.items()), ERR_ARG)


class DatatypeConstructors(DatatypeBase):
    """``Create_*`` constructors of derived and parametrised datatypes."""

    __slots__ = ()
    _predefined: ClassVar[dict[str, Any]]


    def _derive(self: T, call: str, kind: str, layout: Layout, ints: Sequence[int] = (),
                counts: Sequence[int] = (), types: Sequence[TypeRecord] | None = None) -> T:
        rec = self._live(call)
        old = tuple(types) if types is not None else (rec,)
        new = TypeRecord(layout, None, COMBINER[kind], ints=tuple(ints),
                         counts=tuple(counts), types=old)
        return type(self)._wrap(new)

    def Create_contiguous(self: T, count: int) -> T:
        """A datatype of *count* consecutive elements."""
        (count,) = _counts("Create_contiguous", [count])
        return self._derive("Create_contiguous", "CONTIGUOUS",
                            combine([(self.layout, 0, count)]), counts=[count])

    def Create_vector(self: T, count: int, blocklength: int, stride: int) -> T:
        """*count* blocks of *blocklength* elements, *stride* elements apart."""
        count, blocklength = _counts("Create_vector", [count, blocklength])
        (stride,) = _ints("Create_vector", [stride], "stride")
        layout = self._strided(count, blocklength, stride * self.layout.extent)
        return self._derive("Create_vector", "VECTOR", layout,
                            counts=[count, blocklength, stride])

    def Create_hvector(self: T, count: int, blocklength: int, stride: int) -> T:
        """*count* blocks of *blocklength* elements, *stride* bytes apart."""
        count, blocklength = _counts("Create_hvector", [count, blocklength])
        (stride,) = _ints("Create_hvector", [stride], "stride")
        layout = self._strided(count, blocklength, stride)
        return self._derive("Create_hvector", "HVECTOR", layout,
                            counts=[count, blocklength, stride])

    def _strided(self, count: int, blocklength: int, stride: int) -> Layout:
        return combine([(self.layout, i * stride, blocklength) for i in range(count)])

    def _indexed(self: T, call: str, kind: str, blocklengths: Any,
                 displacements: Sequence[int], unit: int, block: bool) -> T:
        displs = _ints(call, displacements, "displacements")
        if block:
            (bl,) = _counts(call, [blocklengths])
            lengths = [bl] * len(displs)
            counts = [len(displs), bl, *displs]
        else:
            _same_length(call, blocklengths=blocklengths, displacements=displs)
            lengths = _counts(call, blocklengths, "blocklengths")
            counts = [len(lengths), *lengths, *displs]
        layout = combine([(self.layout, d * unit, n) for n, d in zip(lengths, displs)])
        return self._derive(call, kind, layout, counts=counts)

    def Create_indexed(self: T, blocklengths: Sequence[int],
                       displacements: Sequence[int]) -> T:
        """Blocks of *blocklengths* elements at *displacements* (in extents)."""
        return self._indexed("Create_indexed", "INDEXED",
                             blocklengths, displacements, self.layout.extent, False)

    def Create_hindexed(self: T, blocklengths: Sequence[int],
                        displacements: Sequence[int]) -> T:
        """Blocks of *blocklengths* elements at *displacements* (in bytes)."""
        return self._indexed("Create_hindexed", "HINDEXED",
                             blocklengths, displacements, 1, False)

    def Create_indexed_block(self: T, blocklength: int,
                             displacements: Sequence[int]) -> T:
        """Blocks of *blocklength* elements at *displacements* (in extents)."""
        return self._indexed("Create_indexed_block",
                             "INDEXED_BLOCK", blocklength,
                             displacements, self.layout.extent, True)

    def Create_hindexed_block(self: T, blocklength: int,
                              displacements: Sequence[int]) -> T:
        """Blocks of *blocklength* elements at *displacements* (in bytes)."""
        return self._indexed("Create_hindexed_block",
                             "HINDEXED_BLOCK", blocklength,
                             displacements, 1, True)

    @classmethod
    def Create_struct(cls: type[T], blocklengths: Sequence[int], displacements: Sequence[int],
                      datatypes: Sequence[Datatype]) -> T:
        """Blocks of *blocklengths* elements of *datatypes* at *displacements* (bytes)."""
        call = "Create_struct"
        _same_length(call, blocklengths=blocklengths, displacements=displacements,
                     datatypes=datatypes)
        lengths = _counts(call, blocklengths, "blocklengths")
        displs = _ints(call, displacements, "displacements")
        recs = [t._live(call) for t in datatypes]
        layout = combine([(r.layout, d, n) for n, d, r in zip(lengths, displs, recs)],
                         pad=True)
        new = TypeRecord(layout, None, COMBINER["STRUCT"], counts=(len(lengths), *lengths,
                                                                      *displs), types=tuple(recs))
        return cls._wrap(new)

    def Create_resized(self: T, lb: int, extent: int) -> T:
        """The same data with lower bound *lb* and extent *extent* (bytes)."""
        lb, extent = _ints("Create_resized", [lb, extent], "lb and extent")
        layout = Layout(self.layout.blocks, lb, extent, self.layout.align)
        return self._derive("Create_resized", "RESIZED", layout,
                            counts=[lb, extent])

    Resized = Create_resized

    def Create_subarray(self: T, sizes: Sequence[int], subsizes: Sequence[int],
                        starts: Sequence[int], order: int = ORDER_C) -> T:
        """The ``subsizes`` block at ``starts`` of a ``sizes`` array (C or Fortran order)."""
        call = "Create_subarray"
        _same_length(call, sizes=sizes, subsizes=subsizes, starts=starts)
        sizes, subsizes = _counts(call, sizes, "sizes"), _counts(call, subsizes, "subsizes")
        starts = _counts(call, starts, "starts")
        if not sizes or any(n <= 0 or st + sub > n
                            for n, sub, st in zip(sizes, subsizes, starts)):
            raise type_error(call, f"subarray {list(subsizes)} at {list(starts)} does not "
                             f"fit in {list(sizes)}", ERR_ARG)
        if order not in (ORDER_C, ORDER_FORTRAN):
            raise type_error(call, f"order must be ORDER_C or ORDER_FORTRAN, got {order!r}",
                             ERR_ARG)
        index = [range(st, st + sub) for sub, st in zip(subsizes, starts)]
        layout = self._grid(sizes, index, order)
        return self._derive(call, "SUBARRAY", layout,
                            ints=[len(sizes), order], counts=[*sizes, *subsizes, *starts])

    def _grid(self, gsizes: Sequence[int], index: Sequence[Sequence[int]],
              order: int) -> Layout:
        """The elements at the index lists' product of a *gsizes* array, in *order*;
        lower bound 0 and the extent of the whole array.  Runs of consecutive indices in
        the fastest dimension are one entry each."""
        dims = list(range(len(gsizes)))
        if order == ORDER_FORTRAN:
            dims.reverse()
        rows = [0]
        for d in dims[:-1]:   # slowest to second fastest dimension
            rows = [r * gsizes[d] + int(i) for r in rows for i in index[d]]
        rows = [r * gsizes[dims[-1]] for r in rows]
        fast = [int(i) for i in index[dims[-1]]]
        runs: list[list[int]] = []
        for i in fast:
            if runs and runs[-1][0] + runs[-1][1] == i:
                runs[-1][1] += 1
            else:
                runs.append([i, 1])
        old, ext = self.layout, self.layout.extent
        total = combine([(old, (r + start) * ext, n) for r in rows for start, n in runs])
        whole = int(np.prod(gsizes)) * ext
        return Layout(total.blocks, 0, whole, total.align)

    def Create_darray(self: T, size: int, rank: int, gsizes: Sequence[int],
                      distribs: Sequence[int], dargs: Sequence[int], psizes: Sequence[int],
                      order: int = ORDER_C) -> T:
        """Process *rank*'s part of a *gsizes* array distributed over a *psizes* grid of
        *size* processes (block, cyclic or not distributed in each dimension)."""
        call = "Create_darray"
        _same_length(call, gsizes=gsizes, distribs=distribs, dargs=dargs, psizes=psizes)
        gsizes, psizes = _counts(call, gsizes, "gsizes"), _counts(call, psizes, "psizes")
        distribs, dargs = _ints(call, distribs, "distribs"), _ints(call, dargs, "dargs")
        if int(np.prod(psizes)) != size or not 0 <= rank < size:
            raise type_error(call, f"rank {rank} of {size} processes on a {psizes} grid",
                             ERR_ARG)
        if order not in (ORDER_C, ORDER_FORTRAN):
            raise type_error(call, f"order must be ORDER_C or ORDER_FORTRAN, got {order!r}",
                             ERR_ARG)
        coords, rest = [], rank
        for p in reversed(psizes):   # the process grid is row-major (section 5.1.4)
            coords.append(rest % p)
            rest //= p
        coords.reverse()
        index = [_owned(call, *args) for args in zip(gsizes, distribs, dargs, psizes, coords)]
        layout = self._grid(gsizes, index, order)
        ints = [size, rank, len(gsizes), *distribs, *dargs, *psizes, order]
        return self._derive(call, "DARRAY", layout, ints=ints,
                            counts=gsizes)

    # -- predefined datatypes ----------------------------------------------------------
    @classmethod
    def _f90(cls: type[T], kind: str, combiner: str, size: int, params: tuple[int, ...]) -> T:
        key = (COMBINER[combiner], *params)
        rec = _F90.get(key)
        if rec is None:
            char = _CHARS[kind][size]
            typestr = f"{kind}{size}"
            rec = TypeRecord(Layout([(0, size)], 0, size, max(np.dtype(typestr).alignment, 1)),
                             f"{combiner.lower()}{params}", COMBINER[combiner],
                             dtype=np.dtype(typestr), ints=params)
            rec.typechar, rec.typestr, rec.code = char, typestr, typestr
            rec.align = rec.layout.align
            _F90[key] = rec
        return cls._wrap(rec)

    @classmethod
    def Create_f90_integer(cls: type[T], r: int) -> T:
        """The integer kind of range at least 10**r (``SELECTED_INT_KIND(r)``)."""
        for size, digits in ((1, 2), (2, 4), (4, 9), (8, 18)):
            if r <= digits:
                return cls._f90("i", "F90_INTEGER", size, (r,))
        raise type_error("Create_f90_integer", f"no integer kind has range {r}", ERR_ARG)

    @classmethod
    def _real_size(cls, call: str, p: int, r: int) -> int:
        for size, digits, exp in ((4, 6, 37), (8, 15, 307), (16, 33, 4931)):
            if p <= digits and r <= exp:
                return size
        raise type_error(call, f"no real kind has precision {p} and range {r}", ERR_ARG)

    @classmethod
    def Create_f90_real(cls: type[T], p: int, r: int) -> T:
        """The real kind of precision *p* and range *r* (``SELECTED_REAL_KIND(p, r)``)."""
        size = cls._real_size("Create_f90_real", p, r)
        return cls._f90("f", "F90_REAL", size, (p, r))

    @classmethod
    def Create_f90_complex(cls: type[T], p: int, r: int) -> T:
        """The complex kind of precision *p* and range *r*."""
        size = 2 * cls._real_size("Create_f90_complex", p, r)
        return cls._f90("c", "F90_COMPLEX", size, (p, r))

    @classmethod
    def Match_size(cls: type[T], typeclass: int, size: int) -> T:
        """The predefined Fortran datatype of *typeclass* (``TYPECLASS_*``) and *size*."""
        name = _MATCH.get(typeclass, {}).get(size)
        if name is None:
            raise type_error("Match_size", f"no datatype of type class {typeclass} has size "
                             f"{size}", ERR_ARG)
        return cls._wrap(cls._predefined[name]._rec)

    @classmethod
    def Get_value_index(cls: type[T], value: Datatype, index: Datatype) -> T:
        """The predefined pair type of *value* and *index* (``DOUBLE_INT`` ...), or
        ``DATATYPE_NULL`` when MPI has none."""
        value._live("Get_value_index")
        index._live("Get_value_index")
        pred = cls._predefined
        if index == pred["INT"]:
            for vname, pair in _PAIRS.items():
                if value == pred[vname]:
                    return cls._wrap(pred[pair]._rec)
        return cls._wrap(NULL_REC)


def _owned(call: str, gsize: int, distrib: int, darg: int, psize: int,
           coord: int) -> list[int]:
    """Global indices of one dimension that grid coordinate *coord* owns, in order."""
    if distrib == DISTRIBUTE_NONE:
        return list(range(gsize))
    if distrib == DISTRIBUTE_BLOCK:
        block = -(-gsize // psize) if darg == DISTRIBUTE_DFLT_DARG else darg
        if block <= 0 or block * psize < gsize:
            raise type_error(call, f"block size {darg} too small for {gsize} elements on "
                             f"{psize} processes", ERR_ARG)
        return list(range(coord * block, min(coord * block + block, gsize)))
    if distrib == DISTRIBUTE_CYCLIC:
        step = 1 if darg == DISTRIBUTE_DFLT_DARG else darg
        if step <= 0:
            raise type_error(call, f"cyclic block size {darg} must be > 0", ERR_ARG)
        return [i for s in range(coord * step, gsize, psize * step)
                for i in range(s, min(s + step, gsize))]
    raise type_error(call, f"unknown distribution {distrib}", ERR_ARG)
