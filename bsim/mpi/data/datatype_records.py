"""The MPI objects behind ``MPI.Datatype`` handles: layout, name, handle and envelope.

mpi4py's ``Datatype`` is a Python object holding an MPI handle: ``Datatype(INT)`` and
``Datatype.fromhandle(INT.handle)`` are other objects for the same MPI datatype, equal
to ``INT``; ``Free`` makes the object it is called on ``DATATYPE_NULL`` and leaves the
others alone.  bsim keeps the MPI datatype as a :class:`TypeRecord` shared by every
:class:`~bsim.mpi.data.datatypes.Datatype` object of it, with what MPI 4.1 says a datatype
has: its layout (typemap, ``bsim/mpi/data/typemap.py``), its name (``MPI_Type_get_name``),
its handle, and how it was made (``MPI_Type_get_envelope`` / ``MPI_Type_get_contents``,
section 5.1.13: the combiner and the integers, addresses, large counts and datatypes
given to the constructor).  Records are per process in MPI; here the predefined ones
are shared by every rank (they never change but for ``Set_name``) and a derived one
belongs to the rank that made it.
"""

from __future__ import annotations

from itertools import count
from typing import Any, TypeVar
from weakref import WeakValueDictionary

from ...engine.rank import current_or_none
from ...errors import MPIUsageError
from .datatype_table import NULL_HANDLE
from .typemap import Layout

__all__ = ["TypeRecord", "NULL_REC", "record_of_handle", "COMBINER", "COMBINER_NAMES",
           "type_error", "DatatypeBase"]

COMBINER = {
    "NAMED": 1, "DUP": 2, "CONTIGUOUS": 3, "VECTOR": 4, "HVECTOR": 6, "INDEXED": 7,
    "HINDEXED": 9, "INDEXED_BLOCK": 10, "STRUCT": 12, "SUBARRAY": 13, "DARRAY": 14,
    "F90_REAL": 15, "F90_COMPLEX": 16, "F90_INTEGER": 17, "RESIZED": 18,
    "HINDEXED_BLOCK": 19, "VALUE_INDEX": 20,
}
"""MPI's combiner values (those of MPICH, as ``MPI.COMBINER_*``)."""

COMBINER_NAMES = {value: name for name, value in COMBINER.items()}

_PREDEF_COMBINERS = {COMBINER["NAMED"], COMBINER["VALUE_INDEX"], COMBINER["F90_INTEGER"],
                     COMBINER["F90_REAL"], COMBINER["F90_COMPLEX"]}

_DERIVED_HANDLES = count(0xCC000000)   # MPICH numbers derived datatypes from 0xcc000000
_BY_HANDLE: WeakValueDictionary[int, TypeRecord] = WeakValueDictionary()


class TypeRecord:
    """One MPI datatype: what every handle of it shares.

    ``layout`` (bytes of one element), ``dtype`` (numpy type of a predefined one, for
    reductions), ``name`` (``Get_name``), ``label`` (bsim's description in reports),
    ``handle``, ``combiner`` with ``ints``/``addrs``/``counts``/``types`` (the envelope
    and contents), and for predefined ones ``typechar``/``typestr``/``code``/``align``
    (mpi4py's character code, type string, ``tocode()`` and ``MPI._typealign``).
    """

    __slots__ = ("layout", "dtype", "name", "_label", "_handle", "combiner", "ints", "addrs",
                 "counts", "types", "typechar", "typestr", "code", "align", "predefined",
                 "committed", "params", "__weakref__")

    def __init__(self, layout: Layout, label: str | None, combiner: int = COMBINER["NAMED"],
                 name: str = "", handle: int | None = None, dtype: Any = None,
                 ints: tuple[int, ...] = (), addrs: tuple[int, ...] = (),
                 counts: tuple[int, ...] = (), types: tuple[TypeRecord, ...] = ()) -> None:
        self.layout = layout
        self.dtype = dtype
        self._label = label   # None: made from the combiner and old types when asked
        self.params: dict[str, Any] | None = None   # decode()'s, once asked (introspection)
        self.name = name
        self.combiner = combiner
        # named, or one of MPI's other predefined kinds (value-index, Fortran 90)
        self.predefined = combiner in _PREDEF_COMBINERS
        # a derived type may carry data only once committed (MPI 4.0 Sec. 5.1.9); the
        # state is the type's, shared by all its handles
        self.committed = self.predefined
        self.ints, self.addrs, self.counts, self.types = ints, addrs, counts, types
        self.typechar: str | None = None
        self.typestr: str | None = None
        self.code: str | None = None
        self.align = 0
        self._handle = handle   # a derived datatype's is numbered when first asked for
        if handle is not None:
            _BY_HANDLE[handle] = self

    @property
    def label(self) -> str:
        """bsim's description of the datatype in reports (``INT``, ``vector(INT)``)."""
        label = self._label
        if label is None:
            kind = COMBINER_NAMES[self.combiner].lower()
            label = self._label = f"{kind}({','.join(t.label for t in self.types)})"
        return label

    @property
    def handle(self) -> int:
        """The MPI handle of this datatype."""
        handle = self._handle
        if handle is None:
            handle = self._handle = next(_DERIVED_HANDLES)
            _BY_HANDLE[handle] = self
        return handle

    def envelope(self) -> tuple[int, int, int, int, int]:
        """``(ni, na, nc, nd, combiner)`` as ``MPI_Type_get_envelope_c`` gives it."""
        return (len(self.ints), len(self.addrs), len(self.counts), len(self.types),
                self.combiner)


NULL_REC = TypeRecord(Layout([], 0, 0), "DATATYPE_NULL", name="MPI_DATATYPE_NULL",
                      handle=NULL_HANDLE)
"""The null datatype (``MPI_DATATYPE_NULL``): its handles are falsy."""


def record_of_handle(handle: int) -> TypeRecord | None:
    """The live datatype with this handle, if any."""
    return _BY_HANDLE.get(int(handle))


def type_error(call: str, what: str, error_class: int = 3) -> MPIUsageError:
    """The error of a datatype call (``ERR_TYPE`` unless told), naming the calling rank."""
    vr = current_or_none()
    where = f"rank {vr.rank}: " if vr is not None else ""
    return MPIUsageError(f"{where}Datatype.{call}: {what}", error_class=error_class)


D = TypeVar("D", bound="DatatypeBase")


class DatatypeBase:
    """What every datatype handle holds: its record and, for the hot path, the record's
    layout, size, extent and numpy dtype (``bsim/mpi/data/datatypes.py`` is the class)."""

    __slots__ = ("size", "extent", "dtype", "layout", "_rec")
    size: int
    extent: int
    dtype: Any
    layout: Layout
    _rec: TypeRecord

    @classmethod
    def _wrap(cls: type[D], rec: TypeRecord) -> D:
        """A new handle of *rec*."""
        self = object.__new__(cls)
        layout = rec.layout
        self._rec = rec
        self.layout = layout
        self.size = layout.size
        self.extent = layout.extent
        self.dtype = rec.dtype
        return self

    @property
    def committed(self) -> bool:
        """Whether the type was committed (predefined types always are)."""
        return bool(self._rec.committed)

    def _live(self, call: str) -> TypeRecord:
        """The datatype, or ``ERR_TYPE`` for a null handle."""
        rec = self._rec
        if rec is NULL_REC:
            raise type_error(call, "invalid datatype DATATYPE_NULL")
        return rec
