"""MPI sessions (MPI 4.1, section 11.3; mpi4py's ``MPI.Session``).

A session is local to the rank that initialises it: ``Session.Init()`` costs no simulated
time and gives that rank a handle to the run's process sets.  bsim's process sets are the
two the standard requires, ``mpi://WORLD`` (every rank of the run) and ``mpi://SELF``
(the calling rank); ``Get_pset_info`` reports their ``mpi_size``, ``Create_group`` their
group, from which ``Intracomm.Create_from_group`` builds a communicator.  A session has
its own error handler (``ERRORS_RETURN`` unless ``Init`` is given one) and its own buffer
for buffered sends (``Attach_buffer``: MPI 4.1 section 3.6).  Calls on ``SESSION_NULL``
are ``ERR_SESSION``; an unknown process set or index is ``ERR_ARG``.  A session is a
local handle: pickling one is a ``ValueError`` (``SESSION_NULL`` pickles to itself).
"""

from __future__ import annotations

from itertools import count
from typing import Any, cast

from ...constants import ERR_ARG, ERR_SESSION
from ...engine.rank import current
from ...engine.spawning import world_members
from ...errors import MPIUsageError
from ..common import errhandlers
from ..common.info import Info
from ..common.int_handles import IntHandle
from ..management.groups import Group
from ..p2p import bsend

__all__ = ["Session", "SESSION_NULL", "PSETS"]

PSETS = ("mpi://WORLD", "mpi://SELF")
"""The process sets of every run, in ``Get_nth_pset`` order."""
_NULL = 0x38000000       # MPICH's MPI_SESSION_NULL
_next_id = count(0xB8000000)   # MPICH's handles of live sessions (direct kind)


class Session(IntHandle):
    """A session handle: ``SESSION_NULL``, one from ``Session.Init()``, or a copy."""

    __slots__ = ("_id", "__weakref__")

    def __init__(self, session: Session | None = None) -> None:
        if session is not None and not isinstance(session, Session):
            raise TypeError(f"Session(): expected a Session, got {type(session).__name__}")
        self._id: int = _NULL if session is None else session._id

    # -- handle semantics ---------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return isinstance(other, Session) and other._id == self._id

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        raise TypeError("unhashable type: 'Session'")   # as mpi4py's handles

    def __bool__(self) -> bool:
        return self._id != _NULL

    def __repr__(self) -> str:
        return "<Session SESSION_NULL>" if not self else f"<Session #{self._id}>"

    def __reduce__(self) -> Any:
        if self is SESSION_NULL:
            return "SESSION_NULL"
        if not self:
            return (type(self), ())
        raise ValueError(f"cannot serialize {self!r}: a session is local to its process")

    @property
    def context(self) -> tuple[str, int]:
        """The scope of this session's attached buffer (``bsim/mpi/p2p/bsend.py``)."""
        return ("session", self._id)

    def _live(self, call: str) -> int:
        vr = current()
        if not self:
            raise MPIUsageError(f"rank {vr.rank}: Session.{call} on SESSION_NULL",
                                error_class=ERR_SESSION)
        return vr.rank

    # -- the MPI calls --------------------------------------------------------------------
    @classmethod
    def Init(cls, info: Info | None = None, errhandler: Any = None) -> Session:
        """A new session of the calling rank (no simulated time)."""
        session = cls()
        session._id = next(_next_id)
        if errhandler is not None:
            errhandlers.set_errhandler(session, errhandler)
        return session

    def Finalize(self) -> None:
        """End the session; this handle equals ``SESSION_NULL`` afterwards."""
        self._live("Finalize")
        self._id = _NULL

    def free(self) -> None:
        """mpi4py's ``free``: ``Finalize`` unless null."""
        if self:
            self.Finalize()

    def Get_num_psets(self, info: Info | None = None) -> int:
        """How many process sets there are."""
        self._live("Get_num_psets")
        return len(PSETS)

    def Get_nth_pset(self, n: int, info: Info | None = None) -> str:
        """The name of process set *n*."""
        rank = self._live("Get_nth_pset")
        if not 0 <= int(n) < len(PSETS):
            raise MPIUsageError(f"rank {rank}: Session.Get_nth_pset({n}): valid indices are "
                                f"0..{len(PSETS) - 1}", error_class=ERR_ARG)
        return PSETS[int(n)]

    def Get_info(self) -> Info:
        """The session's hints: the thread level (``mpi_thread_support_level``)."""
        self._live("Get_info")
        return Info.Create({"mpi_thread_support_level": "MPI_THREAD_MULTIPLE"})

    def _members(self, pset_name: str, call: str) -> tuple[int, ...]:
        rank = self._live(call)
        vr = current()
        if pset_name == "mpi://WORLD":
            return world_members(vr)
        if pset_name == "mpi://SELF":
            return (rank,)
        raise MPIUsageError(f"rank {rank}: Session.{call}({pset_name!r}): no such process "
                            f"set (bsim has {', '.join(PSETS)})", error_class=ERR_ARG)

    def Get_pset_info(self, pset_name: str) -> Info:
        """``mpi_size`` of process set *pset_name*."""
        members = self._members(pset_name, "Get_pset_info")
        return Info.Create({"mpi_size": str(len(members))})

    def Create_group(self, pset_name: str) -> Group:
        """The group of process set *pset_name*."""
        return Group(self._members(pset_name, "Create_group"))

    # -- error handlers -------------------------------------------------------------------
    @classmethod
    def Create_errhandler(cls, errhandler_fn: Any) -> errhandlers.Errhandler:
        """A user handler ``errhandler_fn(session, errorcode)``."""
        return errhandlers.create_errhandler("Session", errhandler_fn)

    def Get_errhandler(self) -> errhandlers.Errhandler:
        """A new handle equal to this session's error handler."""
        self._live("Get_errhandler")
        return errhandlers.get_errhandler(self)

    def Set_errhandler(self, errhandler: errhandlers.Errhandler) -> None:
        """Set this session's error handler."""
        self._live("Set_errhandler")
        errhandlers.set_errhandler(self, errhandler)

    def Call_errhandler(self, errorcode: int) -> None:
        """Invoke this session's error handler with *errorcode*."""
        self._live("Call_errhandler")
        errhandlers.call_errhandler(self, errorcode)

    # -- buffered sends -------------------------------------------------------------------
    def Attach_buffer(self, buf: Any) -> None:
        """Attach *buf* to this session for buffered sends (MPI 4.1)."""
        self._live("Attach_buffer")
        bsend.comm_attach_buffer(cast(Any, self), buf)

    def Detach_buffer(self) -> Any:
        """Detach this session's buffer once its messages have left; return it."""
        self._live("Detach_buffer")
        return bsend.comm_detach_buffer(cast(Any, self))

    def Flush_buffer(self) -> None:
        """Wait until every message in this session's buffer has left it."""
        self._live("Flush_buffer")
        bsend.comm_flush_buffer(cast(Any, self))

    def Iflush_buffer(self) -> Any:
        """Nonblocking ``Flush_buffer``."""
        self._live("Iflush_buffer")
        return bsend.comm_iflush_buffer(cast(Any, self))


SESSION_NULL = Session()

