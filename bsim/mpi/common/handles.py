"""MPI handle values of bsim's handle objects, and mpi4py's ``MPI._sizeof``/``_addressof``/
``_handleof``.

mpi4py's handle classes offer ``handle`` (the MPI handle as an unsigned int),
``fromhandle``, ``toint``/``fromint`` (``MPI_X_toint``) and ``py2f``/``f2py`` (the Fortran
handle).  bsim's communicators, groups, operations, requests and matched messages are
Python objects, so :class:`HandleValues` numbers them: the predefined ones with the
values MPICH gives them (as mpi4py 4.1.2 on MPICH 4.x shows them), any other one with
a number from MPICH's ranges the first time its handle is asked for, kept with the
object so that ``fromhandle`` returns another object for the same handle, equal to it.
As in MPICH, ``toint`` and ``py2f`` are the handle as a C ``int`` (negative above
``2**31``).  A class mixes :class:`HandleValues` in and says what identifies its MPI
object (``_handle_identity``: None for a null handle) and its kind (``_handle_kind``).
"""

from __future__ import annotations

import ctypes
from itertools import count
from typing import Any, ClassVar, TypeVar

__all__ = ["HandleValues", "register_constant", "subclassable", "sync_addressed", "_sizeof",
           "_addressof", "_handleof"]

H = TypeVar("H", bound="HandleValues")

NULLS = {"Comm": 0x04000000, "Group": 0x08000000, "Op": 0x18000000,
         "Request": 0x2C000000, "Message": 0x2C000000}
"""MPICH's null handle of each kind (``MPI_COMM_NULL`` ...)."""
_FIRST = {"Comm": 0x84000000, "Group": 0x88000000, "Op": 0x98000000,
          "Request": 0xAC000000, "Message": 0xAC800000}
"""Where MPICH starts numbering the objects a program creates, per kind."""

_counters = {kind: count(first) for kind, first in _FIRST.items()}
_VALUE_OF: dict[int, int] = {}            # id(identity) -> handle value
_OBJECT_OF: dict[tuple[str, int], Any] = {}   # (kind, value) -> an object of that handle
_KEEP: dict[int, Any] = {}                # id(identity) -> identity (ids stay unique)


def register_constant(obj: Any, value: int) -> None:
    """Give the predefined handle *obj* MPICH's handle *value*."""
    ident = obj._handle_identity()
    if ident is not None:
        _VALUE_OF[id(ident)] = value
        _KEEP[id(ident)] = ident
    _OBJECT_OF[(obj._handle_kind, value)] = obj


def _signed(value: int) -> int:
    return value - (1 << 32) if value >= 1 << 31 else value


class HandleValues:
    """``handle``, ``fromhandle``, ``toint``/``fromint``, ``py2f``/``f2py``."""

    __slots__ = ()
    _handle_kind: ClassVar[str]

    def _handle_identity(self) -> object | None:
        """What all objects of this MPI handle share; None for a null handle."""
        raise NotImplementedError

    @property
    def handle(self) -> int:
        """The MPI handle (``fromhandle`` gives an equal object back)."""
        kind = self._handle_kind
        ident = self._handle_identity()
        if ident is None:
            return NULLS[kind]
        value = _VALUE_OF.get(id(ident))
        if value is None:
            value = _VALUE_OF[id(ident)] = next(_counters[kind])
            _KEEP[id(ident)] = ident
            _OBJECT_OF[(kind, value)] = self
        return value

    @classmethod
    def fromhandle(cls: type[H], handle: int) -> H:
        """Another object for the MPI handle *handle* (equal to the one it came from)."""
        value = int(handle) & 0xFFFFFFFF
        obj = _OBJECT_OF.get((cls._handle_kind, value))
        if obj is None:
            if value != NULLS[cls._handle_kind]:
                raise ValueError(f"{cls.__name__}.fromhandle: no object has handle {handle}")
            return cls()
        target: type[H] = cls   # Comm.fromhandle of a Cartcomm's handle is a Cartcomm
        kind = type(obj)
        if cls.__module__.startswith("bsim.") and kind.__module__.startswith("bsim.") \
                and issubclass(kind, cls):
            target = kind
        return target(obj)  # type: ignore[call-arg]

    def toint(self) -> int:
        """The integer handle (``MPI_X_toint``: the handle as a C int)."""
        return _signed(self.handle)

    py2f = toint

    @classmethod
    def fromint(cls: type[H], arg: int) -> H:
        """The object of integer (or Fortran) handle *arg*."""
        return cls.fromhandle(arg)

    f2py = fromint


_SUBCLASSABLE: dict[type, type] = {}


_HEAPTYPE = 1 << 9   # Py_TPFLAGS_HEAPTYPE: a class defined in Python


def _new_taking_args(cls: type, *args: Any, **kwargs: Any) -> Any:
    for base in cls.__mro__:   # the first built-in base allocates (object, or a compiled one)
        if not base.__flags__ & _HEAPTYPE:
            return base.__new__(cls)
    raise AssertionError("every class derives from object")


def subclassable(base: type, root: type) -> type:
    """*base* (a subclass of *root*) with a ``__new__`` that takes mpi4py's arguments (the
    handle to copy goes to ``__init__``), for a program's subclass whose ``__new__``
    calls ``super().__new__(cls, handle)``; a class outside *root* stays as it is."""
    if not (isinstance(base, type) and issubclass(base, root)) or "_takes_args" in \
            base.__dict__:
        return base
    shim = _SUBCLASSABLE.get(base)
    if shim is None:
        shim = _SUBCLASSABLE[base] = type(base.__name__, (base,), {
            "__slots__": (), "__new__": _new_taking_args, "_takes_args": True,
            "__module__": base.__module__, "__qualname__": base.__qualname__,
            "__doc__": base.__doc__})
    return shim


# -- mpi4py's private handle helpers ------------------------------------------------------
_STATUS_SIZE = 20   # sizeof(MPI_Status) in MPICH: five ints
_CELLS: dict[int, tuple[Any, Any]] = {}   # id(obj) -> (obj, ctypes storage of its handle)


def _family(arg: Any) -> str | None:
    """The mpi4py class name an object or class stands for (None if none)."""
    cls = arg if isinstance(arg, type) else type(arg)
    if not isinstance(arg, type) and hasattr(arg, "_family"):   # a not-simulated stand-in
        return str(arg._family)
    names = {"Status", "Datatype", "Request", "Message", "Op", "Group", "Info",
             "Errhandler", "Session", "Comm", "Win", "File", "MatchedMessage"}
    for base in cls.__mro__:
        if base.__name__ in names and base.__module__.startswith("bsim."):
            return "Message" if base.__name__ == "MatchedMessage" else base.__name__
    return None


def _sizeof(arg: Any) -> int:
    """Size in bytes of the MPI handle of an MPI object or class (MPICH's: ints, a
    pointer for ``File``, five ints for ``Status``)."""
    family = _family(arg)
    if family is None:
        raise TypeError("expecting an MPI type or instance")
    return {"Status": _STATUS_SIZE, "File": 8}.get(family, 4)


def _handleof(arg: Any) -> int:
    """The MPI handle of an MPI object (for a ``Status``, its address)."""
    family = _family(arg)
    if family is None or isinstance(arg, type):
        raise TypeError("expecting an MPI instance")
    if family == "Status":
        return _addressof(arg)
    handle = getattr(arg, "handle", 0)
    return int(handle) & 0xFFFFFFFFFFFFFFFF


def _sync(obj: Any) -> None:
    """If a program wrote another handle into *obj*'s memory (``_addressof``), make *obj*
    an object of that handle, as writing ``ob_mpi`` does in mpi4py."""
    held = _CELLS.get(id(obj))
    if held is None or held[0] is not obj or not hasattr(held[1], "value"):
        return   # not an address taken, or a Status's five ints
    value = int(held[1].value or 0) & 0xFFFFFFFFFFFFFFFF
    if value == _handleof(obj) & (0xFFFFFFFF if _sizeof(obj) == 4 else ~0):
        return
    new = type(obj).fromhandle(value)
    for klass in type(new).__mro__:
        for slot in klass.__dict__.get("__slots__", ()):
            if slot not in ("__weakref__", "__dict__") and hasattr(new, slot):
                setattr(obj, slot, getattr(new, slot))
    adopt = getattr(obj, "_adopt_handle", None)   # what identity the slots do not hold
    if adopt is not None:
        adopt(new)


def _syncing(compare: Any) -> Any:
    def wrapper(self: Any, other: Any) -> Any:
        _sync(self)
        _sync(other)
        return compare(self, other)
    wrapper.__name__, wrapper.__doc__ = compare.__name__, compare.__doc__
    _SYNCING.add(wrapper)
    return wrapper


_SYNCING: set[Any] = set()   # the comparisons _watch has wrapped


def sync_addressed(a: Any, b: Any) -> None:
    """What ``_watch`` adds to a comparison, for a class whose comparison cannot be
    replaced (an extension type, as ``Request`` compiled): called by its ``__eq__``, it
    reads the handle memory of *a* and *b* once a program has taken an address."""
    if _CELLS:
        _sync(a)
        _sync(b)


def _watch(cls: type) -> None:
    """From the first ``_addressof`` of a *cls* object on, its comparisons read the handle
    memory first (nothing is paid before a program takes an address).  An extension type
    (immutable) is left as it is: its ``__eq__`` calls :func:`sync_addressed` itself."""
    for klass in cls.__mro__:
        if not klass.__flags__ & _HEAPTYPE:
            continue
        for name in ("__eq__", "__ne__"):
            compare = klass.__dict__.get(name)
            if compare is not None and compare not in _SYNCING \
                    and klass.__module__.startswith("bsim."):
                setattr(klass, name, _syncing(compare))


def _addressof(arg: Any) -> int:
    """The address of memory holding the MPI handle of an MPI object (for a ``Status``,
    its five ints); writing another handle there makes the object that handle's."""
    family = _family(arg)
    if family is None or isinstance(arg, type):
        raise TypeError("expecting an MPI instance")
    held = _CELLS.get(id(arg))
    if held is None:
        if family not in ("Status", "File", "Session"):
            _watch(type(arg))
        if family == "Status":
            cell: Any = (ctypes.c_int * 5)(*arg.tomemory())
        elif _sizeof(arg) == 8:
            cell = ctypes.c_uint64(_handleof(arg))
        else:
            cell = ctypes.c_uint32(_handleof(arg) & 0xFFFFFFFF)
        held = _CELLS[id(arg)] = (arg, cell)
    return ctypes.addressof(held[1])
