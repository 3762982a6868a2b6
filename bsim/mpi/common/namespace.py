"""The rest of mpi4py's module namespace: every name a program may import from ``MPI``.

bsim.MPI defines the MPI it simulates elsewhere (``bsim/MPI.py`` and ``bsim/mpi/``);
this module supplies every other public name of ``mpi4py.MPI`` 4.x so that any program
imports: integer constants (their values are those of mpi4py 4.1.2 on MPICH, an
implementation choice in MPI; the predefined datatypes are ``bsim/mpi/data/datatype_table.py``),
and for the families bsim does not simulate (MPI-IO,
error handlers, info objects, intercommunicators, dynamic processes,
...) classes, handles and functions that raise :class:`NotSimulatedError` -- naming
the call and why -- only where they are used.  Generated once from mpi4py 4.1.2 and
checked by ``tests/test_mpi_namespace.py``; ``docs/mpi_coverage.md`` lists what is simulated.
"""

from __future__ import annotations

from typing import Any, NoReturn

from ...errors import MPIUsageError

__all__ = ["NotSimulatedError", "NAMES", "is_stand_in"]


class NotSimulatedError(MPIUsageError, NotImplementedError):
    """A name of mpi4py's API that bsim does not simulate was used."""


REASONS = {
    'File': 'MPI-IO is not simulated: model I/O as bsim.add_time',
    'Errhandler': 'error handlers are not simulated: every error raises (docs/errors.md)',
    'Intercomm': 'intercommunicators are not simulated',
    'BottomType': 'use MPI.BOTTOM',
    'InPlaceType': 'use MPI.IN_PLACE',
    'function': 'bsim models no time or state for it',
}
"""Why each family is not simulated (class name, or ``function``)."""


def not_simulated(name: str, family: str) -> NoReturn:
    """Raise :class:`NotSimulatedError` for *name* of *family*."""
    why = REASONS.get(family, REASONS["function"])
    raise NotSimulatedError(f"MPI.{name} is not simulated: {why} (docs/mpi_coverage.md)")


class _Unsimulated(type):
    """Metaclass of the stand-in classes: any class attribute use names the family."""

    def __getattr__(cls, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        not_simulated(f"{cls.__name__}.{attr}", cls.__name__)


def _stub_class(name: str) -> type:
    doc = f"mpi4py's {name}: not simulated ({REASONS[name]})."
    if name in NULL_HANDLES:   # a family whose null handle programs may hold and compare
        return _Unsimulated(name, (_NullHandle,), {"__slots__": (), "_family": name,
                                                   "__doc__": doc})

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        not_simulated(name, name)
    return _Unsimulated(name, (), {"__init__": __init__, "__doc__": doc})


NULL_HANDLES = {"File": ("FILE_NULL", 0), "Session": ("SESSION_NULL", 0x38000000)}
"""The families whose null handle exists, its name and MPICH's handle value."""


class _NullHandle:
    """Null handles of a family bsim does not simulate (``FILE_NULL``, ``SESSION_NULL``), with
    mpi4py's object model: ``File()`` and ``File(FILE_NULL)`` are equal null handles,
    falsy, unhashable, weakly referable, pickled by name, with ``handle``/``toint``/``py2f``
    and a ``free()`` that does nothing; any other use raises :class:`NotSimulatedError`."""

    __slots__ = ("__weakref__",)
    _family: str

    def __init__(self, other: Any = None) -> None:
        if other is not None and (not isinstance(other, _NullHandle)
                                  or other._family != self._family):
            raise TypeError(f"{self._family}(): expected a {self._family}, got "
                            f"{type(other).__name__}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _NullHandle):
            return NotImplemented
        return self._family == other._family

    def __ne__(self, other: object) -> bool:
        if not isinstance(other, _NullHandle):
            return NotImplemented
        return self._family != other._family

    def __hash__(self) -> int:
        raise TypeError(f"unhashable type: '{self._family}'")

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> Any:
        name = NULL_HANDLES[self._family][0]
        return name if _CONSTANTS.get(name) is self else (type(self), ())

    @property
    def handle(self) -> int:
        """MPICH's null handle of the family."""
        return NULL_HANDLES[self._family][1]

    def toint(self) -> int:
        """The null handle as an int."""
        return self.handle

    py2f = toint

    @classmethod
    def fromhandle(cls, handle: int) -> Any:
        """The null handle (the only one of this family)."""
        if int(handle) != NULL_HANDLES[cls.__name__][1]:
            not_simulated(f"{cls.__name__}.fromhandle({handle})", cls.__name__)
        return cls()

    fromint = f2py = fromhandle

    def free(self) -> None:
        """Nothing to free in a null handle."""

    def __repr__(self) -> str:
        return f"<{self._family} {NULL_HANDLES[self._family][0]} (not simulated)>"

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        not_simulated(f"{NULL_HANDLES[self._family][0]}.{attr}", self._family)


_CONSTANTS: dict[str, Any] = {}


class _Handle:
    """A predefined handle of a family bsim does not simulate (``INFO_NULL``, ...): it can be
    passed around and compared; using it as that family's object raises."""

    __slots__ = ("_name", "_family")

    def __init__(self, name: str, family: str) -> None:
        self._name, self._family = name, family

    def __repr__(self) -> str:
        return f"<{self._family} {self._name} (not simulated)>"

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        not_simulated(f"{self._name}.{attr}", self._family)


def _stub_function(name: str) -> Any:
    def stub(*args: Any, **kwargs: Any) -> NoReturn:
        not_simulated(f"{name}()", "function")
    stub.__name__ = stub.__qualname__ = name
    stub.__doc__ = f"mpi4py's MPI.{name}: not simulated."
    return stub


INT_CONSTANTS = {
    'APPNUM': 1681915917,
    'BSEND_OVERHEAD': 96,
    'COMBINER_CONTIGUOUS': 3,
    'COMBINER_DARRAY': 14,
    'COMBINER_DUP': 2,
    'COMBINER_F90_COMPLEX': 16,
    'COMBINER_F90_INTEGER': 17,
    'COMBINER_F90_REAL': 15,
    'COMBINER_HINDEXED': 9,
    'COMBINER_HINDEXED_BLOCK': 19,
    'COMBINER_HVECTOR': 6,
    'COMBINER_INDEXED': 7,
    'COMBINER_INDEXED_BLOCK': 10,
    'COMBINER_NAMED': 1,
    'COMBINER_RESIZED': 18,
    'COMBINER_STRUCT': 12,
    'COMBINER_SUBARRAY': 13,
    'COMBINER_VALUE_INDEX': 20,
    'COMBINER_VECTOR': 4,
    'COMM_TYPE_HW_GUIDED': 2,
    'COMM_TYPE_HW_UNGUIDED': 3,
    'COMM_TYPE_RESOURCE_GUIDED': 4,
    'DISPLACEMENT_CURRENT': -54278278,
    'DISP_CUR': -54278278,
    'DISTRIBUTE_BLOCK': 121,
    'DISTRIBUTE_CYCLIC': 122,
    'DISTRIBUTE_DFLT_DARG': -49767,
    'DISTRIBUTE_NONE': 123,
    'ERR_ABI': 1073741823,
    'ERR_ACCESS': 20,
    'ERR_AMODE': 21,
    'ERR_ARG': 12,
    'ERR_ASSERT': 53,
    'ERR_BAD_FILE': 22,
    'ERR_BASE': 46,
    'ERR_BUFFER': 1,
    'ERR_COMM': 5,
    'ERR_CONVERSION': 23,
    'ERR_COUNT': 2,
    'ERR_DIMS': 11,
    'ERR_DISP': 52,
    'ERR_DUP_DATAREP': 24,
    'ERR_ERRHANDLER': 80,
    'ERR_FILE': 27,
    'ERR_FILE_EXISTS': 25,
    'ERR_FILE_IN_USE': 26,
    'ERR_GROUP': 8,
    'ERR_INFO': 28,
    'ERR_INFO_KEY': 29,
    'ERR_INFO_NOKEY': 31,
    'ERR_INFO_VALUE': 30,
    'ERR_INTERN': 16,
    'ERR_IN_STATUS': 17,
    'ERR_IO': 32,
    'ERR_KEYVAL': 48,
    'ERR_LASTCODE': 1073741823,
    'ERR_LOCKTYPE': 47,
    'ERR_NAME': 33,
    'ERR_NOT_SAME': 35,
    'ERR_NO_MEM': 34,
    'ERR_NO_SPACE': 36,
    'ERR_NO_SUCH_FILE': 37,
    'ERR_OP': 9,
    'ERR_PENDING': 18,
    'ERR_PORT': 38,
    'ERR_PROC_ABORTED': 76,
    'ERR_PROC_FAILED': 13,
    'ERR_PROC_FAILED_PENDING': 13,
    'ERR_QUOTA': 39,
    'ERR_RANK': 6,
    'ERR_READ_ONLY': 40,
    'ERR_REQUEST': 19,
    'ERR_REVOKED': 13,
    'ERR_RMA_ATTACH': 56,
    'ERR_RMA_CONFLICT': 49,
    'ERR_RMA_FLAVOR': 58,
    'ERR_RMA_RANGE': 55,
    'ERR_RMA_SHARED': 57,
    'ERR_RMA_SYNC': 50,
    'ERR_ROOT': 7,
    'ERR_SERVICE': 41,
    'ERR_SESSION': 75,
    'ERR_SIZE': 51,
    'ERR_SPAWN': 42,
    'ERR_TAG': 4,
    'ERR_TOPOLOGY': 10,
    'ERR_TRUNCATE': 14,
    'ERR_TYPE': 3,
    'ERR_UNKNOWN': 13,
    'ERR_UNSUPPORTED_DATAREP': 43,
    'ERR_UNSUPPORTED_OPERATION': 44,
    'ERR_VALUE_TOO_LARGE': 77,
    'ERR_WIN': 45,
    'F_ERROR': 4,
    'F_SOURCE': 2,
    'F_STATUS_SIZE': 5,
    'F_TAG': 3,
    'IO': 1681915909,
    'LASTUSEDCODE': 1681915915,
    'LOCK_EXCLUSIVE': 234,
    'LOCK_SHARED': 235,
    'MAX_DATAREP_STRING': 128,
    'MAX_ERROR_STRING': 512,
    'MAX_INFO_KEY': 255,
    'MAX_INFO_VAL': 1024,
    'MAX_LIBRARY_VERSION_STRING': 8192,
    'MAX_OBJECT_NAME': 128,
    'MAX_PORT_NAME': 1024,
    'MAX_PROCESSOR_NAME': 128,
    'MAX_PSET_NAME_LEN': 256,
    'MAX_STRINGTAG_LEN': 256,
    'MODE_APPEND': 128,
    'MODE_CREATE': 1,
    'MODE_DELETE_ON_CLOSE': 16,
    'MODE_EXCL': 64,
    'MODE_NOCHECK': 1024,
    'MODE_NOPRECEDE': 8192,
    'MODE_NOPUT': 4096,
    'MODE_NOSTORE': 2048,
    'MODE_NOSUCCEED': 16384,
    'MODE_RDONLY': 2,
    'MODE_RDWR': 8,
    'MODE_SEQUENTIAL': 256,
    'MODE_UNIQUE_OPEN': 32,
    'MODE_WRONLY': 4,
    'ORDER_C': 56,
    'ORDER_F': 57,
    'ORDER_FORTRAN': 57,
    'SEEK_CUR': 602,
    'SEEK_END': 604,
    'SEEK_SET': 600,
    'SUBVERSION': 1,
    'TYPECLASS_COMPLEX': 3,
    'TYPECLASS_INTEGER': 2,
    'TYPECLASS_LOGICAL': 4,
    'TYPECLASS_REAL': 1,
    'UNIVERSE_SIZE': 1681915913,
    'UNWEIGHTED': 139820121394892,
    'VERSION': 4,
    'WEIGHTS_EMPTY': 139820121394888,
    'WIN_BASE': 1711276033,
    'WIN_CREATE_FLAVOR': 1711276039,
    'WIN_DISP_UNIT': 1711276037,
    'WIN_FLAVOR': 1711276039,
    'WIN_FLAVOR_ALLOCATE': 2,
    'WIN_FLAVOR_CREATE': 1,
    'WIN_FLAVOR_DYNAMIC': 3,
    'WIN_FLAVOR_SHARED': 4,
    'WIN_MODEL': 1711276041,
    'WIN_SEPARATE': 1,
    'WIN_SIZE': 1711276035,
    'WIN_UNIFIED': 2,
    'WTIME_IS_GLOBAL': 1681915911,
}
"""Integer constants (values of mpi4py 4.1.2 on MPICH)."""


CLASSES = ('BottomType', 'Errhandler', 'File', 'InPlaceType')
HANDLES = {'ERRHANDLER_NULL': 'Errhandler',
           'ERRORS_ABORT': 'Errhandler',
           'ERRORS_ARE_FATAL': 'Errhandler',
           'ERRORS_RETURN': 'Errhandler',
           'FILE_NULL': 'File'}
FUNCTIONS: tuple[str, ...] = ()


def get_vendor() -> tuple[str, tuple[int, int, int]]:
    """mpi4py's ``MPI.get_vendor()``: the MPI library bsim stands in for, ``("bsim", version)``."""
    from ...version import __version__
    major, minor, patch = (int(x) for x in (__version__.split(".") + ["0", "0"])[:3])
    return "bsim", (major, minor, patch)


def is_stand_in(obj: Any) -> bool:
    """Whether *obj* is one of this module's stand-ins (importable, raises when used)."""
    return (isinstance(obj, (_Unsimulated, _Handle, _NullHandle))
            or getattr(obj, "__module__", None) == __name__ and callable(obj)
            and getattr(obj, "__name__", "") in FUNCTIONS)


def names() -> dict[str, Any]:
    """Every name of this module's namespace, ready for ``globals().update``."""
    out: dict[str, Any] = dict(INT_CONSTANTS)
    out.update({n: _stub_class(n) for n in CLASSES})
    out.update({n: _Handle(n, family) for n, family in HANDLES.items()
                if family not in NULL_HANDLES})
    for family, (name, _) in NULL_HANDLES.items():
        if family in CLASSES:
            _CONSTANTS[name] = out[name] = out[family]()
            _CONSTANTS[family] = out[family]
    out.update({n: _stub_function(n) for n in FUNCTIONS})
    out["get_vendor"] = get_vendor
    return out


NAMES = names()
"""The names to add to ``bsim.MPI``."""
globals().update(_CONSTANTS)   # File, FILE_NULL, Session, SESSION_NULL: pickled from here
