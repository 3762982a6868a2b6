"""RMA windows (MPI 4.0 Chapter 12, mpi4py's ``MPI.Win``): creation, memory, attributes.

``Win.Create``, ``Win.Allocate``, ``Win.Allocate_shared`` and ``Win.Create_dynamic`` are
collective over their communicator; each member gets its own ``Win`` object, and the
members share one :class:`~bsim.mpi.onesided.operations.WinState` (every rank's memory, locks,
epochs): all ranks live in one process, so a target's memory is reached directly.  Data
movement is in :mod:`bsim.mpi.onesided.operations`, synchronization in
:mod:`bsim.mpi.onesided.synchronization` (their docstrings give the timing rules;
``docs/rma.md`` collects them).

A ``Win`` is a numpy ``uint8`` array over the calling rank's window memory, so that
``memoryview(win)`` gives that memory, as mpi4py's buffer interface does (Python 3.11 has
no ``__buffer__`` for Python classes); besides that, it behaves as mpi4py's handle: it
compares equal to its copies, is false and equal to ``WIN_NULL`` once freed, and does not
pickle.  The memory model is ``WIN_UNIFIED``.

Timing of creation: an allgather of 24 bytes per rank (base, size, displacement unit)
over the communicator, priced by the run's collective cost model; ``Free``: a barrier.
Attributes, names, info, error handlers, ``Attach``/``Detach`` cost nothing.
``Allocate_shared`` gives each rank its own memory (as with ``alloc_shared_noncontig``),
reachable by the others through ``Shared_query``; bsim does not check that the members
share a node.  Windows cannot be used in distributed runs (the memory is in one process).
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ...constants import BOTTOM, PROC_NULL
from ...engine.collective_rules import ALL, arrive, finalize
from ...engine.rank import current
from ...errors import MPIUsageError, MPIUsageTypeError
from ..common import attributes, errhandlers
from ..common.info import Info, check_info
from ..common.namespace import INT_CONSTANTS
from ..comms.comm import COMM_SELF
from ..data.addresses import Get_address, NullMemory
from ..data.buffers import BufInfo
from ..data.pickling import buffer
from ..management.groups import Group
from . import operations as rma_ops
from . import synchronization as rma_sync
from .operations import WinState

__all__ = ["Win", "WIN_NULL"]

_K = INT_CONSTANTS
WIN_BASE, WIN_SIZE, WIN_DISP_UNIT = _K["WIN_BASE"], _K["WIN_SIZE"], _K["WIN_DISP_UNIT"]
WIN_CREATE_FLAVOR, WIN_MODEL = _K["WIN_CREATE_FLAVOR"], _K["WIN_MODEL"]
WIN_UNIFIED = _K["WIN_UNIFIED"]
FLAVOR_CREATE, FLAVOR_ALLOCATE = _K["WIN_FLAVOR_CREATE"], _K["WIN_FLAVOR_ALLOCATE"]
FLAVOR_DYNAMIC, FLAVOR_SHARED = _K["WIN_FLAVOR_DYNAMIC"], _K["WIN_FLAVOR_SHARED"]
_STATE = "bsim.rma"
_HANDLES: weakref.WeakValueDictionary[int, Win] = weakref.WeakValueDictionary()
"""Handle values given out by ``Win.handle``, to the window (``fromhandle``)."""


class _Local:
    """One rank's handle state, shared by the handle's copies (``Win(win)``)."""

    __slots__ = ("state", "memory", "base", "size", "unit", "name", "pending", "locks",
                 "lock_all", "post_group", "start_group", "fence", "__weakref__")

    def __init__(self, state: WinState | None = None, memory: Any = None, base: int = 0,
                 size: int = 0, unit: int = 1) -> None:
        self.state = state
        self.memory = memory
        self.base, self.size, self.unit = base, size, unit
        self.name = ""
        self.pending: list[Any] = []
        self.locks: dict[int, int] = {}
        self.lock_all = False   # the locks are Lock_all's (closed by Unlock_all only)
        self.post_group: list[int] | None = None
        self.start_group: list[int] | None = None
        self.fence = False   # a Fence opened an epoch (not closed by MODE_NOSUCCEED)


def _local_property(name: str) -> property:
    return property(lambda self: getattr(self._local, name),
                    lambda self, value: setattr(self._local, name, value))


def _writable(vr: Any, memory: Any, call: str) -> tuple[np.ndarray | None, int]:
    """(uint8 array over *memory* or None, its size): a placeholder ``bsim.Buffer`` has a
    size and no array."""
    if memory is None or memory is BOTTOM:
        return None, 0
    if isinstance(memory, BufInfo) and memory.mem is None:
        return None, memory.nbytes
    try:
        view = memoryview(memory)
    except TypeError:
        raise MPIUsageTypeError(f"rank {vr.rank}: Win.{call}: memory must be a buffer, got "
                                f"{type(memory).__name__}") from None
    if view.readonly or not view.c_contiguous:
        raise MPIUsageError(f"rank {vr.rank}: Win.{call}: memory must be a writable "
                            f"contiguous buffer")
    arr = np.frombuffer(view.cast("B") if view.nbytes else b"", dtype=np.uint8)
    return (arr if view.nbytes else None), view.nbytes


def _check_args(vr: Any, comm: Any, disp_unit: Any, call: str) -> None:
    if not hasattr(comm, "members") or not comm:
        raise MPIUsageError(f"rank {vr.rank}: Win.{call}: {comm!r} is not an intracommunicator")
    if not isinstance(disp_unit, (int, np.integer)) or disp_unit <= 0:
        raise MPIUsageError(f"rank {vr.rank}: Win.{call}: disp_unit must be an int > 0, got "
                            f"{disp_unit!r}")
    if vr.engine.host_of is not None:
        raise MPIUsageError(f"rank {vr.rank}: Win.{call}: RMA windows are not supported in "
                            f"distributed runs (window memory lives in one process)")


class Win(np.ndarray):
    """Remote memory access window (mpi4py's ``MPI.Win``); see the module docstring."""

    _local: _Local

    def __new__(cls, win: Win | None = None) -> Win:
        if win is None:
            obj = np.ndarray.__new__(cls, (0,), np.uint8)
            obj._local = _Local()
            return obj
        if not isinstance(win, Win):
            raise TypeError(f"expected a Win, got {type(win).__name__}")
        obj = np.ndarray.__new__(cls, win.shape, np.uint8, buffer=win if win.size else None)
        obj._local = win._local
        return obj

    def __array_finalize__(self, obj: Any) -> None:
        if obj is not None and not hasattr(self, "_local"):
            self._local = getattr(obj, "_local", None) or _Local()

    _state = _local_property("state")
    _pending = _local_property("pending")
    _locks = _local_property("locks")
    _lock_all = _local_property("lock_all")
    _post_group = _local_property("post_group")
    _start_group = _local_property("start_group")
    _fence = _local_property("fence")

    @property
    def _handle(self) -> _Local:
        return self._local

    # -- handle semantics -------------------------------------------------------------
    def __bool__(self) -> bool:
        return self._local.state is not None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Win):
            return NotImplemented
        return self._local is other._local or (not self and not other)

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None    # mpi4py's handles are unhashable

    def _no_order(self, other: object) -> bool:
        return NotImplemented   # handles have no order: <, <=, >, >= raise TypeError

    __lt__ = __le__ = __gt__ = __ge__ = _no_order  # type: ignore[assignment]

    @property
    def handle(self) -> int:
        """The handle value (0 for ``WIN_NULL``); ``fromhandle`` gives the window back."""
        if not self:
            return 0
        key = id(self._local)
        _HANDLES[key] = self
        return key

    def toint(self) -> int:
        """The handle as an int (``fromint`` gives it back)."""
        return self.handle

    py2f = toint

    @classmethod
    def fromhandle(cls, handle: int) -> Win:
        """The window of a handle value from ``handle``."""
        win = _HANDLES.get(int(handle))
        return cls(win) if win is not None and win else cls()

    fromint = f2py = fromhandle

    def __repr__(self) -> str:
        if not self:
            return "<Win WIN_NULL>"
        return f"<Win size={self._local.size} disp_unit={self._local.unit}>"

    __str__ = __repr__

    def __reduce_ex__(self, protocol: Any) -> Any:
        """``WIN_NULL`` pickles and copies to itself, another null window to a new one of
        its class; a window in use is not serializable (``ValueError``, as mpi4py)."""
        if self:
            raise ValueError(f"cannot pickle {self!r}: windows are not serializable")
        if self is WIN_NULL:
            return "WIN_NULL"
        return type(self), ()

    def __reduce__(self) -> Any:
        return self.__reduce_ex__(2)

    def __copy__(self) -> Any:
        return copy_reduced(self, self.__reduce_ex__(4))

    def __deepcopy__(self, memo: Any) -> Any:
        return self.__copy__()

    # -- creation (collective) --------------------------------------------------------
    @classmethod
    def _create(cls, vr: Any, comm: Any, mem: np.ndarray | None, memory: Any, size: int,
                unit: int, flavor: int, call: str) -> Win:
        base = Get_address(memory)
        obj = np.ndarray.__new__(cls, (size if mem is not None else 0,), np.uint8, buffer=mem)
        obj._local = _Local(None, memory, base, size, int(unit))
        inst, me, req = arrive(vr, comm, f"Win.{call}", ALL, -1, 24,
                               (obj, mem, int(unit), size), cost_op="allgather")
        if req is not None:
            vr.settle([req], f"Win.{call}")
        cctx = comm.coll_context(vr)
        key = ("win", cctx, inst.key[1])
        table = vr.engine.user_state.setdefault(_STATE, {})
        st = table.get(key)
        if st is None:
            members = comm.members(vr)
            private = comm.derive(vr, key, members, f"{comm.label}.Win")
            st = table[key] = WinState(private, members, flavor)
            for g, (win, m, u, n) in enumerate(inst.values):
                st.wins[g], st.mems[g], st.units[g], st.sizes[g] = win, m, u, n
        finalize(vr, comm, inst)
        obj._local.state = st
        return obj

    @classmethod
    def Create(cls, memory: Any, disp_unit: int = 1, info: Any = None,
               comm: Any = None) -> Win:
        """Create a window object for one-sided communication."""
        vr = current()
        comm = _comm(comm)
        _check_args(vr, comm, disp_unit, "Create")
        mem, size = _writable(vr, memory, "Create")
        if mem is None:
            memory = NullMemory()
        return cls._create(vr, comm, mem, memory, size, disp_unit, FLAVOR_CREATE, "Create")

    @classmethod
    def Allocate(cls, size: int, disp_unit: int = 1, info: Any = None,
                 comm: Any = None) -> Win:
        """Create a window object for one-sided communication, with memory."""
        return cls._allocate(size, disp_unit, comm, FLAVOR_ALLOCATE, "Allocate")

    @classmethod
    def Allocate_shared(cls, size: int, disp_unit: int = 1, info: Any = None,
                        comm: Any = None) -> Win:
        """Create a window object for one-sided communication, with memory the group's
        members can address directly (``Shared_query``)."""
        return cls._allocate(size, disp_unit, comm, FLAVOR_SHARED, "Allocate_shared")

    @classmethod
    def _allocate(cls, size: Any, disp_unit: int, comm: Any, flavor: int, call: str) -> Win:
        vr = current()
        comm = _comm(comm)
        _check_args(vr, comm, disp_unit, call)
        if not isinstance(size, (int, np.integer)) or size < 0:
            raise MPIUsageError(f"rank {vr.rank}: Win.{call}: size must be an int >= 0, got "
                                f"{size!r}")
        memory = buffer.allocate(int(size))
        mem = np.frombuffer(memory, dtype=np.uint8) if size else None
        return cls._create(vr, comm, mem, memory, int(size), disp_unit, flavor, call)

    @classmethod
    def Create_dynamic(cls, info: Any = None, comm: Any = None) -> Win:
        """Create a window object for one-sided communication, memory attached later."""
        vr = current()
        comm = _comm(comm)
        _check_args(vr, comm, 1, "Create_dynamic")
        return cls._create(vr, comm, None, NullMemory(), 0, 1, FLAVOR_DYNAMIC,
                           "Create_dynamic")

    def Attach(self, memory: Any) -> None:
        """Attach memory to a dynamic window."""
        vr = current()
        st = rma_ops.state_of(self, vr, "Attach")
        if st.flavor != FLAVOR_DYNAMIC:
            raise MPIUsageError(f"rank {vr.rank}: Win.Attach: not a dynamic window")
        mem, size = _writable(vr, memory, "Attach")
        if mem is not None:
            st.regions[rma_sync.win_rank(st, vr)].append((Get_address(memory), mem))

    def Detach(self, memory: Any) -> None:
        """Detach memory from a dynamic window."""
        vr = current()
        st = rma_ops.state_of(self, vr, "Detach")
        regions = st.regions[rma_sync.win_rank(st, vr)]
        address = Get_address(memory)
        for i, (base, _) in enumerate(regions):
            if base == address:
                del regions[i]
                return
        if memoryview(memory).nbytes:
            raise MPIUsageError(f"rank {vr.rank}: Win.Detach: memory at {address:#x} is not "
                                f"attached to this window")

    def Free(self) -> None:
        """Free a window (collective: completes pending operations, then a barrier)."""
        vr = current()
        st = rma_ops.state_of(self, vr, "Free")
        local = self._local
        if local.locks or local.post_group is not None or local.start_group is not None:
            what = (f"locks held on ranks {sorted(local.locks)}" if local.locks
                    else "a Post/Start epoch not closed by Wait/Complete")
            raise MPIUsageError(f"rank {vr.rank}: Win.Free with an open epoch ({what}) "
                                f"(MPI_ERR_RMA_SYNC)", error_class=rma_ops.ERR_RMA_SYNC)
        rma_ops.complete_ops(self, vr, "Free")
        st.comm.Barrier()
        attributes.drop_attrs(self)
        self._local.state = None

    def free(self) -> None:
        """Call ``Free`` if not null."""
        if self:
            self.Free()

    # -- memory -------------------------------------------------------------------------
    def tomemory(self) -> Any:
        """The calling rank's window memory (an ``MPI.buffer``)."""
        local = self._local
        if local.state is None:
            raise MPIUsageError(f"rank {current().rank}: Win.tomemory on WIN_NULL")
        mem = local.memory
        if isinstance(mem, buffer):
            return mem
        return memoryview(mem).cast("B")

    def Shared_query(self, rank: int) -> tuple[Any, int]:
        """``(memory, disp_unit)`` of a member's window memory (PROC_NULL: the lowest rank
        with memory)."""
        vr = current()
        st = rma_ops.state_of(self, vr, "Shared_query")
        n = len(st.members)
        if rank == PROC_NULL:
            sizes = [w._local.size for w in st.wins]
            rank = next((g for g, s in enumerate(sizes) if s), 0)
        if not isinstance(rank, (int, np.integer)) or not 0 <= rank < n:
            raise MPIUsageError(f"rank {vr.rank}: Win.Shared_query: rank {rank!r} is not in "
                                f"the window's group")
        target = st.wins[int(rank)]
        return target.tomemory(), target._local.unit

    # -- attributes -------------------------------------------------------------------
    @classmethod
    def Create_keyval(cls, copy_fn: Any = None, delete_fn: Any = None,
                      nopython: bool = False) -> int:
        """A new key for windows' attributes (``bsim/mpi/common/attributes.py``)."""
        return attributes.create_keyval(attributes.WIN, copy_fn, delete_fn, nopython)

    @classmethod
    def Free_keyval(cls, keyval: int) -> int:
        """Free a windows' key (``KEYVAL_INVALID``; MPI 4.1 Sec. 7.7.3)."""
        return attributes.free_keyval(attributes.WIN, keyval)

    def Get_attr(self, keyval: int) -> Any:
        """The value of a window attribute (``WIN_BASE``, ``WIN_SIZE``, ... or a keyval's)."""
        local = self._local
        vr = current()
        st = rma_ops.state_of(self, vr, "Get_attr")
        predefined = {WIN_BASE: local.base, WIN_SIZE: local.size, WIN_DISP_UNIT: local.unit,
                      WIN_CREATE_FLAVOR: st.flavor, WIN_MODEL: WIN_UNIFIED}
        if keyval in predefined:
            return predefined[keyval]
        return attributes.get_attr(self, keyval, attributes.WIN)   # ERR_KEYVAL: not a Win key

    def Set_attr(self, keyval: int, attrval: Any) -> None:
        """Store a value for a keyval on the window."""
        attributes.set_attr(self, keyval, attrval, attributes.WIN)

    def Delete_attr(self, keyval: int) -> None:
        """Delete a keyval's value on the window."""
        attributes.delete_attr(self, keyval, attributes.WIN)

    @property
    def attrs(self) -> tuple[int, int, int]:
        """``(base, size, disp_unit)``."""
        local = self._local
        return local.base, local.size, local.unit

    @property
    def flavor(self) -> int:
        """The create flavor."""
        return int(self.Get_attr(WIN_CREATE_FLAVOR))

    @property
    def model(self) -> int:
        """The memory model (``WIN_UNIFIED``)."""
        return int(self.Get_attr(WIN_MODEL))

    # -- group, info, name, error handler ---------------------------------------------
    def Get_group(self) -> Group:
        """The group of the window's members."""
        return Group(rma_ops.state_of(self, current(), "Get_group").members)

    @property
    def group(self) -> Group:
        """The group of the window's members."""
        return self.Get_group()

    @property
    def group_size(self) -> int:
        """Number of members."""
        return len(rma_ops.state_of(self, current(), "group_size").members)

    @property
    def group_rank(self) -> int:
        """The calling rank's rank in the window's group."""
        vr = current()
        return rma_sync.win_rank(rma_ops.state_of(self, vr, "group_rank"), vr)

    def Get_info(self) -> Info:
        """The hints in use: a new, empty info (bsim keeps none; the caller frees it)."""
        return Info.Create()

    def Set_info(self, info: Info) -> None:
        """Set hints: checked, then ignored (they change no simulated time)."""
        check_info(info, "Win.Set_info")

    @property
    def info(self) -> Any:
        """The window's hints."""
        return self.Get_info()

    @info.setter
    def info(self, info: Any) -> None:
        self.Set_info(info)

    def Get_name(self) -> str:
        """The window's name."""
        return self._local.name if self else "MPI_WIN_NULL"

    def Set_name(self, name: str) -> None:
        """Set the window's name."""
        self._local.name = str(name)

    @property
    def name(self) -> str:
        """The window's name."""
        return self.Get_name()

    @name.setter
    def name(self, name: str) -> None:
        self.Set_name(name)

    def Get_errhandler(self) -> errhandlers.Errhandler:
        """The window's error handler."""
        rma_ops.state_of(self, current(), "Get_errhandler")
        return errhandlers.get_errhandler(self)

    def Set_errhandler(self, errhandler: Any) -> None:
        """Set the window's error handler."""
        rma_ops.state_of(self, current(), "Set_errhandler")
        errhandlers.set_errhandler(self, errhandler)

    def Call_errhandler(self, errorcode: int) -> None:
        """Call the window's error handler with *errorcode*."""
        rma_ops.state_of(self, current(), "Call_errhandler")
        errhandlers.call_errhandler(self, errorcode)

    @classmethod
    def Create_errhandler(cls, errhandler_fn: Any) -> errhandlers.Errhandler:
        """A user error handler ``fn(win, errorcode)``."""
        return errhandlers.create_errhandler(cls.__name__, errhandler_fn)

    # -- communication and synchronization (operations.py, synchronization.py) ---------------
    Put, Get, Accumulate = rma_ops.Put, rma_ops.Get, rma_ops.Accumulate
    Get_accumulate, Fetch_and_op = rma_ops.Get_accumulate, rma_ops.Fetch_and_op
    Compare_and_swap = rma_ops.Compare_and_swap
    Rput, Rget, Raccumulate = rma_ops.Rput, rma_ops.Rget, rma_ops.Raccumulate
    Rget_accumulate = rma_ops.Rget_accumulate
    Fence, Sync = rma_sync.Fence, rma_sync.Sync
    Start, Complete, Post = rma_sync.Start, rma_sync.Complete, rma_sync.Post
    Wait, Test = rma_sync.Wait, rma_sync.Test
    Lock, Unlock = rma_sync.Lock, rma_sync.Unlock
    Lock_all, Unlock_all = rma_sync.Lock_all, rma_sync.Unlock_all
    Flush, Flush_all = rma_sync.Flush, rma_sync.Flush_all
    Flush_local, Flush_local_all = rma_sync.Flush_local, rma_sync.Flush_local_all


def copy_reduced(obj: Win, reduced: Any) -> Win:
    """A copy of *obj* from its ``__reduce_ex__`` (a global name: the object itself)."""
    if isinstance(reduced, str):
        return obj
    cls, args = reduced
    return cls(*args)


def _comm(comm: Any) -> Any:
    return COMM_SELF if comm is None else comm


WIN_NULL = Win()
"""The null window."""
