"""Attributes and keyvals of communicators, datatypes and windows (MPI 4.1 Sec. 7.7), as mpi4py
has them.

``Create_keyval(copy_fn=None, delete_fn=None, nopython=False)`` returns a key for one kind
of object (a communicator's, a datatype's or a window's: another kind's key, or one never
created, is ``ERR_KEYVAL`` in ``Get_attr``, ``Set_attr``, ``Delete_attr`` and
``Free_keyval``, as MPICH checks); ``Set_attr``/``Get_attr``/``Delete_attr`` keep one value
per key on an object *for the calling rank* (objects such as ``COMM_WORLD`` are one Python
object for all virtual ranks; each rank has its own attributes, as each process would).
``Dup`` copies each attribute by its key's *copy_fn*: ``None``/``False`` no copy,
``True`` the same value, a callable ``copy_fn(obj, key, value)`` its return value
(``NotImplemented``: no copy).  ``delete_fn(obj, key, value)`` runs when an
attribute is deleted, replaced, or its object freed.  An exception either callback raises
is printed to stderr and raised as ``MPI.Exception`` (``ERR_OTHER``), as mpi4py does.
Attributes cost no simulated time.

``Free_keyval`` does not take the key from the attributes still set with it: "the keyval
... is not actually deallocated until all attributes using it are deleted" (MPI 4.1 Sec.
7.7.2, ``MPI_COMM_FREE_KEYVAL``): ``Dup`` still copies them and ``Delete_attr`` or freeing
their object still calls the delete callback.  The program's copy of a freed key must not
be used again (MPI sets the C handle to ``KEYVAL_INVALID``; mpi4py returns it); MPICH does
not detect it if it is (``Get_attr`` answers, ``Set_attr`` sets), and neither does bsim,
which keeps every key of the run.
As MPICH does, the callbacks of an object's attributes run in the reverse order of their
setting (MPI leaves the order open; a replaced value keeps its place), and a duplicate keeps
the order.

Predefined communicator attributes (MPI 4.1 Sec. 9.1.1, 11.10.1), with MPICH's values
under ``mpiexec``: ``TAG_UB`` (536870911, MPICH's 2**29 - 1, which bsim's tag checks
use too), ``HOST`` (``PROC_NULL``), ``IO`` (``ANY_SOURCE``: every rank may do I/O),
``WTIME_IS_GLOBAL`` (0, as MPICH answers, although every rank's simulated clock starts
at 0), ``UNIVERSE_SIZE`` (None: MPICH's ``mpiexec`` does not set it), ``APPNUM`` (0; a
spawned rank's: which command of its ``Spawn_multiple``, ``spawn.py``) and
``LASTUSEDCODE``.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from itertools import count
from typing import TYPE_CHECKING, Any

from ...constants import ANY_SOURCE, ERR_KEYVAL, KEYVAL_INVALID, PROC_NULL, TAG_UB
from ...engine.rank import current
from ...errors import MPIUsageError
from .error_codes import last_used_code

__all__ = ["KEYVALS", "PREDEFINED_KEYS", "COMM", "DATATYPE", "WIN", "Keyval", "CommAttributes",
           "create_keyval", "free_keyval", "get_attr", "set_attr", "delete_attr", "copy_attrs",
           "drop_attrs"]

COMM, DATATYPE, WIN = "Comm", "Datatype", "Win"   # the kinds of object a key is for

# mpi4py 4.1.2 on MPICH: MPI.TAG_UB, MPI.HOST, ... (the keys, not the values)
PREDEFINED_KEYS = {"TAG_UB": 1681915905, "HOST": 1681915907, "IO": 1681915909,
                   "WTIME_IS_GLOBAL": 1681915911, "UNIVERSE_SIZE": 1681915913,
                   "LASTUSEDCODE": 1681915915, "APPNUM": 1681915917}


class Keyval:
    """A key: its callbacks and the kind of object it is for."""

    __slots__ = ("copy_fn", "delete_fn", "kind")

    def __init__(self, copy_fn: Any, delete_fn: Any, kind: str) -> None:
        self.copy_fn, self.delete_fn, self.kind = copy_fn, delete_fn, kind


KEYVALS: dict[int, Keyval] = {}
"""Each key created in the run, freed ones included (their attributes keep them)."""
_next_key = count(1000)
_STATE = "bsim.attributes"


def _world_value(name: str) -> Callable[[Any], Any]:
    values: dict[str, Callable[[Any], Any]] = {
        "TAG_UB": lambda vr: TAG_UB, "HOST": lambda vr: PROC_NULL,
        "IO": lambda vr: ANY_SOURCE, "WTIME_IS_GLOBAL": lambda vr: 0,
        "UNIVERSE_SIZE": lambda vr: None,
        "APPNUM": lambda vr: 0 if vr.world is None else vr.world.appnum[vr.rank],
        "LASTUSEDCODE": lambda vr: last_used_code()}
    return values[name]


_PREDEFINED = {key: _world_value(name) for name, key in PREDEFINED_KEYS.items()}


def handle_id(obj: Any) -> int:
    """Identity of *obj*'s MPI handle: objects made by ``Comm(comm)`` share it."""
    return id(getattr(obj, "_handle", obj))


def _attrs(obj: Any, create: bool) -> dict[int, Any] | None:
    vr = current()
    store = vr.engine.user_state.setdefault(_STATE, {})
    key = (vr.rank, handle_id(obj))
    if create:
        return store.setdefault(key, {})
    return store.get(key)


def _check(keyval: Any, kind: str, call: str) -> Keyval:
    """The key *keyval* of objects of *kind*; ``ERR_KEYVAL`` otherwise (MPI 4.1 Sec. 7.7.5;
    as MPICH, for ``KEYVAL_INVALID``, a key never created, another kind's key and, but in
    a communicator's ``Get_attr``, a predefined one)."""
    try:
        rec = KEYVALS.get(keyval)
    except TypeError:   # unhashable: not a key
        rec = None
    if rec is None or rec.kind != kind:
        what = (f"a {rec.kind} key, not a {kind} one" if rec is not None else
                "not a key created by Create_keyval")
        raise MPIUsageError(f"rank {current().rank}: {kind}.{call}({keyval!r}): {what}",
                            error_class=ERR_KEYVAL)
    return rec


def create_keyval(kind: str, copy_fn: Any = None, delete_fn: Any = None,
                  nopython: bool = False) -> int:
    """A new key for objects of *kind* (``COMM``, ``DATATYPE``, ``WIN``) with its copy and
    delete callbacks."""
    key = next(_next_key)
    KEYVALS[key] = Keyval(copy_fn, delete_fn, kind)
    return key


def free_keyval(kind: str, keyval: int) -> int:
    """Free *keyval* (``ERR_KEYVAL`` unless a key of *kind*); returns ``KEYVAL_INVALID``.

    Attributes still set with it keep it, callbacks included, until they are deleted
    (MPI 4.1 Sec. 7.7.2): bsim keeps its record (see the module docstring)."""
    _check(keyval, kind, "Free_keyval")
    return KEYVAL_INVALID


def get_attr(obj: Any, keyval: int, kind: str, world: bool = False) -> Any:
    """The calling rank's value of *keyval* on *obj*, or None if it has none; ``ERR_KEYVAL``
    for a key that is not one of *kind* (*world*: the predefined keys answer too)."""
    if world and keyval in _PREDEFINED:
        return _PREDEFINED[keyval](current())
    _check(keyval, kind, "Get_attr")
    attrs = _attrs(obj, False)
    return None if attrs is None else attrs.get(keyval)


def _call_delete(obj: Any, keyval: int, value: Any) -> None:
    rec = KEYVALS.get(keyval)
    delete_fn = rec.delete_fn if rec is not None else None
    if callable(delete_fn):
        try:
            delete_fn(obj, keyval, value)
        except MPIUsageError:
            raise
        except Exception as exc:   # mpi4py: the traceback on stderr, then MPI.Exception
            traceback.print_exc()
            raise MPIUsageError(f"rank {current().rank}: Delete_attr: the delete callback "
                                f"of keyval {keyval} raised {type(exc).__name__}: {exc}") from exc


def _delete(obj: Any, attrs: dict[int, Any], keyval: int) -> None:
    _call_delete(obj, keyval, attrs.pop(keyval))


def set_attr(obj: Any, keyval: int, value: Any, kind: str) -> None:
    """Set the calling rank's value of *keyval* on *obj*: an old value is deleted first (its
    delete callback runs) and the new one takes its place (MPI 4.1 Sec. 7.7.2)."""
    _check(keyval, kind, "Set_attr")
    attrs = _attrs(obj, True)
    assert attrs is not None
    if keyval in attrs:
        _call_delete(obj, keyval, attrs[keyval])
    attrs[keyval] = value


def delete_attr(obj: Any, keyval: int, kind: str) -> None:
    """Delete the calling rank's value of *keyval* on *obj* (none: nothing to do)."""
    _check(keyval, kind, "Delete_attr")
    attrs = _attrs(obj, False)
    if attrs and keyval in attrs:
        _delete(obj, attrs, keyval)


def copy_attrs(old: Any, new: Any) -> None:
    """Copy *old*'s attributes to its duplicate *new* by each key's copy_fn, calling them
    in the reverse order of setting, as MPICH does; *new* keeps *old*'s order."""
    attrs = _attrs(old, False)
    if not attrs:
        return
    copied: dict[int, Any] = {}
    for keyval, value in reversed(list(attrs.items())):
        rec = KEYVALS.get(keyval)
        copy_fn = rec.copy_fn if rec is not None else None
        if copy_fn is True:
            copied[keyval] = value
        elif callable(copy_fn):
            try:
                got = copy_fn(old, keyval, value)
            except MPIUsageError:
                raise
            except Exception as exc:   # mpi4py: the traceback on stderr, then MPI.Exception
                traceback.print_exc()
                raise MPIUsageError(f"rank {current().rank}: Dup: the copy callback of keyval "
                                    f"{keyval} raised {type(exc).__name__}: {exc}") from exc
            if got is not NotImplemented:
                copied[keyval] = got
    if not copied:
        return
    target = _attrs(new, True)
    assert target is not None
    for keyval in reversed(list(copied)):   # back to the order of setting
        target[keyval] = copied[keyval]


def drop_attrs(obj: Any) -> None:
    """Delete every attribute of *obj* for the calling rank (the object is freed), the
    last set first, as MPICH does."""
    attrs = _attrs(obj, False)
    for keyval in reversed(list(attrs or ())):
        _delete(obj, attrs, keyval)   # type: ignore[arg-type]


class CommAttributes:
    """The attribute calls of a communicator (mixin of :class:`bsim.mpi.comms.comm.Comm`; MPI 4.1
    Sec. 7.7.2): keys of kind ``COMM``, and the predefined ones on every communicator, as
    MPICH answers them."""

    __slots__ = ()

    if TYPE_CHECKING:
        def _not_null(self, call: str) -> None: ...

    @classmethod
    def Create_keyval(cls, copy_fn: Any = None, delete_fn: Any = None,
                      nopython: bool = False) -> int:
        """A new key for communicators' attributes, with its copy and delete callbacks."""
        return create_keyval(COMM, copy_fn, delete_fn, nopython)

    @classmethod
    def Free_keyval(cls, keyval: int) -> int:
        """Free a communicators' key (``KEYVAL_INVALID``); attributes still set with it
        keep it, callbacks included, until they are deleted (MPI 4.1 Sec. 7.7.2)."""
        return free_keyval(COMM, keyval)

    def Get_attr(self, keyval: int) -> Any:
        """The calling rank's attribute value for *keyval*, or None if it has none;
        ``ERR_KEYVAL`` if *keyval* is not a communicators' key (MPI 4.1 Sec. 7.7.5)."""
        self._not_null("Get_attr")
        return get_attr(self, keyval, COMM, world=True)

    def Set_attr(self, keyval: int, attrval: Any) -> None:
        """Set the calling rank's attribute value for *keyval*."""
        set_attr(self, keyval, attrval, COMM)

    def Delete_attr(self, keyval: int) -> None:
        """Delete the calling rank's attribute value for *keyval*."""
        delete_attr(self, keyval, COMM)
