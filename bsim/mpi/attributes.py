"""Attributes and keyvals of communicators and datatypes (MPI 4.0 Sec. 7.7), as mpi4py has them.

``Create_keyval(copy_fn=None, delete_fn=None, nopython=False)`` returns a key;
``Set_attr``/``Get_attr``/``Delete_attr`` keep one value per key on an object
*for the calling rank* (objects such as ``COMM_WORLD`` are one Python object for
all virtual ranks; each rank has its own attributes, as each process would).
``Dup`` copies each attribute by its key's *copy_fn*: ``None``/``False`` no copy,
``True`` the same value, a callable ``copy_fn(obj, key, value)`` its return value
(``NotImplemented``: no copy).  ``delete_fn(obj, key, value)`` runs when an
attribute is deleted, replaced, or its object freed.  An exception either callback raises
is printed to stderr and raised as ``MPI.Exception`` (``ERR_OTHER``), as mpi4py does.
Attributes cost no simulated time.

Predefined communicator attributes: ``TAG_UB`` (2**31 - 1), ``HOST``
(``PROC_NULL``), ``IO`` (``ANY_SOURCE``: every rank may do I/O),
``WTIME_IS_GLOBAL`` (True: every rank's simulated clock starts at 0),
``UNIVERSE_SIZE`` (the run's world size), ``APPNUM`` (0; a spawned rank's: which
command of its ``Spawn_multiple``, ``spawn.py``) and ``LASTUSEDCODE``.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from itertools import count
from typing import Any

from ..constants import ANY_SOURCE, ERR_KEYVAL, KEYVAL_INVALID, PROC_NULL, TAG_UB
from ..engine.rank import current
from ..errors import MPIUsageError
from .error_codes import last_used_code

__all__ = ["KEYVALS", "PREDEFINED_KEYS", "create_keyval", "free_keyval", "get_attr", "set_attr",
           "delete_attr", "copy_attrs", "drop_attrs"]

# mpi4py 4.1.2 on MPICH: MPI.TAG_UB, MPI.HOST, ... (the keys, not the values)
PREDEFINED_KEYS = {"TAG_UB": 1681915905, "HOST": 1681915907, "IO": 1681915909,
                   "WTIME_IS_GLOBAL": 1681915911, "UNIVERSE_SIZE": 1681915913,
                   "LASTUSEDCODE": 1681915915, "APPNUM": 1681915917}

KEYVALS: dict[int, tuple[Any, Any]] = {}
"""Each live key's (copy_fn, delete_fn)."""
_next_key = count(1000)
_STATE = "bsim.attributes"


def _world_value(name: str) -> Callable[[Any], Any]:
    values: dict[str, Callable[[Any], Any]] = {
        "TAG_UB": lambda vr: TAG_UB, "HOST": lambda vr: PROC_NULL,
        "IO": lambda vr: ANY_SOURCE, "WTIME_IS_GLOBAL": lambda vr: True,
        "UNIVERSE_SIZE": lambda vr: vr.engine.nranks,
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


def _check(keyval: Any, call: str) -> int:
    if keyval not in KEYVALS:
        raise MPIUsageError(f"rank {current().rank}: {call}: invalid keyval {keyval!r} (not "
                            f"created by Create_keyval, or freed)")
    return int(keyval)


def create_keyval(copy_fn: Any = None, delete_fn: Any = None, nopython: bool = False) -> int:
    """A new key with its copy and delete callbacks."""
    key = next(_next_key)
    KEYVALS[key] = (copy_fn, delete_fn)
    return key


def free_keyval(keyval: int) -> int:
    """Forget *keyval*; returns ``KEYVAL_INVALID``."""
    KEYVALS.pop(keyval, None)
    return KEYVAL_INVALID


def get_attr(obj: Any, keyval: int, world: bool = False) -> Any:
    """The calling rank's value of *keyval* on *obj*, or None."""
    if keyval == KEYVAL_INVALID:
        raise MPIUsageError(f"rank {current().rank}: Get_attr(KEYVAL_INVALID): not a key",
                            error_class=ERR_KEYVAL)
    if world and keyval in _PREDEFINED:
        return _PREDEFINED[keyval](current())
    attrs = _attrs(obj, False)
    return None if attrs is None else attrs.get(keyval)


def _delete(obj: Any, attrs: dict[int, Any], keyval: int) -> None:
    value = attrs.pop(keyval)
    delete_fn = KEYVALS.get(keyval, (None, None))[1]
    if callable(delete_fn):
        try:
            delete_fn(obj, keyval, value)
        except MPIUsageError:
            raise
        except Exception as exc:   # mpi4py: the traceback on stderr, then MPI.Exception
            traceback.print_exc()
            raise MPIUsageError(f"rank {current().rank}: Delete_attr: the delete callback "
                                f"of keyval {keyval} raised {type(exc).__name__}: {exc}") from exc


def set_attr(obj: Any, keyval: int, value: Any) -> None:
    """Set the calling rank's value of *keyval* on *obj* (deleting the old one first)."""
    _check(keyval, "Set_attr")
    attrs = _attrs(obj, True)
    assert attrs is not None
    if keyval in attrs:
        _delete(obj, attrs, keyval)
    attrs[keyval] = value


def delete_attr(obj: Any, keyval: int) -> None:
    """Delete the calling rank's value of *keyval* on *obj*."""
    _check(keyval, "Delete_attr")
    attrs = _attrs(obj, False)
    if attrs and keyval in attrs:
        _delete(obj, attrs, keyval)


def copy_attrs(old: Any, new: Any) -> None:
    """Copy *old*'s attributes to its duplicate *new* by each key's copy_fn."""
    attrs = _attrs(old, False)
    if not attrs:
        return
    target = _attrs(new, True)
    assert target is not None
    for keyval, value in list(attrs.items()):
        copy_fn = KEYVALS.get(keyval, (None, None))[0]
        if copy_fn is True:
            target[keyval] = value
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
                target[keyval] = got


def drop_attrs(obj: Any) -> None:
    """Delete every attribute of *obj* for the calling rank (the object is freed)."""
    attrs = _attrs(obj, False)
    for keyval in list(attrs or ()):
        _delete(obj, attrs, keyval)   # type: ignore[arg-type]
