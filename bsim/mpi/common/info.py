"""Info objects (MPI 4.1 Sec. 10): ordered string key/value hints, with mpi4py's handles.

Hints change no simulated time in bsim (no model reads them); what matters is that a
program that builds, passes, copies and frees info objects behaves as under real MPI:

* ``Info.Create(items)``, ``Dup``, ``Free``, ``Get``/``Set``/``Delete``,
  ``Get_nkeys``/``Get_nthkey`` (keys in insertion order, as MPICH), and mpi4py's mapping
  methods (``info[k]``, ``in``, ``len``, ``keys``, ``items``, ``update``, ``pop``,
  ``popitem``, ``copy``, ``clear``; on ``INFO_NULL`` they read as empty and refuse
  writes with ``KeyError``);
* handles: ``Info(info)`` is another object for the same handle (equal, sharing the
  contents); ``Free`` makes the object equal to ``INFO_NULL``; ``INFO_NULL`` and
  ``INFO_ENV`` pickle to themselves, copies of them to equal objects, a user info to a
  new info with the same items;
* ``INFO_ENV`` / ``Info.Create_env(args)`` hold the keys MPI reserves for the
  environment (``command``, ``argv``, ``maxprocs``, ``soft``, ``host``, ``arch``, ``wdir``,
  ``file``, ``thread_level``) read when asked: the program's command line, the run's
  world size, the calling rank's simulated node, the host's architecture and directory.

Errors are MPI's (``MPI.Exception``): a key longer than ``MAX_INFO_KEY`` (255) or a value
longer than ``MAX_INFO_VAL`` (1024) characters, ``Delete`` of a missing key,
``Get_nthkey`` out of range; a call on a freed or null info is ``ERR_ARG``, as MPICH
gives it (MPI 4.1 Sec. 10: the handle is ``INFO_NULL`` once freed).
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import count
from typing import Any

from ...constants import ERR_ARG, ERR_INFO, ERR_INFO_KEY, ERR_INFO_NOKEY, ERR_INFO_VALUE
from ...engine.rank import current_or_none
from ...errors import MPIUsageError
from .int_handles import IntHandle

__all__ = ["Info", "INFO_NULL", "INFO_ENV", "MAX_INFO_KEY", "MAX_INFO_VAL", "check_info"]

MAX_INFO_KEY = 255    # MPICH's MPI_MAX_INFO_KEY
MAX_INFO_VAL = 1024   # MPICH's MPI_MAX_INFO_VAL
_NULL, _ENV = 0, 1
_CONTENTS: dict[int, dict[str, str]] = {}   # live user handles -> their items
_next_handle = count(100)
ENV_KEYS = ("command", "argv", "maxprocs", "soft", "host", "arch", "wdir", "file",
            "thread_level")


def _error(call: str, what: str, error_class: int = ERR_INFO) -> MPIUsageError:
    vr = current_or_none()
    who = f"rank {vr.rank}: " if vr is not None else ""
    return MPIUsageError(f"{who}Info.{call}: {what}", error_class=error_class)


def _environment(args: Sequence[str] | None = None) -> dict[str, str]:
    """The reserved environment keys (MPI 4.1 Sec. 11.8.3), read now."""
    vr = current_or_none()
    argv = list(sys.argv) if args is None else [str(a) for a in args]
    out = {"command": argv[0] if argv else "", "argv": " ".join(argv[1:]),
           "maxprocs": str(vr.engine.nranks) if vr is not None else "1", "soft": "",
           "host": "", "arch": platform.machine(), "wdir": os.getcwd(), "file": "",
           "thread_level": "MPI_THREAD_SINGLE"}
    if vr is not None:
        node_of = getattr(vr.engine.network, "node_of", None)
        out["host"] = f"node{node_of(vr.rank) if node_of is not None else vr.rank}"
    return out


class Info(IntHandle):
    """An info handle: ``INFO_NULL``, ``INFO_ENV``, a user info, or a copy of one."""

    __slots__ = ("_id", "__weakref__")

    def __new__(cls, *args: Any, **kwargs: Any) -> Info:
        # mpi4py's subclasses call Info.__new__(cls, info): the argument goes to __init__
        return super().__new__(cls)

    def __init__(self, info: Info | None = None) -> None:
        if info is not None and not isinstance(info, Info):
            raise TypeError(f"Info(): expected an Info, got {type(info).__name__}")
        self._id: int = _NULL if info is None else info._id

    # -- handle semantics ---------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Info):
            return NotImplemented
        return self._id == other._id

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        """mpi4py's handles are unhashable."""
        raise TypeError(f"unhashable type: '{type(self).__name__}'")

    def __bool__(self) -> bool:
        return self._id != _NULL

    def __repr__(self) -> str:
        name = {_NULL: "INFO_NULL", _ENV: "INFO_ENV"}.get(self._id, f"#{self._id}")
        return f"<Info {name}>"

    def __reduce__(self) -> Any:
        if self is INFO_NULL or self is INFO_ENV:
            return "INFO_NULL" if self is INFO_NULL else "INFO_ENV"
        if self._id in (_NULL, _ENV):
            return (type(self), (INFO_NULL if self._id == _NULL else INFO_ENV,))
        return (type(self).Create, (self.items(),))   # a subclass stays one (mpi4py)

    def free(self) -> None:
        """``Free`` unless null or predefined (a copy of ``INFO_ENV`` becomes null)."""
        if self._id == _ENV and self is not INFO_ENV:
            self._id = _NULL
        elif self._id not in (_NULL, _ENV):
            self.Free()

    # -- the MPI calls --------------------------------------------------------------------
    @classmethod
    def Create(cls, items: Info | Mapping[str, str] | Iterable[tuple[str, str]] | None = None
               ) -> Info:
        """A new empty info, filled from *items* (a mapping or (key, value) pairs)."""
        info = cls()
        info._id = next(_next_handle)
        _CONTENTS[info._id] = {}
        if items is None:
            return info
        try:
            info.update(items)
        except BaseException:
            info.Free()
            raise
        return info

    @classmethod
    def Create_env(cls, args: Sequence[str] | None = None) -> Info:
        """A new info with the environment keys for the command line *args*."""
        if isinstance(args, str):
            args = [args]
        return cls.Create(_environment(list(args) if args is not None else None))

    def _items(self, call: str) -> dict[str, str]:
        if self._id == _ENV:
            return _environment()
        items = _CONTENTS.get(self._id)
        if items is None:
            raise _error(call, "the info object is null or freed (INFO_NULL)", ERR_ARG)
        return items

    def Free(self) -> None:
        """Free the info; the object becomes equal to ``INFO_NULL``."""
        if self._id == _ENV:
            raise _error("Free", "INFO_ENV is predefined and cannot be freed")
        self._items("Free")
        del _CONTENTS[self._id]
        self._id = _NULL

    def Dup(self) -> Info:
        """A new info with the same items."""
        out = type(self)()
        out._id = next(_next_handle)
        _CONTENTS[out._id] = dict(self._items("Dup"))
        return out

    def Get(self, key: str) -> str | None:
        """The value of *key*, or None when the key is not set."""
        return self._items("Get").get(_key("Get", key))

    def Set(self, key: str, value: str) -> None:
        """Set *key* to *value* (a new key goes last)."""
        if not isinstance(value, str):
            raise TypeError(f"Info.Set: value must be a str, got {type(value).__name__}")
        if len(value) > MAX_INFO_VAL:
            raise _error("Set", f"value of {len(value)} characters (at most {MAX_INFO_VAL})",
                         ERR_INFO_VALUE)
        if self._id == _ENV:
            raise _error("Set", "INFO_ENV is predefined and read-only")
        self._items("Set")[_key("Set", key)] = value

    def Delete(self, key: str) -> None:
        """Remove *key*; an error if it is not set."""
        items = self._items("Delete")
        if self._id == _ENV:
            raise _error("Delete", "INFO_ENV is predefined and read-only")
        if _key("Delete", key) not in items:
            raise _error("Delete", f"no key {key!r}", ERR_INFO_NOKEY)
        del items[key]

    def Get_nkeys(self) -> int:
        """How many keys are set."""
        return len(self._items("Get_nkeys"))

    def Get_nthkey(self, n: int) -> str:
        """The *n*-th key (0-based, in the order they were set)."""
        keys = list(self._items("Get_nthkey"))
        if not 0 <= n < len(keys):
            raise _error("Get_nthkey", f"n={n} out of range 0..{len(keys) - 1}", ERR_ARG)
        return keys[n]

    # -- mpi4py's mapping methods -----------------------------------------------------------
    def __len__(self) -> int:
        return self.Get_nkeys() if self else 0

    def __contains__(self, key: object) -> bool:
        return bool(self) and isinstance(key, str) and self.Get(key) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __getitem__(self, key: str) -> str:
        value = self.Get(key) if self else None
        if value is None:
            raise KeyError(key)
        return value

    def __setitem__(self, key: str, value: str) -> None:
        if not self:
            raise KeyError(key)
        self.Set(key, value)

    def __delitem__(self, key: str) -> None:
        if key not in self:
            raise KeyError(key)
        self.Delete(key)

    def get(self, key: str, default: str | None = None) -> str | None:
        """The value of *key*, or *default*."""
        value = self.Get(key) if self else None
        return default if value is None else value

    def keys(self) -> list[str]:
        """The keys, in order."""
        return list(self._items("keys")) if self else []

    def values(self) -> list[str]:
        """The values, in key order."""
        return list(self._items("values").values()) if self else []

    def items(self) -> list[tuple[str, str]]:
        """``(key, value)`` pairs, in key order."""
        return list(self._items("items").items()) if self else []

    def update(self, items: Info | Mapping[str, str] | Iterable[tuple[str, str]] = (),
               **kwds: str) -> None:
        """Set every pair of *items* and *kwds* (``KeyError`` on ``INFO_NULL``)."""
        if not self:
            raise KeyError("update on INFO_NULL")
        if isinstance(items, (int, float)) or items is None:
            raise TypeError(f"Info items must be a mapping or (key, value) pairs, "
                            f"got {type(items).__name__}")
        source: Any = items
        pairs = ([(k, source[k]) for k in source.keys()] if hasattr(source, "keys")
                 else list(source))
        for key, value in [*pairs, *kwds.items()]:
            self.Set(key, value)

    def pop(self, key: str, *default: str) -> str:
        """Remove *key* and return its value (or *default*; ``KeyError`` without one)."""
        value = self.Get(key) if self else None
        if value is not None:
            self.Delete(key)
            return value
        if default:
            return default[0]
        raise KeyError(key)

    def popitem(self) -> tuple[str, str]:
        """Remove and return the last pair set (``KeyError`` when empty)."""
        if not self or not self.Get_nkeys():
            raise KeyError("popitem(): the info is empty")
        key = self.Get_nthkey(self.Get_nkeys() - 1)
        value = self[key]
        self.Delete(key)
        return key, value

    def copy(self) -> Info:
        """``Dup``, or a null info for ``INFO_NULL``."""
        return self.Dup() if self else type(self)()

    def clear(self) -> None:
        """Remove every key."""
        if self:
            for key in self.keys():
                self.Delete(key)


def _key(call: str, key: Any) -> str:
    if not isinstance(key, str):
        raise TypeError(f"Info.{call}: key must be a str, got {type(key).__name__}")
    if not key or len(key) > MAX_INFO_KEY:
        raise _error(call, f"key of {len(key)} characters (1..{MAX_INFO_KEY})", ERR_INFO_KEY)
    return key


INFO_NULL = Info()
INFO_ENV = Info()
INFO_ENV._id = _ENV


def check_info(info: Any, call: str) -> None:
    """An info argument of *call* must be an :class:`Info` (``INFO_NULL`` is one)."""
    if not isinstance(info, Info):
        raise TypeError(f"{call}: expected an MPI.Info, got {type(info).__name__}")
