"""MPI-IO files (MPI 4.0 Chapter 14, mpi4py's ``MPI.File``): open, close, views, pointers.

``File.Open`` is collective over its communicator: the members agree on the name and
access mode, one host file is opened for all of them (the ranks share this process) and
each member gets its own ``File`` handle over the shared state
(:class:`~bsim.mpi.io.access.FileState`).  Reads and writes are in :mod:`bsim.mpi.io.access`
and :mod:`bsim.mpi.io.collective`, views in :mod:`bsim.mpi.io.views`; the timing
rules (a Lustre-like parallel file system, :mod:`netmodels.filesystem`) are in
``docs/io.md``.

Handles behave as mpi4py's: a ``File`` is true while open, equal to its copies, equal to
``FILE_NULL`` once closed (and then has ``FILE_NULL``'s error handler), and does not
pickle.  A new file's error handler is ``ERRORS_RETURN``, which mpi4py sets on every file
it opens (``mpi4py.rc.errors = "exception"``) in place of MPI's default, ``FILE_NULL``'s
handler; whatever the handler, an erroneous call raises ``MPI.Exception`` in the rank
that made it.  Files
cannot be used in distributed runs (one host descriptor per file).
"""

from __future__ import annotations

import os
import weakref
from typing import Any

from ...engine.collective_rules import finalize
from ...engine.rank import current
from ...errors import MPIUsageError, MPIUsageTypeError
from ..common import errhandlers
from ..common.info import Info, check_info
from ..common.namespace import INT_CONSTANTS
from ..management.groups import Group
from . import access as file_io
from . import collective as file_collective
from .access import (
    FileState,
    charge,
    check_amode,
    filesystem,
    first_out,
    group_call,
    host_error,
    host_open,
    host_path,
    no_pointer_of_mine,
    state_of,
)
from .views import DEFAULT_DATAREP, View, make_view, type_extent

__all__ = ["File", "FILE_NULL"]

_K = INT_CONSTANTS
MODE_RDONLY, MODE_APPEND = _K["MODE_RDONLY"], _K["MODE_APPEND"]
MODE_DELETE_ON_CLOSE, MODE_SEQUENTIAL = _K["MODE_DELETE_ON_CLOSE"], _K["MODE_SEQUENTIAL"]
SEEK_SET, SEEK_CUR, SEEK_END = _K["SEEK_SET"], _K["SEEK_CUR"], _K["SEEK_END"]
DISPLACEMENT_CURRENT = _K["DISPLACEMENT_CURRENT"]
_ERR_ARG, _ERR_READ_ONLY = _K["ERR_ARG"], _K["ERR_READ_ONLY"]
_STATE = "bsim.file"
_HANDLES: weakref.WeakValueDictionary[int, File] = weakref.WeakValueDictionary()
"""Handle values given out by ``File.handle``, to the file (``fromhandle``)."""


class _Local:
    """One rank's handle state, shared by the handle's copies (``File(f)``)."""

    __slots__ = ("state", "view", "position", "split", "__weakref__")

    def __init__(self, state: FileState | None = None) -> None:
        self.state = state
        self.view = View(0, _byte(), _byte(), DEFAULT_DATAREP)
        self.position = 0          # the individual file pointer, in etypes
        self.split: Any = None     # (name, request or count) of an active split collective


def _byte() -> Any:
    from ..data.datatypes import PREDEFINED
    return PREDEFINED["BYTE"]


class File:
    """An MPI-IO file handle (mpi4py's ``MPI.File``); see the module docstring."""

    __slots__ = ("_local", "__weakref__")

    def __new__(cls, *args: Any, **kwargs: Any) -> File:
        """mpi4py's subclasses call ``File.__new__(cls, file)``: the argument goes to
        ``__init__``."""
        return super().__new__(cls)

    def __init__(self, file: File | None = None) -> None:
        if file is None:
            self._local = _Local()
        elif isinstance(file, File):
            self._local = file._local
        else:
            raise TypeError(f"expected a File, got {type(file).__name__}")

    @property
    def _handle(self) -> _Local:
        """The handle's identity (error handlers): a closed file is ``FILE_NULL``."""
        return self._local if self._local.state is not None else FILE_NULL._local

    # -- handle semantics -----------------------------------------------------------
    def __bool__(self) -> bool:
        return self._local.state is not None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, File):
            return NotImplemented
        return self._local is other._local or (not self and not other)

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None   # type: ignore[assignment]   # mpi4py's handles are unhashable

    def __repr__(self) -> str:
        st = self._local.state
        return "<File FILE_NULL>" if st is None else f"<File {st.path!r} amode={st.amode:#x}>"

    def __reduce__(self) -> Any:
        """``FILE_NULL`` pickles to itself; an open file is not serializable (ValueError)."""
        if self:
            raise ValueError(f"cannot pickle {self!r}: files are not serializable")
        if self is FILE_NULL:
            return "FILE_NULL"
        return type(self), ()

    @property
    def handle(self) -> int:
        """The handle value (0 for ``FILE_NULL``); ``fromhandle`` gives the file back."""
        if not self:
            return 0
        _HANDLES[id(self._local)] = self
        return id(self._local)

    def toint(self) -> int:
        """The handle as an int (``fromint`` gives it back)."""
        return self.handle

    py2f = toint

    @classmethod
    def fromhandle(cls, handle: int) -> File:
        """The file of a handle value from ``handle`` (``FILE_NULL``'s for 0 or a closed one)."""
        f = _HANDLES.get(int(handle))
        return cls(f) if f is not None and f else cls()

    fromint = f2py = fromhandle

    def free(self) -> None:
        """Close the file if it is open (mpi4py's ``free``)."""
        if self:
            self.Close()

    # -- open, close, delete ------------------------------------------------------------
    @classmethod
    def Open(cls, comm: Any, filename: Any, amode: int = MODE_RDONLY,
             info: Any = None) -> File:
        """Open a file (collective over *comm*)."""
        vr = current()
        if not hasattr(comm, "members") or not comm:
            raise MPIUsageTypeError(f"rank {vr.rank}: File.Open: {comm!r} is not an "
                                    f"intracommunicator")
        if vr.engine.host_of is not None:
            raise MPIUsageError(f"rank {vr.rank}: File.Open: files are not supported in "
                                f"distributed runs (one host descriptor per file)")
        path = host_path(vr, filename, "Open")
        amode = check_amode(vr, amode)
        if info is not None:
            check_info(info, "File.Open")
        inst, me, req = group_call(vr, _Opener(comm), "Open", None,
                                   (("filename", path), ("amode", amode)))
        key = ("file", comm.coll_context(vr), inst.key[1])
        table = vr.engine.user_state.setdefault(_STATE, {})
        st = table.get(key)
        if st is None:
            members = comm.members(vr)
            try:
                fd = host_open(path, amode)
            except OSError as exc:
                st = exc
            else:
                private = comm.derive(vr, key, members, f"{comm.label}.File")
                st = FileState(path, fd, amode, private, members)
                vr.engine.user_state.setdefault("bsim.at_finish", []).append(st.close_fd)
                if isinstance(info, Info) and info:
                    st.hints.update(dict(info.items()))
            table[key] = st
        finalize(vr, comm, inst)
        if isinstance(st, OSError):
            raise host_error(vr, st, "Open", path)
        charge(vr, filesystem(vr).metadata_op(), "File.Open")
        f = cls()
        f._local.state = st
        if amode & MODE_APPEND:
            f._local.position = st.shared = os.fstat(st.fd).st_size
        return f

    def Close(self) -> None:
        """Close the file (collective); it equals ``FILE_NULL`` afterwards."""
        vr = current()
        st = state_of(self, vr, "Close")
        if self._local.split is not None:
            raise MPIUsageError(f"rank {vr.rank}: File.Close with {self._local.split[0]}"
                                f"_begin not ended")
        inst, _, _ = group_call(vr, st, "Close")
        finalize(vr, st.comm, inst)
        st.open_count -= 1
        if st.open_count == 0:
            st.close_fd()
            if st.amode & MODE_DELETE_ON_CLOSE:
                try:
                    os.unlink(st.path)
                except OSError:
                    pass
        charge(vr, filesystem(vr).metadata_op(), "File.Close")
        self._local.state = None

    @classmethod
    def Delete(cls, filename: Any, info: Any = None) -> None:
        """Delete a file."""
        vr = current()
        path = host_path(vr, filename, "Delete")
        if info is not None:
            check_info(info, "File.Delete")
        try:
            os.unlink(path)
        except OSError as exc:
            raise host_error(vr, exc, "Delete", path) from None
        charge(vr, filesystem(vr).metadata_op(), "File.Delete")

    # -- size, mode, group, info, atomicity, sync ---------------------------------------
    def Get_size(self) -> int:
        """The file's size in bytes."""
        st = state_of(self, current(), "Get_size")
        return os.fstat(st.fd).st_size

    def _resize(self, size: Any, call: str, grow_only: bool) -> None:
        vr = current()
        st = state_of(self, vr, call)
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise MPIUsageError(f"rank {vr.rank}: File.{call}: size must be an int >= 0, got "
                                f"{size!r}", error_class=_ERR_ARG)
        if st.amode & MODE_RDONLY:
            raise MPIUsageError(f"rank {vr.rank}: File.{call}: the file was opened "
                                f"MODE_RDONLY", error_class=_ERR_READ_ONLY)
        inst, _, _ = group_call(vr, st, call, None, (("size", size),))
        if first_out(st, inst) and (not grow_only or os.fstat(st.fd).st_size < size):
            os.ftruncate(st.fd, size)
        finalize(vr, st.comm, inst)
        charge(vr, filesystem(vr).metadata_op(), f"File.{call}")

    def Set_size(self, size: int) -> None:
        """Resize the file (collective)."""
        self._resize(size, "Set_size", False)

    def Preallocate(self, size: int) -> None:
        """Make the file at least *size* bytes (collective)."""
        self._resize(size, "Preallocate", True)

    @property
    def size(self) -> int:
        """The file's size in bytes."""
        return self.Get_size()

    def Get_amode(self) -> int:
        """The access mode the file was opened with."""
        return state_of(self, current(), "Get_amode").amode

    @property
    def amode(self) -> int:
        """The access mode."""
        return self.Get_amode()

    def Get_group(self) -> Group:
        """The group of the processes that opened the file."""
        return Group(state_of(self, current(), "Get_group").members)

    @property
    def group(self) -> Group:
        """The group of the file."""
        return self.Get_group()

    @property
    def group_size(self) -> int:
        """Number of processes in the file's group."""
        return len(state_of(self, current(), "group_size").members)

    @property
    def group_rank(self) -> int:
        """The calling rank's rank in the file's group."""
        vr = current()
        return state_of(self, vr, "group_rank").members.index(vr.rank)

    def Get_info(self) -> Info:
        """The hints in use: a new info (the caller frees it)."""
        return Info.Create(state_of(self, current(), "Get_info").hints)

    def Set_info(self, info: Info) -> None:
        """Add hints (collective in MPI; bsim keeps them and no model reads them)."""
        st = state_of(self, current(), "Set_info")
        check_info(info, "File.Set_info")
        if info:
            st.hints.update(dict(info.items()))

    @property
    def info(self) -> Info:
        """The file's hints."""
        return self.Get_info()

    @info.setter
    def info(self, info: Info) -> None:
        self.Set_info(info)

    def Set_atomicity(self, flag: bool) -> None:
        """Set atomic mode (collective); every bsim access is atomic: it changes no data."""
        vr = current()
        st = state_of(self, vr, "Set_atomicity")
        inst, _, _ = group_call(vr, st, "Set_atomicity", None, (("flag", bool(flag)),))
        if first_out(st, inst):
            st.atomic = bool(flag)
        finalize(vr, st.comm, inst)

    def Get_atomicity(self) -> bool:
        """Whether atomic mode is set."""
        return state_of(self, current(), "Get_atomicity").atomic

    @property
    def atomicity(self) -> bool:
        """Atomic mode."""
        return self.Get_atomicity()

    @atomicity.setter
    def atomicity(self, flag: bool) -> None:
        self.Set_atomicity(flag)

    def Sync(self) -> None:
        """Make writes visible (collective): a barrier plus one call's latency."""
        vr = current()
        st = state_of(self, vr, "Sync")
        inst, _, _ = group_call(vr, st, "Sync")
        finalize(vr, st.comm, inst)
        charge(vr, float(filesystem(vr).values.get("latency", 0.0)), "File.Sync")

    # -- views and pointers --------------------------------------------------------------
    def Set_view(self, disp: int = 0, etype: Any = None, filetype: Any = None,
                 datarep: str = DEFAULT_DATAREP, info: Any = None) -> None:
        """Set the file view (collective); both file pointers go back to 0."""
        vr = current()
        st = state_of(self, vr, "Set_view")
        if disp == DISPLACEMENT_CURRENT and not isinstance(disp, bool):
            if not st.amode & MODE_SEQUENTIAL:
                raise MPIUsageError(f"rank {vr.rank}: File.Set_view: DISPLACEMENT_CURRENT "
                                    f"needs a file opened MODE_SEQUENTIAL", error_class=_ERR_ARG)
            disp = self._local.view.byte_offset(st.shared)
        view = make_view(vr, disp, etype, filetype, datarep, "Set_view")
        if info is not None:
            check_info(info, "File.Set_view")
        inst, _, _ = group_call(vr, st, "Set_view")
        if first_out(st, inst):
            st.shared = 0
        finalize(vr, st.comm, inst)
        self._local.view = view
        self._local.position = 0

    def Get_view(self) -> tuple[int, Any, Any, str]:
        """``(disp, etype, filetype, datarep)``: derived types are new handles to free."""
        view = self._local.view
        state_of(self, current(), "Get_view")

        def handle(dt: Any) -> Any:
            return dt if getattr(dt, "is_predefined", False) else dt.Dup().Commit()
        return view.disp, handle(view.etype), handle(view.filetype), view.datarep

    def _whence(self, offset: Any, whence: Any, current_pos: int, call: str) -> int:
        vr = current()
        st = state_of(self, vr, call)
        if isinstance(offset, bool) or not isinstance(offset, int):
            raise MPIUsageError(f"rank {vr.rank}: File.{call}: offset must be an int, got "
                                f"{offset!r}", error_class=_ERR_ARG)
        if whence == SEEK_SET:
            pos = offset
        elif whence == SEEK_CUR:
            pos = current_pos + offset
        elif whence == SEEK_END:
            pos = self._local.view.end_offset(os.fstat(st.fd).st_size) + offset
        else:
            raise MPIUsageError(f"rank {vr.rank}: File.{call}: whence must be SEEK_SET, "
                                f"SEEK_CUR or SEEK_END, got {whence!r}", error_class=_ERR_ARG)
        if pos < 0:
            raise MPIUsageError(f"rank {vr.rank}: File.{call}: the position {pos} would be "
                                f"negative", error_class=_ERR_ARG)
        return pos

    def Seek(self, offset: int, whence: int = SEEK_SET) -> None:
        """Move the individual file pointer."""
        vr = current()
        no_pointer_of_mine(vr, state_of(self, vr, "Seek"), "Seek")
        self._local.position = self._whence(offset, whence, self._local.position, "Seek")

    def Get_position(self) -> int:
        """The individual file pointer, in etypes."""
        vr = current()
        no_pointer_of_mine(vr, state_of(self, vr, "Get_position"), "Get_position")
        return self._local.position

    def Seek_shared(self, offset: int, whence: int = SEEK_SET) -> None:
        """Move the shared file pointer (collective: the same arguments everywhere)."""
        vr = current()
        st = state_of(self, vr, "Seek_shared")
        pos = self._whence(offset, whence, st.shared, "Seek_shared")
        inst, _, _ = group_call(vr, st, "Seek_shared", None, (("offset", offset),
                                                              ("whence", whence)))
        if first_out(st, inst):
            st.shared = pos
        finalize(vr, st.comm, inst)

    def Get_position_shared(self) -> int:
        """The shared file pointer, in etypes."""
        return state_of(self, current(), "Get_position_shared").shared

    def Get_byte_offset(self, offset: int) -> int:
        """The absolute byte position of etype *offset* of the view."""
        state_of(self, current(), "Get_byte_offset")
        return self._local.view.byte_offset(int(offset))

    def Get_type_extent(self, datatype: Any) -> int:
        """The extent of *datatype* in the file's data representation (``native``: its
        extent in memory; a registered one: its ``extent_fn``)."""
        vr = current()
        state_of(self, vr, "Get_type_extent")
        return type_extent(vr, self._local.view, datatype)

    # -- error handlers -----------------------------------------------------------------
    def Get_errhandler(self) -> errhandlers.Errhandler:
        """The file's error handler."""
        return errhandlers.get_errhandler(self)

    def Set_errhandler(self, errhandler: Any) -> None:
        """Set the file's error handler (on ``FILE_NULL``: the default of new files)."""
        errhandlers.set_errhandler(self, errhandler)

    def Call_errhandler(self, errorcode: int) -> None:
        """Call the file's error handler with *errorcode*."""
        errhandlers.call_errhandler(self, errorcode)

    @classmethod
    def Create_errhandler(cls, errhandler_fn: Any) -> errhandlers.Errhandler:
        """A user error handler ``fn(file, errorcode)``."""
        return errhandlers.create_errhandler(cls.__name__, errhandler_fn)

    # -- data access (access.py, collective.py) ----------------------------------------
    Read, Write = file_io.Read, file_io.Write
    Read_at, Write_at = file_io.Read_at, file_io.Write_at
    Read_shared, Write_shared = file_io.Read_shared, file_io.Write_shared
    Iread, Iwrite = file_io.Iread, file_io.Iwrite
    Iread_at, Iwrite_at = file_io.Iread_at, file_io.Iwrite_at
    Iread_shared, Iwrite_shared = file_io.Iread_shared, file_io.Iwrite_shared
    Read_all, Write_all = file_collective.Read_all, file_collective.Write_all
    Read_at_all, Write_at_all = file_collective.Read_at_all, file_collective.Write_at_all
    Iread_all, Iwrite_all = file_collective.Iread_all, file_collective.Iwrite_all
    Iread_at_all = file_collective.Iread_at_all
    Iwrite_at_all = file_collective.Iwrite_at_all
    Read_ordered, Write_ordered = file_collective.Read_ordered, file_collective.Write_ordered
    Read_all_begin, Read_all_end = file_collective.Read_all_begin, file_collective.Read_all_end
    Write_all_begin = file_collective.Write_all_begin
    Write_all_end = file_collective.Write_all_end
    Read_at_all_begin = file_collective.Read_at_all_begin
    Read_at_all_end = file_collective.Read_at_all_end
    Write_at_all_begin = file_collective.Write_at_all_begin
    Write_at_all_end = file_collective.Write_at_all_end
    Read_ordered_begin = file_collective.Read_ordered_begin
    Read_ordered_end = file_collective.Read_ordered_end
    Write_ordered_begin = file_collective.Write_ordered_begin
    Write_ordered_end = file_collective.Write_ordered_end


class _Opener:
    """A communicator seen by ``group_call`` while a file is being opened (no state yet)."""

    def __init__(self, comm: Any) -> None:
        self.comm = comm


FILE_NULL = File()
"""The null file handle."""
