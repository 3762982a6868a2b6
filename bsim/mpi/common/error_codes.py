"""Error classes, codes and strings (MPI 4.1, sections 9.4 and 9.5; mpi4py's
``MPI.Get_error_class``, ``Get_error_string``, ``Add_error_class``, ``Add_error_code``,
``Add_error_string`` and ``Remove_error_*``).

The predefined classes are the numbers mpi4py 4.1.2 has on MPICH (``bsim.MPI.ERR_*``); a
predefined class is its own code.  User classes and codes are made per rank of a run, as
each MPI process makes its own: numbered upwards from ``ERR_LASTCODE + 1``, and the
``LASTUSEDCODE`` attribute of ``COMM_WORLD`` follows the largest (section 9.5).  A user
class or code has the empty string until ``Add_error_string`` gives it one; a class that
still has codes, or a class or code that still has a string, cannot be removed (``ERR_ARG``,
MPI 4.1 section 9.5), nor can a predefined class, code or string.
"""

from __future__ import annotations

from typing import Any

from ...constants import ERR_ARG
from ...engine.rank import current, current_or_none
from ...errors import MPIUsageError, set_error_code_tables

__all__ = ["ERR_LASTCODE", "error_class_of", "error_string_of", "last_used_code",
           "Get_error_class", "Get_error_string", "Add_error_class", "Add_error_code",
           "Add_error_string", "Remove_error_class", "Remove_error_code",
           "Remove_error_string"]

ERR_LASTCODE = 1073741823
_SUCCESS, _ERR_UNKNOWN = 0, 13
_STATE = "bsim.error_codes"

# what each predefined class means (MPI 4.1, table 9.1), by mpi4py-on-MPICH number; its name
_MEANING = {
    0: "no error", 1: "invalid buffer pointer", 2: "invalid count argument",
    3: "invalid datatype argument", 4: "invalid tag argument", 5: "invalid communicator",
    6: "invalid rank", 7: "invalid root", 8: "invalid group", 9: "invalid operation",
    10: "invalid topology", 11: "invalid dimension argument", 12: "invalid argument",
    13: "unknown error", 14: "message truncated on receive", 15: "other error",
    16: "internal error",
    17: "error code is in status", 18: "pending request", 19: "invalid request",
    20: "permission denied", 21: "invalid file access mode", 22: "invalid file name",
    23: "data conversion error", 24: "data representation already defined",
    25: "file exists", 26: "file in use", 27: "invalid file handle", 28: "invalid info",
    29: "invalid info key", 30: "invalid info value", 31: "info key not defined",
    32: "I/O error", 33: "name not published", 34: "out of memory",
    35: "collective arguments not the same on all processes", 36: "no space left",
    37: "no such file", 38: "invalid port name", 39: "quota exceeded",
    40: "read-only file or file system", 41: "service name not published",
    42: "error spawning processes", 43: "unsupported data representation",
    44: "unsupported operation", 45: "invalid window", 46: "invalid base address",
    47: "invalid lock type", 48: "invalid keyval", 49: "conflicting RMA accesses",
    50: "wrong RMA synchronization", 51: "invalid size", 52: "invalid displacement",
    53: "invalid assertion", 55: "target memory out of the window",
    56: "memory cannot be attached", 57: "memory cannot be shared",
    58: "wrong kind of window", 75: "invalid session", 76: "process aborted",
    77: "value too large", 80: "invalid error handler",
}


_CLASSES = {  # the predefined classes and their names
    0: 'SUCCESS', 1: 'ERR_BUFFER', 2: 'ERR_COUNT', 3: 'ERR_TYPE', 4: 'ERR_TAG', 5: 'ERR_COMM',
    6: 'ERR_RANK', 7: 'ERR_ROOT', 8: 'ERR_GROUP', 9: 'ERR_OP', 10: 'ERR_TOPOLOGY',
    11: 'ERR_DIMS', 12: 'ERR_ARG', 13: 'ERR_UNKNOWN', 14: 'ERR_TRUNCATE', 15: 'ERR_OTHER',
    16: 'ERR_INTERN',
    17: 'ERR_IN_STATUS', 18: 'ERR_PENDING', 19: 'ERR_REQUEST', 20: 'ERR_ACCESS',
    21: 'ERR_AMODE', 22: 'ERR_BAD_FILE', 23: 'ERR_CONVERSION', 24: 'ERR_DUP_DATAREP',
    25: 'ERR_FILE_EXISTS', 26: 'ERR_FILE_IN_USE', 27: 'ERR_FILE', 28: 'ERR_INFO',
    29: 'ERR_INFO_KEY', 30: 'ERR_INFO_VALUE', 31: 'ERR_INFO_NOKEY', 32: 'ERR_IO',
    33: 'ERR_NAME', 34: 'ERR_NO_MEM', 35: 'ERR_NOT_SAME', 36: 'ERR_NO_SPACE',
    37: 'ERR_NO_SUCH_FILE', 38: 'ERR_PORT', 39: 'ERR_QUOTA', 40: 'ERR_READ_ONLY',
    41: 'ERR_SERVICE', 42: 'ERR_SPAWN', 43: 'ERR_UNSUPPORTED_DATAREP',
    44: 'ERR_UNSUPPORTED_OPERATION', 45: 'ERR_WIN', 46: 'ERR_BASE', 47: 'ERR_LOCKTYPE',
    48: 'ERR_KEYVAL', 49: 'ERR_RMA_CONFLICT', 50: 'ERR_RMA_SYNC', 51: 'ERR_SIZE',
    52: 'ERR_DISP', 53: 'ERR_ASSERT', 55: 'ERR_RMA_RANGE', 56: 'ERR_RMA_ATTACH',
    57: 'ERR_RMA_SHARED', 58: 'ERR_RMA_FLAVOR', 75: 'ERR_SESSION', 76: 'ERR_PROC_ABORTED',
    77: 'ERR_VALUE_TOO_LARGE', 80: 'ERR_ERRHANDLER'
}


def _user(create: bool = False) -> dict[str, Any] | None:
    """The calling rank's user classes and codes: ``{"class": {code: class},
    "string": {code: str}, "last": int}`` (None outside a run, or before any)."""
    vr = current() if create else current_or_none()
    if vr is None:
        return None
    store = vr.engine.user_state.setdefault(_STATE, {})
    mine = store.get(vr.rank)
    if mine is None and create:
        mine = store[vr.rank] = {"class": {}, "string": {}, "last": ERR_LASTCODE}
    return mine


def last_used_code() -> int:
    """The ``LASTUSEDCODE`` attribute: the largest user class or code, or ``ERR_LASTCODE``."""
    mine = _user()
    return ERR_LASTCODE if mine is None else int(mine["last"])


def error_class_of(code: int) -> int | None:
    """The class of *code*, or None when it is neither predefined nor the rank's own."""
    if code in _CLASSES:
        return code
    mine = _user()
    if mine is not None and code in mine["class"]:
        return int(mine["class"][code])
    return None


def error_string_of(code: int) -> str:
    """The string of a predefined or user error code (``""`` for an unknown one)."""
    if code in _CLASSES:
        name = _CLASSES[code]
        meaning = _MEANING.get(code)
        return f"MPI_{name}: {meaning}" if meaning else f"MPI_{name}"
    mine = _user()
    return "" if mine is None else str(mine["string"].get(code, ""))


def _bad(call: str, what: str) -> MPIUsageError:
    vr = current_or_none()
    who = f"rank {vr.rank}: " if vr is not None else ""
    return MPIUsageError(f"{who}MPI.{call}: {what}", error_class=ERR_ARG)


def _class_or_unknown(code: int) -> int:
    cls = error_class_of(code)
    return _ERR_UNKNOWN if cls is None else cls


# MPI.Exception(code) takes its class and string from here (bsim/errors.py)
set_error_code_tables(_class_or_unknown, error_string_of)


def Get_error_class(errorcode: int) -> int:  # noqa: N802 - mpi4py's name
    """The error class of *errorcode*."""
    cls = error_class_of(int(errorcode))
    if cls is None:
        raise _bad("Get_error_class", f"{errorcode} is not an error code")
    return cls


def Get_error_string(errorcode: int) -> str:  # noqa: N802 - mpi4py's name
    """The string of *errorcode*."""
    code = int(errorcode)
    if error_class_of(code) is None:
        raise _bad("Get_error_string", f"{errorcode} is not an error code")
    return error_string_of(code)


def _new_code(cls: int | None) -> int:
    mine = _user(create=True)
    assert mine is not None
    mine["last"] += 1
    code = int(mine["last"])
    mine["class"][code] = code if cls is None else cls
    return code


def Add_error_class() -> int:  # noqa: N802 - mpi4py's name
    """A new error class of the calling rank (its own code)."""
    return _new_code(None)


def Add_error_code(errorclass: int) -> int:  # noqa: N802 - mpi4py's name
    """A new error code of class *errorclass*."""
    cls = int(errorclass)
    if error_class_of(cls) != cls:
        raise _bad("Add_error_code", f"{errorclass} is not an error class")
    return _new_code(cls)


def Add_error_string(errorcode: int, string: str) -> None:  # noqa: N802 - mpi4py's name
    """Set the string of a user error class or code."""
    mine = _user(create=True)
    assert mine is not None
    if int(errorcode) not in mine["class"]:
        raise _bad("Add_error_string", f"{errorcode} is not a user error class or code")
    mine["string"][int(errorcode)] = str(string)


def _remove(call: str, code: int, want_class: bool) -> dict[str, Any]:
    mine = _user(create=True)
    assert mine is not None
    owner = mine["class"].get(code)
    if owner is None or (owner == code) != want_class:
        kind = "class" if want_class else "code"
        raise _bad(call, f"{code} is not a user error {kind}")
    if code in mine["string"]:
        raise _bad(call, f"{code} still has an error string (Remove_error_string first)")
    return mine


def Remove_error_class(errorclass: int) -> None:  # noqa: N802 - mpi4py's name
    """Remove a user error class that has no codes left."""
    cls = int(errorclass)
    mine = _remove("Remove_error_class", cls, True)
    if any(c != cls and k == cls for c, k in mine["class"].items()):
        raise _bad("Remove_error_class", f"error class {cls} still has error codes")
    del mine["class"][cls]


def Remove_error_code(errorcode: int) -> None:  # noqa: N802 - mpi4py's name
    """Remove a user error code."""
    mine = _remove("Remove_error_code", int(errorcode), False)
    del mine["class"][int(errorcode)]


def Remove_error_string(errorcode: int) -> None:  # noqa: N802 - mpi4py's name
    """Remove the string of a user error class or code."""
    mine = _user(create=True)
    assert mine is not None
    if int(errorcode) not in mine["class"]:
        raise _bad("Remove_error_string", f"{errorcode} is not a user error class or code")
    mine["string"].pop(int(errorcode), None)
