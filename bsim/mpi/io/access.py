"""MPI-IO data access (MPI 4.0 Sec. 14.4): reads and writes of :class:`bsim.mpi.io.file.File`.

Every rank lives in this one host process, so a file opened with ``File.Open`` is one
host file descriptor shared by the members (:class:`FileState`); a write is an
``os.pwrite`` of the bytes the rank's view selects (``bsim/mpi/io/views.py``) at the
moment of the call, a read an ``os.pread``: data written by one rank is read back by
another exactly as under real MPI, for programs that order their accesses as MPI's
consistency rules ask (``Sync``-``Barrier``-``Sync``, or atomic mode).  A placeholder
buffer (``bsim.Buffer``: a size, no memory) moves no bytes and costs the same time.

Positioning: explicit offsets (``*_at``), the rank's individual file pointer, or the
file's shared pointer (``*_shared``, ``*_ordered``), all in etypes of the view.

Time (``docs/io.md``; the formulas of :mod:`netmodels.filesystem`, the run's
``filesystem`` model ``fs``) -- all of it comm time:

* independent call (``Read``, ``Write_at``, ``Read_shared``, ...): handled when the
  engine reaches the rank's clock (so the file's storage targets, the rank's client link
  and the aggregate link see the calls in simulated-time order); it ends at
  ``fs.finish(segments, clock, queues)``, which is
  ``clock + fs.independent(segments)`` when the targets are idle; a nonblocking form
  (``Iread``, ...) completes then, overlapping with the rank's work until ``Wait``;
* collective call (``Read_all``, ``Write_at_all``, ``Read_ordered``, ...): a barrier of
  the file's group, then the two-phase exchange and the aggregators' access of the union
  of the members' bytes (:mod:`bsim.mpi.io.collective`);
* metadata operations (``Open``, ``Close``, ``Delete``, ``Set_size``, ``Preallocate``):
  ``fs.metadata``, after a barrier when collective; ``Sync``: a barrier plus ``latency``.
"""

from __future__ import annotations

import os
import weakref
from typing import TYPE_CHECKING, Any

from ...constants import ANY_SOURCE, ANY_TAG, ReqKind
from ...engine.collective_rules import ALL, arrive
from ...engine.rank import current
from ...errors import MPIUsageError, MPIUsageTypeError
from ..common.namespace import INT_CONSTANTS
from ..data.buffers import BufInfo, MPIUsageBufferError, parse_buffer
from ..requests.request import Request, Status, hand_out

if TYPE_CHECKING:
    from ...engine.rank import VirtualRank

__all__ = ["FileState", "state_of", "filesystem", "charge", "charge_until", "group_call",
           "first_out", "no_pointer_of_mine",
           "host_path", "check_amode", "host_open", "host_error"]

_K = INT_CONSTANTS
MODE_RDONLY, MODE_WRONLY, MODE_RDWR = _K["MODE_RDONLY"], _K["MODE_WRONLY"], _K["MODE_RDWR"]
MODE_CREATE, MODE_EXCL, MODE_SEQUENTIAL = _K["MODE_CREATE"], _K["MODE_EXCL"], _K["MODE_SEQUENTIAL"]
_ERR_AMODE, _ERR_NO_SUCH_FILE = _K["ERR_AMODE"], _K["ERR_NO_SUCH_FILE"]
_ERR_FILE_EXISTS, _ERR_BAD_FILE = _K["ERR_FILE_EXISTS"], _K["ERR_BAD_FILE"]
_ERR_FILE, _ERR_ACCESS = _K["ERR_FILE"], _K["ERR_ACCESS"]
_ERR_READ_ONLY, _ERR_ARG, _ERR_IO = _K["ERR_READ_ONLY"], _K["ERR_ARG"], _K["ERR_IO"]
_ERR_UNSUPPORTED = _K["ERR_UNSUPPORTED_OPERATION"]


class FileState:
    """What the members of one open file share: the host descriptor, access mode, group,
    the shared file pointer (etypes), atomicity, hints, how many members still have it
    open."""

    def __init__(self, path: str, fd: int, amode: int, comm: Any,
                 members: tuple[int, ...]) -> None:
        self.path, self.fd, self.amode = path, fd, amode
        self.comm = comm                  # the file's private communicator (collectives)
        self.members = members            # world ranks in group order
        self.shared = 0                   # the shared file pointer, in etypes
        self.atomic = False
        self.hints: dict[str, str] = {}
        self.open_count = len(members)
        self.free: list[float] | None = None   # when each storage target is free next
        self.coll_end: dict[Any, list[Any]] = {}   # collective -> [end time, members left]
        self.prefix: dict[Any, list[Any]] = {}   # ordered call -> [offsets, members left]
        self.leaving: dict[Any, int] = {}         # collective -> members yet to leave it
        # the descriptor is closed by the last Close, or at the end of a run that did not
        # close the file (Engine.finish), or when this state is dropped
        self.close_fd = weakref.finalize(self, os.close, fd)

    def targets(self, fs: Any) -> list[float]:
        """When each of the file's storage targets is free (the model's queues)."""
        if self.free is None:
            self.free = [0.0] * fs.targets()
        return self.free


def state_of(f: Any, vr: VirtualRank, call: str) -> FileState:
    """The shared state of *f*; :class:`MPIUsageError` (``ERR_FILE``) on ``FILE_NULL``."""
    st: FileState | None = f._local.state
    if st is None:
        raise MPIUsageError(f"rank {vr.rank}: File.{call} on FILE_NULL (or a closed file)",
                            error_class=_ERR_FILE)
    return st


def filesystem(vr: VirtualRank) -> Any:
    """The run's file-system model (``simulate(filesystem=...)``; the default otherwise)."""
    eng = vr.engine
    fs = getattr(eng, "filesystem", None)
    if fs is None:
        from netmodels.filesystem import build_filesystem
        fs = eng.filesystem = build_filesystem(None)
    return fs


def _links(vr: VirtualRank) -> dict[str, Any]:
    """The run's shared link queues: ``{"client": {rank: free at}, "aggregate": free at}``."""
    links: dict[str, Any] = vr.engine.user_state.setdefault(
        "bsim.file.links", {"client": {}, "aggregate": 0.0})
    return links


def charge(vr: VirtualRank, seconds: float, call: str) -> None:
    """The rank spends *seconds* of comm time in *call*."""
    if seconds > 0.0:
        req = Request(vr, ReqKind.SEND, call)
        req.resolve(vr.clock, seconds, vr.clock)
        vr.settle([req], call)


def charge_until(vr: VirtualRank, t: float, call: str) -> None:
    """The rank waits, as comm time, until simulated time *t* (nothing if already past)."""
    if t > vr.clock:
        req = Request(vr, ReqKind.SEND, call)
        req.resolve(t, 0.0, vr.clock)
        vr.settle([req], call)


def group_call(vr: VirtualRank, st: Any, call: str, value: Any = None,
               extra: tuple[Any, ...] = (), blocking: bool = True) -> tuple[Any, int, Any]:
    """Arrive at collective *call* of the file's group: ``(instance, group rank, request)``;
    blocking: after the barrier (the run's collective cost model prices it)."""
    inst, me, req = arrive(vr, st.comm, f"File.{call}", ALL, -1, 0, value, extra,
                           blocking=blocking, cost_op="barrier")
    if blocking and req is not None:
        vr.settle([req], f"File.{call}")
    return inst, me, req


def first_out(st: FileState, inst: Any) -> bool:
    """Whether the calling member is the first to leave collective *inst*: it applies the
    call's effect on the shared state and the host file once, before any member goes on
    (a member that went on and then saw another member apply it again would lose its own
    later writes or pointer moves)."""
    known = st.leaving.get(inst.key)
    first = known is None
    left = (inst.size if known is None else known) - 1
    if left:
        st.leaving[inst.key] = left
    else:
        st.leaving.pop(inst.key, None)
    return first


# -- the host file -----------------------------------------------------------------------

def host_path(vr: Any, filename: Any, call: str) -> str:
    """A file name (``str``, ``bytes`` or path-like) as a ``str``."""
    try:
        return os.fsdecode(os.fspath(filename))
    except TypeError:
        raise MPIUsageTypeError(f"rank {vr.rank}: File.{call}: filename must be a str, bytes "
                                f"or path, got {type(filename).__name__}") from None


def check_amode(vr: Any, amode: Any) -> int:
    """*amode* if it is a valid access mode (MPI 4.0 Sec. 14.2.1), else ``ERR_AMODE``."""
    where = f"rank {vr.rank}: File.Open"
    if isinstance(amode, bool) or not isinstance(amode, int):
        raise MPIUsageTypeError(f"{where}: amode must be an int of MODE_* flags, got "
                                f"{amode!r}")
    access = [m for m in (MODE_RDONLY, MODE_WRONLY, MODE_RDWR) if amode & m]
    why = ""
    if len(access) != 1:
        why = "exactly one of MODE_RDONLY, MODE_WRONLY, MODE_RDWR is required"
    elif amode & MODE_RDONLY and amode & (MODE_CREATE | MODE_EXCL):
        why = "MODE_RDONLY cannot be combined with MODE_CREATE or MODE_EXCL"
    elif amode & MODE_RDWR and amode & MODE_SEQUENTIAL:
        why = "MODE_RDWR cannot be combined with MODE_SEQUENTIAL"
    if why:
        raise MPIUsageError(f"{where}: invalid amode {amode:#x}: {why}", error_class=_ERR_AMODE)
    return amode


def host_open(path: str, amode: int) -> int:
    """Open the host file for *amode* (``OSError`` as the OS says)."""
    flags = os.O_RDONLY if amode & MODE_RDONLY else \
        os.O_WRONLY if amode & MODE_WRONLY else os.O_RDWR
    if amode & MODE_CREATE:
        flags |= os.O_CREAT
    if amode & MODE_EXCL:
        flags |= os.O_EXCL
    return os.open(path, flags, 0o666)


def host_error(vr: Any, exc: OSError, call: str, path: str) -> MPIUsageError:
    """The ``MPI.Exception`` of a host error, with MPICH's error class."""
    cls = (_ERR_NO_SUCH_FILE if isinstance(exc, FileNotFoundError) else
           _ERR_FILE_EXISTS if isinstance(exc, FileExistsError) else
           _ERR_ACCESS if isinstance(exc, PermissionError) else
           _ERR_BAD_FILE if isinstance(exc, IsADirectoryError) else _ERR_IO)
    return MPIUsageError(f"rank {vr.rank}: File.{call}: {path!r}: {exc.strerror}",
                         error_class=cls)


# -- moving the bytes --------------------------------------------------------------------

def _access(vr: VirtualRank, f: Any, st: FileState, call: str, buf: Any, offset: int,
            write: bool) -> tuple[int, list[tuple[int, int]], BufInfo]:
    """Move the data of one call at etype *offset*: ``(bytes moved, file segments, buffer)``."""
    where = f"rank {vr.rank}: File.{call}"
    if write and st.amode & MODE_RDONLY:
        raise MPIUsageError(f"{where}: the file was opened MODE_RDONLY",
                            error_class=_ERR_READ_ONLY)
    if not write and st.amode & MODE_WRONLY:
        raise MPIUsageError(f"{where}: the file was opened MODE_WRONLY",
                            error_class=_ERR_ACCESS)
    info = parse_buffer(vr, buf, f"File.{call}")
    view = f._local.view
    esize = view.esize
    if info.nbytes % esize:
        raise MPIUsageError(f"{where}: {info.nbytes} bytes are not a whole number of the "
                            f"view's etype {view.etype.name} ({esize} bytes)",
                            error_class=_ERR_IO)   # MPICH's class
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise MPIUsageError(f"{where}: offset must be an int >= 0, got {offset!r}",
                            error_class=_ERR_ARG)
    try:
        segs = view.segments(offset * esize, info.nbytes)
    except ValueError as exc:
        raise MPIUsageError(f"{where}: {exc}") from None
    mem = info.mem
    if mem is None:   # a placeholder: sizes only
        return info.nbytes, segs, info
    try:
        if write:
            data = bytes(mem)
            pos = 0
            for off, n in segs:
                os.pwrite(st.fd, data[pos:pos + n], off)
                pos += n
            return info.nbytes, segs, info
        if mem.readonly:
            raise MPIUsageBufferError(f"{where}: the receive buffer is read-only")
        chunks, got, done = [], [], 0
        for off, n in segs:
            b = os.pread(st.fd, n, off)
            chunks.append(b)
            got.append((off, len(b)))
            done += len(b)
            if len(b) < n:   # end of file
                break
    except OSError as exc:
        raise MPIUsageError(f"{where}: {exc.strerror} ({st.path})", error_class=_ERR_IO) \
            from None
    if done:
        mem[0:done] = b"".join(chunks)
    return done, got, info


def no_pointer_of_mine(vr: VirtualRank, st: FileState, call: str) -> None:
    """``ERR_UNSUPPORTED_OPERATION`` for explicit offsets and the individual file pointer
    on a ``MODE_SEQUENTIAL`` file (MPI 4.0 Sec. 14.2.1: shared pointer only)."""
    if st.amode & MODE_SEQUENTIAL:
        raise MPIUsageError(f"rank {vr.rank}: File.{call}: the file was opened "
                            f"MODE_SEQUENTIAL: only the shared file pointer can be used",
                            error_class=_ERR_UNSUPPORTED)


def _advance(f: Any, done: int) -> None:
    f._local.position += done // f._local.view.esize


def _status(status: Any, done: int) -> None:
    if status is not None:
        if not isinstance(status, Status):
            raise TypeError(f"expected a Status, got {type(status).__name__}")
        status._fill(ANY_SOURCE, ANY_TAG, done)


def _independent(f: Any, buf: Any, offset: int | None, call: str, write: bool,
                 status: Any, blocking: bool, shared: bool = False) -> Request | None:
    vr = current()
    st = state_of(f, vr, call)
    if not shared:
        no_pointer_of_mine(vr, st, call)
    vr.sync(f"File.{call}")   # accesses reach the file system in simulated-time order
    individual = offset is None and not shared
    if shared:
        offset = st.shared
    elif offset is None:
        offset = f._local.position
    done, segs, _ = _access(vr, f, st, call, buf, offset, write)
    if shared:
        st.shared += done // f._local.view.esize
    elif individual:
        _advance(f, done)
    vr.ops += 1
    fs = filesystem(vr)
    links = _links(vr)
    mine = [links["client"].get(vr.rank, 0.0), links["aggregate"]]
    end = fs.finish(segs, vr.clock, st.targets(fs), 1, mine)
    links["client"][vr.rank], links["aggregate"] = mine
    if blocking:
        charge_until(vr, end, f"File.{call}")
        _status(status, done)
        return None
    req = Request(vr, ReqKind.SEND, f"File.{call}")
    req.envelope = (ANY_SOURCE, ANY_TAG, done)
    req.t_post = vr.clock
    req.resolve(end, 0.0, vr.clock)
    return hand_out(req)


# -- the File methods --------------------------------------------------------------------

def Read(f: Any, buf: Any, status: Any = None) -> None:
    """Read using the individual file pointer."""
    _independent(f, buf, None, "Read", False, status, True)


def Write(f: Any, buf: Any, status: Any = None) -> None:
    """Write using the individual file pointer."""
    _independent(f, buf, None, "Write", True, status, True)


def Read_at(f: Any, offset: int, buf: Any, status: Any = None) -> None:
    """Read using an explicit offset."""
    _independent(f, buf, offset, "Read_at", False, status, True)


def Write_at(f: Any, offset: int, buf: Any, status: Any = None) -> None:
    """Write using an explicit offset."""
    _independent(f, buf, offset, "Write_at", True, status, True)


def Read_shared(f: Any, buf: Any, status: Any = None) -> None:
    """Read using the shared file pointer."""
    _independent(f, buf, None, "Read_shared", False, status, True, shared=True)


def Write_shared(f: Any, buf: Any, status: Any = None) -> None:
    """Write using the shared file pointer."""
    _independent(f, buf, None, "Write_shared", True, status, True, shared=True)


def _req(req: Request | None) -> Request:
    assert req is not None   # a nonblocking form always makes one
    return req


def Iread(f: Any, buf: Any) -> Request:
    """Nonblocking read using the individual file pointer."""
    return _req(_independent(f, buf, None, "Iread", False, None, False))


def Iwrite(f: Any, buf: Any) -> Request:
    """Nonblocking write using the individual file pointer."""
    return _req(_independent(f, buf, None, "Iwrite", True, None, False))


def Iread_at(f: Any, offset: int, buf: Any) -> Request:
    """Nonblocking read using an explicit offset."""
    return _req(_independent(f, buf, offset, "Iread_at", False, None, False))


def Iwrite_at(f: Any, offset: int, buf: Any) -> Request:
    """Nonblocking write using an explicit offset."""
    return _req(_independent(f, buf, offset, "Iwrite_at", True, None, False))


def Iread_shared(f: Any, buf: Any) -> Request:
    """Nonblocking read using the shared file pointer."""
    return _req(_independent(f, buf, None, "Iread_shared", False, None, False,
                        shared=True))


def Iwrite_shared(f: Any, buf: Any) -> Request:
    """Nonblocking write using the shared file pointer."""
    return _req(_independent(f, buf, None, "Iwrite_shared", True, None, False,
                        shared=True))
