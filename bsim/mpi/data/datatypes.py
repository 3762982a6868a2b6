"""MPI datatypes: mpi4py's ``MPI.Datatype`` handles, the predefined ones, numpy equivalents.

A :class:`Datatype` is a handle of a :class:`~bsim.mpi.data.datatype_records.TypeRecord` (the
MPI datatype): copies (``Datatype(t)``, ``fromhandle``) are equal to it, ``Free`` nulls
the one handle it is called on, and equality, truth and pickling follow mpi4py 4.1.2.
Each handle also keeps the record's layout, size, extent and numpy dtype in its own
slots, which is what the hot path reads (``bsim/mpi/data/buffers.py``).  The constructors
are in ``datatype_constructors.py``, decoding in ``datatype_introspection.py``, packing
in ``packing.py``.  Pure queries and constructors charge no simulated time.

The simulator charges a message by its size; the layout (``bsim/mpi/data/typemap.py``)
moves a real buffer's bytes where a derived datatype puts them, and the numpy
dtype lets reductions interpret predefined types.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..common.attributes import (
    DATATYPE,
    KEYVALS,
    copy_attrs,
    create_keyval,
    delete_attr,
    drop_attrs,
    free_keyval,
    get_attr,
    set_attr,
)
from .datatype_constructors import DatatypeConstructors
from .datatype_introspection import DatatypeIntrospection
from .datatype_records import COMBINER, NULL_REC, TypeRecord, record_of_handle, type_error
from .datatype_table import NULL_ALIASES, PAIR_BLOCKS, PREDEFINED_TABLE, TYPEDICT
from .packing import PAIR_MEMBERS, DatatypePacking
from .typemap import Layout

__all__ = ["Datatype", "PREDEFINED", "DATATYPE_NULL", "CONTIGUOUS_PREDEFINED", "from_typecode",
           "from_numpy", "plain_numpy_type"]

_CONST: set[int] = set()   # ids of the module's constant handles (free() leaves them alone)


class Datatype(DatatypeConstructors, DatatypeIntrospection, DatatypePacking):
    """An MPI datatype handle (mpi4py's ``MPI.Datatype``).

    ``Datatype()`` is a null handle, ``Datatype(t)`` another handle of *t*'s datatype.
    """

    __slots__ = ("__weakref__",)

    def __new__(cls, datatype: Datatype | None = None) -> Datatype:
        if datatype is None:
            datatype = DATATYPE_NULL
        elif not isinstance(datatype, Datatype):
            raise TypeError(f"{cls.__name__}(): expected a Datatype, got "
                            f"{type(datatype).__name__}")
        return cls._wrap(datatype._rec)

    @property
    def _handle(self) -> TypeRecord:
        """What attributes are keyed by (``bsim/mpi/common/attributes.py``): the MPI datatype."""
        return self._rec

    # -- object model (mpi4py's objmodel) -------------------------------------------
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Datatype):
            return NotImplemented
        return self._rec is other._rec

    def __ne__(self, other: object) -> bool:
        if not isinstance(other, Datatype):
            return NotImplemented
        return self._rec is not other._rec

    def __hash__(self) -> int:
        """mpi4py's handles are unhashable."""
        raise TypeError(f"unhashable type: '{type(self).__name__}'")

    def __bool__(self) -> bool:
        return self._rec is not NULL_REC

    def __reduce__(self) -> Any:
        """Named datatypes pickle by name (the module's own object is loaded back as
        itself, another handle as an equal copy); derived ones as their constructor."""
        rec = self._rec
        if rec is NULL_REC or rec.combiner == COMBINER["NAMED"]:
            const = _BY_REC.get(id(rec))
            if const is None:
                const = DATATYPE_NULL
            if self is const:
                return _NAME_OF[id(const)]
            return (_copy_of, (type(self), const))
        base, combiner, params = self.decode()
        return (_create, (base, combiner, params))

    @property
    def handle(self) -> int:
        """The MPI handle (``fromhandle`` gives an equal object back)."""
        return self._rec.handle

    @classmethod
    def fromhandle(cls, handle: int) -> Datatype:
        """Another handle of the datatype whose ``handle`` is *handle*."""
        rec = record_of_handle(handle)
        if rec is None:
            raise type_error("fromhandle", f"no datatype has handle {handle!r}")
        return Datatype._wrap(rec)

    def toint(self) -> int:
        """The integer handle (``fromint`` gives an equal object back)."""
        return self._rec.handle

    py2f = toint

    @classmethod
    def fromint(cls, arg: int) -> Datatype:
        """The datatype of integer handle *arg*."""
        return cls.fromhandle(arg)

    f2py = fromint

    def free(self) -> None:
        """``Free`` unless this is a module constant or null; a handle of a predefined
        datatype just becomes null (mpi4py's ``safefree``)."""
        if id(self) in _CONST or self._rec is NULL_REC:
            return
        if self._rec.predefined:
            self._nullify()
            return
        self.Free()

    def _nullify(self) -> None:
        rec = NULL_REC
        self._rec, self.layout = rec, rec.layout
        self.size, self.extent, self.dtype = 0, 0, None

    # -- accessors --------------------------------------------------------------------
    def Get_size(self) -> int:
        """Size in bytes of the data in one element."""
        self._live("Get_size")
        return self.size

    def Get_extent(self) -> tuple[int, int]:
        """(lower bound, extent) in bytes."""
        self._live("Get_extent")
        return self.layout.lb, self.extent

    lb = property(lambda self: self.Get_extent()[0], doc="Lower bound in bytes.")
    ub = property(lambda self: sum(self.Get_extent()), doc="Upper bound (``lb + extent``).")

    def Get_true_extent(self) -> tuple[int, int]:
        """(true lower bound, true extent) in bytes: the bytes the data covers."""
        self._live("Get_true_extent")
        layout = self.layout
        return layout.true_lb, layout.true_ub - layout.true_lb

    true_lb = property(lambda self: self.Get_true_extent()[0], doc="True lower bound.")
    true_extent = property(lambda self: self.Get_true_extent()[1], doc="True extent.")
    true_ub = property(lambda self: sum(self.Get_true_extent()), doc="True upper bound.")

    @property
    def label(self) -> str:
        """bsim's description of the datatype in reports (``INT``, ``vector(INT)``)."""
        return self._rec.label

    def Get_name(self) -> str:
        """The datatype's name (``MPI_INT``; ``""`` for a derived one until named)."""
        return self._rec.name

    def Set_name(self, name: str) -> None:
        """Name the datatype."""
        self._live("Set_name").name = str(name)

    name = property(Get_name, Set_name, doc="The datatype's name.")

    # -- life cycle -------------------------------------------------------------------
    def Commit(self) -> Datatype:
        """Commit the datatype (nothing to prepare here); returns it."""
        self._live("Commit").committed = True
        return self

    def Free(self) -> None:
        """Free the datatype: this handle becomes ``DATATYPE_NULL`` (its attributes'
        delete callbacks run); ``ERR_TYPE`` for a predefined one."""
        rec = self._live("Free")
        if rec.predefined:
            raise type_error("Free", f"cannot free the predefined {rec.label}")
        if KEYVALS:   # no key, no attribute (Free is frequent in mpi4py.util.dtlib)
            drop_attrs(self)
        self._rec, self.layout = NULL_REC, NULL_REC.layout   # _nullify, inlined
        self.size = self.extent = 0
        self.dtype = None

    def Dup(self) -> Datatype:
        """A copy of the datatype (combiner ``DUP``; attributes copied by their keys'
        copy callbacks)."""
        rec = self._live("Dup")
        new = TypeRecord(rec.layout, rec.label, COMBINER["DUP"], dtype=rec.dtype,
                         types=(rec,))
        new.committed = rec.committed   # MPI_Type_dup keeps the committed state
        out = type(self)._wrap(new)
        if KEYVALS:
            copy_attrs(self, out)
        return out

    Create_dup = Dup

    @classmethod
    def Create_keyval(cls, copy_fn: Any = None, delete_fn: Any = None,
                      nopython: bool = False) -> int:
        """A new key for datatypes' attributes (``bsim/mpi/common/attributes.py``)."""
        return create_keyval(DATATYPE, copy_fn, delete_fn, nopython)

    @classmethod
    def Free_keyval(cls, keyval: int) -> int:
        """Free a datatypes' key (``KEYVAL_INVALID``); attributes still set with it keep
        it until they are deleted (MPI 4.1 Sec. 7.7.4)."""
        return free_keyval(DATATYPE, keyval)

    def Get_attr(self, keyval: int) -> Any:
        """The calling rank's attribute value for *keyval*, or None if it has none;
        ``ERR_KEYVAL`` if *keyval* is not a datatypes' key."""
        return get_attr(self, keyval, DATATYPE)

    def Set_attr(self, keyval: int, attrval: Any) -> None:
        """Set the calling rank's attribute value for *keyval*."""
        set_attr(self, keyval, attrval, DATATYPE)

    def Delete_attr(self, keyval: int) -> None:
        """Delete the calling rank's attribute value for *keyval*."""
        delete_attr(self, keyval, DATATYPE)

    # -- typecodes ----------------------------------------------------------------------
    @classmethod
    def fromcode(cls, code: str) -> Datatype:
        """The predefined datatype of a typecode (``"d"``, ``"i4"``, ``"F"``, ...)."""
        try:
            return PREDEFINED[TYPEDICT[code]]
        except (KeyError, TypeError):
            raise ValueError(f"cannot map code {code!r} to MPI datatype") from None

    def __repr__(self) -> str:
        return f"<Datatype {self._rec.label} size={self.size}>"


def _copy_of(cls: type[Datatype], const: Datatype) -> Datatype:
    """Unpickle a copy of a named datatype's handle."""
    return cls(const)


def _create(base: Datatype, combiner: str, params: dict[str, Any]) -> Datatype:
    """Unpickle a derived datatype: build it again from its constructor's arguments."""
    if combiner == "DUP":
        return base.Dup().Commit()
    if combiner.startswith("F90_"):
        return getattr(Datatype, f"Create_{combiner.lower()}")(**params)
    if combiner == "VALUE_INDEX":
        return Datatype.Get_value_index(params["value"], params["index"])
    maker = Datatype if combiner == "STRUCT" else base
    return getattr(maker, f"Create_{combiner.lower()}")(**params).Commit()


def mark_predefined(dt: Datatype) -> Datatype:
    """Record *dt* as a module constant (``free()`` leaves it alone); returns it."""
    _CONST.add(id(dt))
    return dt


PREDEFINED: dict[str, Datatype] = {}
"""Every predefined datatype of ``mpi4py.MPI`` by name (aliases are the same object)."""
_BY_REC: dict[int, Datatype] = {}     # id(record) -> the module's constant of it
_NAME_OF: dict[int, str] = {}         # id(constant) -> its name (pickling)

DATATYPE_NULL: Datatype = mark_predefined(Datatype._wrap(NULL_REC))
PREDEFINED["DATATYPE_NULL"] = DATATYPE_NULL
_BY_REC[id(NULL_REC)] = DATATYPE_NULL
_NAME_OF[id(DATATYPE_NULL)] = "DATATYPE_NULL"


def _numpy(typestr: str) -> np.dtype | None:
    if typestr.startswith("V"):
        return None
    try:
        return np.dtype(typestr)
    except TypeError:
        return None


for (_name, _aliases, _mname, _handle, _size, _lb, _extent, _tlb, _text, _char, _str, _code,
     _align) in PREDEFINED_TABLE:
    _blocks = PAIR_BLOCKS.get(_name, ((0, _size),))
    _rec = TypeRecord(Layout(_blocks, _lb, _extent, max(_align, 1)), _name, name=_mname,
                      handle=_handle, dtype=_numpy(_str))
    _rec.typechar, _rec.typestr, _rec.code, _rec.align = _char, _str, _code, _align
    _dt = mark_predefined(Datatype._wrap(_rec))
    _BY_REC[id(_rec)] = _dt
    _NAME_OF[id(_dt)] = _name
    for _n in (_name, *_aliases):
        PREDEFINED[_n] = _dt
for _n in NULL_ALIASES:   # not in this MPICH: null handles, as mpi4py has them
    PREDEFINED[_n] = mark_predefined(Datatype._wrap(NULL_REC))
    _NAME_OF[id(PREDEFINED[_n])] = _n


globals().update(PREDEFINED)   # pickles name them here, as mpi4py names them in mpi4py.MPI

for _pair, _value in (("SHORT_INT", "SHORT"), ("INT_INT", "INT"), ("LONG_INT", "LONG"),
                     ("FLOAT_INT", "FLOAT"), ("DOUBLE_INT", "DOUBLE"),
                     ("LONG_DOUBLE_INT", "LONG_DOUBLE")):
    PAIR_MEMBERS[_pair] = (PREDEFINED[_value]._rec, PREDEFINED["INT"]._rec)


def from_typecode(code: str) -> Datatype:
    """The datatype for an array typecode such as ``"d"``, ``"i"``, ``"B"``."""
    name = TYPEDICT.get(code)
    if name is not None:
        return PREDEFINED[name]
    try:
        return from_numpy(np.dtype(code))
    except TypeError:
        raise ValueError(f"unknown datatype typecode {code!r}") from None


#: ids of the predefined datatypes whose elements are their size bytes, abutting (not the
#: pair types, not the null handles): a buffer of n bytes holds n / size of them
CONTIGUOUS_PREDEFINED = frozenset(id(dt) for dt in PREDEFINED.values()
                                  if dt.size > 0 and dt.layout.contiguous)

_PLAIN: dict[int, tuple[np.dtype, Datatype]] = {}   # id(dtype) -> (dtype, its datatype)
_PLAIN_MAX = 256   # dtype objects remembered, at most (a program may make them by the 1000)


def plain_numpy_type(dtype: np.dtype) -> Datatype | None:
    """The predefined datatype of *dtype* when nothing about it is refused or converted
    (native byte order, no fields, no objects, a predefined type of its size: what
    :func:`from_numpy` returns first), else None.  Remembered per dtype object (kept, so
    its id is not reused): an array of one is what programs with real buffers pass."""
    known = _PLAIN.get(id(dtype))
    if known is not None and known[0] is dtype:
        return known[1]
    if not dtype.isnative or dtype.fields is not None or dtype.hasobject:
        return None
    name = TYPEDICT.get(dtype.char)
    if name is None or PREDEFINED[name].size != dtype.itemsize:
        return None
    if len(_PLAIN) < _PLAIN_MAX:
        _PLAIN[id(dtype)] = (dtype, PREDEFINED[name])
    return PREDEFINED[name]


def from_numpy(dtype: np.dtype) -> Datatype:
    """The predefined datatype matching a numpy dtype, else an anonymous one of its size."""
    name = TYPEDICT.get(dtype.char) if dtype.isnative else None
    if name is not None and PREDEFINED[name].size == dtype.itemsize:
        return PREDEFINED[name]
    for dt in _BY_REC.values():
        if dt.dtype is not None and dt.dtype == dtype and dt.dtype.kind == dtype.kind:
            return dt
    rec = TypeRecord(Layout([(0, dtype.itemsize)], 0, dtype.itemsize,
                            max(dtype.alignment, 1)), f"numpy:{dtype}", COMBINER["CONTIGUOUS"],
                     dtype=dtype, counts=(dtype.itemsize,), types=(PREDEFINED["BYTE"]._rec,))
    return Datatype._wrap(rec)


Datatype._predefined = PREDEFINED
Datatype._null = DATATYPE_NULL
