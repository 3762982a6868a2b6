"""Collective MPI-IO data access (MPI 4.0 Sec. 14.4.3-14.4.5): ``Read_all``, ``Write_at_all``,
their nonblocking forms, the ordered (shared pointer) forms and the split collectives
(``*_begin`` / ``*_end``).  Data movement and timing rules: :mod:`bsim.mpi.file_io`.

A split collective's ``_begin`` starts the operation as its nonblocking form does (the
ordered forms complete in ``_begin``, which needs every member's count); ``_end``
completes it and fills the status.  One split collective may be active per file handle
(MPI 4.0 Sec. 14.4.5): a second ``_begin`` or an ``_end`` that does not match the
``_begin`` is an error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..engine.rank import current
from ..errors import MPIUsageError
from .file_io import _collective, _ordered, _req, _status
from .namespace import INT_CONSTANTS
from .requests import Request

__all__ = ["Read_all", "Write_all", "Read_at_all", "Write_at_all", "Iread_all", "Iwrite_all",
           "Iread_at_all", "Iwrite_at_all", "Read_ordered", "Write_ordered",
           "Read_all_begin", "Read_all_end", "Write_all_begin", "Write_all_end",
           "Read_at_all_begin", "Read_at_all_end", "Write_at_all_begin", "Write_at_all_end",
           "Read_ordered_begin", "Read_ordered_end", "Write_ordered_begin",
           "Write_ordered_end"]

_ERR_IO = INT_CONSTANTS["ERR_IO"]   # MPICH's class for a misplaced _begin or _end


def Read_all(f: Any, buf: Any, status: Any = None) -> None:
    """Collective read using the individual file pointer."""
    _collective(f, buf, None, "Read_all", False, status, True)


def Write_all(f: Any, buf: Any, status: Any = None) -> None:
    """Collective write using the individual file pointer."""
    _collective(f, buf, None, "Write_all", True, status, True)


def Read_at_all(f: Any, offset: int, buf: Any, status: Any = None) -> None:
    """Collective read using an explicit offset."""
    _collective(f, buf, offset, "Read_at_all", False, status, True)


def Write_at_all(f: Any, offset: int, buf: Any, status: Any = None) -> None:
    """Collective write using an explicit offset."""
    _collective(f, buf, offset, "Write_at_all", True, status, True)


def Iread_all(f: Any, buf: Any) -> Request:
    """Nonblocking collective read using the individual file pointer."""
    return _req(_collective(f, buf, None, "Iread_all", False, None, False))


def Iwrite_all(f: Any, buf: Any) -> Request:
    """Nonblocking collective write using the individual file pointer."""
    return _req(_collective(f, buf, None, "Iwrite_all", True, None, False))


def Iread_at_all(f: Any, offset: int, buf: Any) -> Request:
    """Nonblocking collective read using an explicit offset."""
    return _req(_collective(f, buf, offset, "Iread_at_all", False, None, False))


def Iwrite_at_all(f: Any, offset: int, buf: Any) -> Request:
    """Nonblocking collective write using an explicit offset."""
    return _req(_collective(f, buf, offset, "Iwrite_at_all", True, None, False))


def Read_ordered(f: Any, buf: Any, status: Any = None) -> None:
    """Collective read using the shared file pointer, in rank order."""
    _ordered(f, buf, "Read_ordered", False, status)


def Write_ordered(f: Any, buf: Any, status: Any = None) -> None:
    """Collective write using the shared file pointer, in rank order."""
    _ordered(f, buf, "Write_ordered", True, status)


# -- split collectives -----------------------------------------------------------------

def _begin(f: Any, name: str, start: Callable[[], Request | int]) -> None:
    vr = current()
    local = f._local
    if local.split is not None:
        raise MPIUsageError(f"rank {vr.rank}: File.{name}_begin while {local.split[0]}_begin "
                            f"is active on this file (one split collective at a time)",
                            error_class=_ERR_IO)
    local.split = (name, start())


def _end(f: Any, name: str, status: Any) -> None:
    vr = current()
    local = f._local
    if local.split is None or local.split[0] != name:
        active = f"{local.split[0]}_begin is active" if local.split else "none is active"
        raise MPIUsageError(f"rank {vr.rank}: File.{name}_end without a matching "
                            f"File.{name}_begin ({active})", error_class=_ERR_IO)
    _, pending = local.split
    local.split = None
    if isinstance(pending, Request):
        pending.Wait(status)
    else:
        _status(status, pending)


def Read_all_begin(f: Any, buf: Any) -> None:
    """Start a split collective read using the individual file pointer."""
    _begin(f, "Read_all", lambda: _req(_collective(f, buf, None, "Read_all_begin", False, None,
                                            False)))


def Read_all_end(f: Any, buf: Any, status: Any = None) -> None:
    """Complete a split collective read using the individual file pointer."""
    _end(f, "Read_all", status)


def Write_all_begin(f: Any, buf: Any) -> None:
    """Start a split collective write using the individual file pointer."""
    _begin(f, "Write_all", lambda: _req(_collective(f, buf, None, "Write_all_begin", True, None,
                                             False)))


def Write_all_end(f: Any, buf: Any, status: Any = None) -> None:
    """Complete a split collective write using the individual file pointer."""
    _end(f, "Write_all", status)


def Read_at_all_begin(f: Any, offset: int, buf: Any) -> None:
    """Start a split collective read using an explicit offset."""
    _begin(f, "Read_at_all", lambda: _req(_collective(f, buf, offset, "Read_at_all_begin", False,
                                               None, False)))


def Read_at_all_end(f: Any, buf: Any, status: Any = None) -> None:
    """Complete a split collective read using an explicit offset."""
    _end(f, "Read_at_all", status)


def Write_at_all_begin(f: Any, offset: int, buf: Any) -> None:
    """Start a split collective write using an explicit offset."""
    _begin(f, "Write_at_all", lambda: _req(_collective(f, buf, offset, "Write_at_all_begin", True,
                                                None, False)))


def Write_at_all_end(f: Any, buf: Any, status: Any = None) -> None:
    """Complete a split collective write using an explicit offset."""
    _end(f, "Write_at_all", status)


def Read_ordered_begin(f: Any, buf: Any) -> None:
    """Start a split collective read using the shared file pointer (completes here)."""
    _begin(f, "Read_ordered", lambda: _ordered(f, buf, "Read_ordered_begin", False, None))


def Read_ordered_end(f: Any, buf: Any, status: Any = None) -> None:
    """Complete a split collective read using the shared file pointer."""
    _end(f, "Read_ordered", status)


def Write_ordered_begin(f: Any, buf: Any) -> None:
    """Start a split collective write using the shared file pointer (completes here)."""
    _begin(f, "Write_ordered", lambda: _ordered(f, buf, "Write_ordered_begin", True, None))


def Write_ordered_end(f: Any, buf: Any, status: Any = None) -> None:
    """Complete a split collective write using the shared file pointer."""
    _end(f, "Write_ordered", status)
