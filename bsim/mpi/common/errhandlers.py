"""Error handlers (MPI 4.0 Sec. 9.3) with mpi4py's handle semantics.

Every communicator starts with ``ERRORS_RETURN`` for each rank, as mpi4py sets
it, and a ``Dup`` inherits its parent's handler.  Whatever the handler, an
erroneous call raises ``MPI.Exception`` (:class:`~bsim.errors.MPIUsageError`)
in the rank that made it -- mpi4py's behaviour under ``ERRORS_RETURN``; an
exception the program does not catch ends the run naming the rank, which is
what ``ERRORS_ARE_FATAL`` would do.  ``Call_errhandler(code)`` runs the
handler: a user handler is called as ``fn(comm, code)``; ``ERRORS_ARE_FATAL``
and ``ERRORS_ABORT`` end the simulation for a code other than ``SUCCESS``;
``ERRORS_RETURN`` does nothing.

Handles behave as mpi4py's: ``Get_errhandler`` returns a new handle equal to
the communicator's handler; ``Free`` makes that handle equal to
``ERRHANDLER_NULL``; the predefined handles pickle to themselves, copies to
equal handles, user handlers not at all; at most 32 user handlers per class
live at once (``RuntimeError`` beyond, as mpi4py's callback table).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import count
from typing import Any

from ...constants import ERR_ERRHANDLER
from ...engine.rank import current
from ...errors import MPIUsageError, SimulationError
from .attributes import handle_id
from .int_handles import IntHandle

__all__ = ["Errhandler", "ERRHANDLER_NULL", "ERRORS_ARE_FATAL", "ERRORS_RETURN", "ERRORS_ABORT",
           "get_errhandler", "set_errhandler", "call_errhandler", "create_errhandler",
           "inherit_errhandler"]

_NAMES = {0: "ERRHANDLER_NULL", 1: "ERRORS_ARE_FATAL", 2: "ERRORS_RETURN", 3: "ERRORS_ABORT"}
_USER: dict[int, tuple[str, Callable[[Any, int], Any]]] = {}   # handle -> (class, fn)
_next_user = count(100)
MAX_USER = 32
_STATE = "bsim.errhandlers"


class Errhandler(IntHandle):
    """An error handler handle: predefined, user-created, or a copy of either."""

    __slots__ = ("_id", "__weakref__")

    def __init__(self, errhandler: Errhandler | None = None) -> None:
        if errhandler is not None and not isinstance(errhandler, Errhandler):
            raise TypeError(f"Errhandler(): expected an Errhandler, got "
                            f"{type(errhandler).__name__}")
        self._id: int = 0 if errhandler is None else errhandler._id

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Errhandler) and other._id == self._id

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        """mpi4py's handles are unhashable."""
        raise TypeError(f"unhashable type: '{type(self).__name__}'")

    def __bool__(self) -> bool:
        return self._id != 0

    def __repr__(self) -> str:
        name = _NAMES.get(self._id) or f"user #{self._id}"
        return f"<Errhandler {name}>"

    def __reduce__(self) -> Any:
        predefined = _PREDEFINED.get(self._id)
        if self is predefined:
            return _NAMES[self._id]
        if predefined is not None:
            return (type(self), (predefined,))
        raise ValueError(f"cannot serialize {self!r}: a user error handler holds a function")

    def Free(self) -> None:
        """Free this handle: it equals ``ERRHANDLER_NULL`` afterwards (MPI 4.1 Sec. 9.3.4).
        Freeing a predefined handler itself is a no-op, as in MPICH + mpi4py."""
        if self is _PREDEFINED.get(self._id):
            return
        if not self:
            raise MPIUsageError(f"rank {current().rank}: Errhandler.Free(): cannot free "
                                f"{_NAMES[self._id]}", error_class=ERR_ERRHANDLER)
        if self._id in _USER and not any(h._id == self._id for h in _live_handles()):
            del _USER[self._id]
        self._id = 0

    def free(self) -> None:
        """mpi4py's ``free``: nothing for null and predefined handles, else ``Free``."""
        if self and self is not _PREDEFINED.get(self._id):
            self.Free()


def _live_handles() -> list[Errhandler]:
    try:
        store = current().engine.user_state.get(_STATE, {})
    except Exception:   # outside a simulation
        return []
    return list(store.values())


def _as_errhandler(obj: Any) -> Errhandler:
    if not isinstance(obj, Errhandler):
        raise MPIUsageError(f"rank {current().rank}: expected an MPI.Errhandler, got "
                            f"{type(obj).__name__}")
    return obj


ERRHANDLER_NULL = Errhandler()
ERRORS_ARE_FATAL = Errhandler.fromint(1)
ERRORS_RETURN = Errhandler.fromint(2)
ERRORS_ABORT = Errhandler.fromint(3)
_PREDEFINED = {0: ERRHANDLER_NULL, 1: ERRORS_ARE_FATAL, 2: ERRORS_RETURN, 3: ERRORS_ABORT}


def create_errhandler(cls_name: str, fn: Callable[[Any, int], Any]) -> Errhandler:
    """A user handler for objects of class *cls_name* (at most :data:`MAX_USER` live)."""
    if not callable(fn):
        raise MPIUsageError(f"rank {current().rank}: Create_errhandler: {fn!r} is not callable")
    if sum(1 for c, _ in _USER.values() if c == cls_name) >= MAX_USER:
        raise RuntimeError(f"cannot create too many user-defined error handlers for "
                           f"{cls_name} (at most {MAX_USER})")
    handle = next(_next_user)
    _USER[handle] = (cls_name, fn)
    return Errhandler.fromint(handle)


def _store() -> tuple[int, dict[tuple[int, int], Errhandler]]:
    vr = current()
    return vr.rank, vr.engine.user_state.setdefault(_STATE, {})


def get_errhandler(obj: Any) -> Errhandler:
    """A new handle equal to *obj*'s handler for the calling rank."""
    rank, store = _store()
    return Errhandler(store.get((rank, handle_id(obj)), ERRORS_RETURN))


def set_errhandler(obj: Any, errhandler: Any) -> None:
    """Make *errhandler* *obj*'s handler for the calling rank."""
    eh = _as_errhandler(errhandler)
    if not eh:
        raise MPIUsageError(f"rank {current().rank}: Set_errhandler: ERRHANDLER_NULL is not "
                            f"a handler", error_class=ERR_ERRHANDLER)
    rank, store = _store()
    store[(rank, handle_id(obj))] = Errhandler(eh)


def inherit_errhandler(parent: Any, child: Any) -> None:
    """A new communicator takes its parent's handler (MPI 4.0 Sec. 9.3)."""
    rank, store = _store()
    eh = store.get((rank, handle_id(parent)))
    if eh is not None:
        store[(rank, handle_id(child))] = Errhandler(eh)


def call_errhandler(obj: Any, errorcode: int) -> None:
    """Invoke *obj*'s handler with *errorcode* (see the module docstring)."""
    rank, store = _store()
    eh = store.get((rank, handle_id(obj)), ERRORS_RETURN)
    user = _USER.get(eh._id)
    if user is not None:
        user[1](obj, errorcode)
    elif eh._id in (1, 3) and errorcode != 0:
        raise SimulationError(f"rank {rank}: Call_errhandler({errorcode}) with "
                              f"{_NAMES[eh._id]}: the run ends")
