"""One-sided data movement (MPI 4.0 Sec. 12.3): ``Put``, ``Get``, the accumulates and their
request-based forms, on the windows of :mod:`bsim.mpi.onesided.window`.

All ranks live in one process, so a target's window memory is directly reachable.  An
operation is *applied* to the target memory by one engine event at its simulated arrival
time at the target; the origin's request completes when the operation is complete at the
origin.  With ``c(a, b, s)`` the run's network cost of an ``s``-byte message from world rank
``a`` to ``b`` (the model the point-to-point path prices messages with, envelope included),
a lone operation issued at the origin's clock ``t`` on ``s`` bytes:

=====================================  ==========================  =========================
operation                              applied at the target       complete at the origin
=====================================  ==========================  =========================
``Put``, ``Accumulate``                ``t + c(o, g, s)``          the same time
``Get``                                ``t + c(o, g, 0)``          ``+ c(g, o, s)``
``Get_accumulate``, ``Fetch_and_op``,  ``t + c(o, g, s)``          ``+ c(g, o, s)``
``Compare_and_swap``
=====================================  ==========================  =========================

Under ``loggp`` the data queues on the sending NIC as a send's does, and with a contention
layer every part is a flow sharing the links with the run's other traffic
(:mod:`bsim.mpi.onesided.transfer` gives the rules).

Operations from one origin to one target are applied in the order issued (an arrival is
never earlier than the previous one on that pair: MPI's default accumulate ordering, kept
for every operation).  Each operation is applied in one event, so an accumulate is atomic
per element (per operation, in fact) with respect to every other accumulate.  The origin
pays the time to completion only when it completes the operation (``Flush*``, ``Unlock*``,
``Fence``, ``Complete``, a request's ``Wait``): until then the transfer overlaps with the
origin's work.  Local completion (``Flush_local*``) is taken as remote completion.  All of it
is comm time.  Target ``(disp, count, datatype)`` specs are mpi4py's; the target byte offset
is ``disp * disp_unit`` (a dynamic window: the absolute address of an attached buffer).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...constants import PROC_NULL, ReqKind
from ...engine.rank import current
from ...errors import MPIUsageError
from ..collectives.ops import NO_OP, REPLACE, SUM, Op, as_op
from ..common.namespace import INT_CONSTANTS
from ..data.buffers import BufInfo, parse_buffer
from ..data.datatypes import Datatype
from ..data.typemap import packed_index
from ..requests.request import Request, hand_out
from .transfer import transfer

if TYPE_CHECKING:
    from ...engine.rank import VirtualRank

__all__ = ["WinState", "Put", "Get", "Accumulate", "Get_accumulate", "Fetch_and_op",
           "Compare_and_swap", "Rput", "Rget", "Raccumulate", "Rget_accumulate",
           "complete_ops", "state_of"]


_DYNAMIC = INT_CONSTANTS["WIN_FLAVOR_DYNAMIC"]
_ERR_WIN = INT_CONSTANTS["ERR_WIN"]
ERR_RMA_SYNC = INT_CONSTANTS["ERR_RMA_SYNC"]


class WinState:
    """What the members of one window share: memory, flavor, locks, epochs, ordering.

    ``mems[g]`` is group rank *g*'s window memory of ``sizes[g]`` bytes: a uint8 array, or
    None for a placeholder window (``bsim.Buffer``: sizes, no data) and for a dynamic window,
    whose memory is ``regions[g]``: ``[(address, uint8 array), ...]``.
    """

    def __init__(self, comm: Any, members: tuple[int, ...], flavor: int) -> None:
        self.comm = comm                      # the window's private communicator
        self.members = members                # world ranks in group rank order
        self.flavor = flavor
        self.mems: list[np.ndarray | None] = [None] * len(members)
        self.units: list[int] = [1] * len(members)
        self.sizes: list[int] = [0] * len(members)
        self.wins: list[Any] = [None] * len(members)   # each member's Win object
        self.regions: list[list[tuple[int, np.ndarray]]] = [[] for _ in members]
        self.last: dict[tuple[int, int], float] = {}  # (origin, target): last arrival
        self.locks: dict[int, Any] = {}         # target group rank -> lock state (rma_sync)
        self.notices: dict[Any, Any] = {}       # PSCW notices (rma_sync)


def state_of(win: Any, vr: VirtualRank, call: str) -> WinState:
    """The shared state of *win*; :class:`MPIUsageError` on a null or freed window."""
    st = win._state
    if st is None:
        exc = MPIUsageError(f"rank {vr.rank}: Win.{call} on WIN_NULL (or a freed window)")
        exc.error_class = _ERR_WIN
        raise exc
    return st


def _target(st: WinState, vr: VirtualRank, rank: Any, call: str) -> int:
    n = len(st.members)
    if not isinstance(rank, (int, np.integer)) or not 0 <= rank < n:
        raise MPIUsageError(f"rank {vr.rank}: Win.{call}: target rank {rank!r} is not in the "
                            f"window's group (valid: 0..{n - 1} or PROC_NULL)")
    return int(rank)


def _origin(vr: VirtualRank, spec: Any, call: str) -> BufInfo:
    return parse_buffer(vr, spec, f"Win.{call}")


def _target_spec(vr: VirtualRank, target: Any, origin: BufInfo, call: str
                 ) -> tuple[int, int, Datatype]:
    """mpi4py's target spec: None, disp, (disp,), (disp, count), (disp, count, datatype)."""
    disp, count, dt = 0, origin.count, origin.datatype
    if target is None:
        pass
    elif isinstance(target, (int, np.integer)):
        disp = int(target)
    elif isinstance(target, (list, tuple)) and 1 <= len(target) <= 3:
        disp = int(target[0])
        if len(target) >= 2:
            count = int(target[1])
        if len(target) == 3:
            dt = target[2]
            if not isinstance(dt, Datatype):
                raise MPIUsageError(f"rank {vr.rank}: Win.{call}: target datatype {dt!r} is "
                                    f"not an MPI datatype")
    else:
        raise MPIUsageError(f"rank {vr.rank}: Win.{call}: bad target spec {target!r} (use "
                            f"disp, (disp, count) or (disp, count, datatype))")
    if disp < 0 or count < 0:
        raise MPIUsageError(f"rank {vr.rank}: Win.{call}: negative target displacement or "
                            f"count in {target!r}")
    if count * dt.size != origin.nbytes:
        raise MPIUsageError(f"rank {vr.rank}: Win.{call}: the target's {count} x {dt.label} "
                            f"= {count * dt.size} bytes do not match the origin's "
                            f"{origin.nbytes} bytes")
    return disp, count, dt


def _locate(st: WinState, vr: VirtualRank, g: int, disp: int, count: int, dt: Datatype,
            call: str) -> tuple[np.ndarray | None, np.ndarray | slice]:
    """(target memory or None for a placeholder, byte index) of *count* x *dt* at
    displacement *disp* of target *g*."""
    size = st.sizes[g]
    mem: np.ndarray | None
    if st.flavor == _DYNAMIC:   # disp is an address in an attached region
        for base, arr in st.regions[g]:
            if base <= disp <= base + arr.size:
                mem, off, size = arr, disp - base, arr.size
                break
        else:
            raise MPIUsageError(f"rank {vr.rank}: Win.{call}: address {disp:#x} is in no "
                                f"memory attached to the dynamic window at rank {g}")
    else:
        mem, off = st.mems[g], disp * st.units[g]
    if dt.layout.contiguous:
        end = off + count * dt.size
        index: np.ndarray | slice = slice(off, end)
    else:
        idx = packed_index(dt.layout, count) + off
        end = int(idx.max()) + 1 if idx.size else off
        index = idx
    if end > size:
        raise MPIUsageError(f"rank {vr.rank}: Win.{call}: bytes {off}..{end} lie past the "
                            f"end of rank {g}'s window ({size} bytes)")
    return mem, index


def _elem(vr: VirtualRank, op: Op, *dts: Datatype, call: str) -> np.dtype | None:
    """The element dtype an accumulate combines in (None: REPLACE/NO_OP move bytes)."""
    for dt in dts:
        if dt.dtype is not None:
            return dt.dtype
    if op is REPLACE or op is NO_OP:
        return None
    raise MPIUsageError(f"rank {vr.rank}: Win.{call}: {op.name} needs a predefined "
                        f"datatype at the origin or the target (bsim combines elements of "
                        f"one basic type)")


def _combine(op: Op, old: bytes, new: bytes, dtype: np.dtype | None) -> bytes:
    """``op(target, origin)`` elementwise (MPI: the target is the left operand)."""
    if op is NO_OP:
        return old
    if op is REPLACE or dtype is None:
        return new
    a = np.frombuffer(old, dtype=dtype)
    b = np.frombuffer(new, dtype=dtype)
    return np.asarray(op(a, b), dtype=dtype).tobytes()


def _issue(vr: VirtualRank, st: WinState, win: Any, g: int, call: str, out_bytes: int,
           back_bytes: int | None, apply: Any) -> Request:
    """Schedule *apply()* at the target arrival; return the origin's completion request.

    *out_bytes* travel to the target; a reply of *back_bytes* returns (None: no reply);
    the timing is :func:`bsim.mpi.onesided.transfer.transfer`'s.  Counted as one message per
    direction and the bytes of both.
    """
    check_access(win, vr, g, call)
    req = Request(vr, ReqKind.SEND, f"Win.{call}")
    req.t_post = vr.clock
    transfer(vr, st, g, out_bytes, back_bytes, apply, req)
    win._pending.append((g, req))
    vr.ops += 1
    vr.msgs += 1 if back_bytes is None else 2
    vr.nbytes += out_bytes + (back_bytes or 0)
    return req


def rma_sync_error(vr: VirtualRank, call: str, what: str) -> MPIUsageError:
    """``rank R: Win.<call>: <what> (MPI_ERR_RMA_SYNC)``, of error class ``ERR_RMA_SYNC``
    (MPICH's class for a call in the wrong epoch: ``ch3u_rma_sync.c``, ``ch3u_rma_ops.c``)."""
    return MPIUsageError(f"rank {vr.rank}: Win.{call}: {what} (MPI_ERR_RMA_SYNC)",
                         error_class=ERR_RMA_SYNC)


def check_access(win: Any, vr: VirtualRank, g: int, call: str) -> None:
    """An operation needs an access epoch to its target *g* (Fence, a Start group with
    *g*, a lock of *g*, Lock_all); an operation on ``PROC_NULL`` needs none (as MPICH 5)."""
    start = win._start_group
    if not (win._fence or g in win._locks or (start is not None and g in start)):
        raise rma_sync_error(vr, call, f"no access epoch to rank {g} of the window is "
                             f"open (call Fence, Start, Lock or Lock_all first)")


def complete_ops(win: Any, vr: VirtualRank, call: str, target: int | None = None) -> None:
    """Complete the calling rank's pending operations on *win* (to *target*, or all)."""
    pending = win._pending
    if not pending:
        return
    if target is None:
        reqs = [r for _, r in pending]
        win._pending = []
    else:
        reqs = [r for g, r in pending if g == target]
        win._pending = [(g, r) for g, r in pending if g != target]
    if reqs:
        vr.settle(reqs, f"Win.{call}")
        for r in reqs:
            if r.error is not None:
                err, r.error = r.error, None
                raise err


def _put(win: Any, origin: Any, target_rank: int, target: Any, call: str) -> Request | None:
    vr = current()
    st = state_of(win, vr, call)
    if target_rank == PROC_NULL:
        return None   # no epoch needed: MPICH 5 accepts it (checked with mpiexec)
    g = _target(st, vr, target_rank, call)
    info = _origin(vr, origin, call)
    disp, count, dt = _target_spec(vr, target, info, call)
    mem, index = _locate(st, vr, g, disp, count, dt, call)
    data = np.frombuffer(info.mem.tobytes(), dtype=np.uint8) if info.mem is not None else None

    def apply() -> None:
        if mem is not None and data is not None:
            mem[index] = data

    return _issue(vr, st, win, g, call, info.nbytes, None, apply)


def _get(win: Any, origin: Any, target_rank: int, target: Any, call: str) -> Request | None:
    vr = current()
    st = state_of(win, vr, call)
    if target_rank == PROC_NULL:
        return None   # no epoch needed: MPICH 5 accepts it (checked with mpiexec)
    g = _target(st, vr, target_rank, call)
    info = _origin(vr, origin, call)
    disp, count, dt = _target_spec(vr, target, info, call)
    mem, index = _locate(st, vr, g, disp, count, dt, call)

    def apply() -> None:
        if info.mem is not None and mem is not None:
            info.mem[0:info.nbytes] = mem[index].tobytes()

    return _issue(vr, st, win, g, call, 0, info.nbytes, apply)


def _accumulate(win: Any, origin: Any, result: Any, target_rank: int, target: Any, op: Any,
                call: str, fetch: bool) -> Request | None:
    vr = current()
    st = state_of(win, vr, call)
    op = as_op(SUM if op is None else op)
    info = _origin(vr, origin, call)
    rinfo = _origin(vr, result, call) if fetch else None
    if target_rank == PROC_NULL:
        return None   # no epoch needed: MPICH 5 accepts it (checked with mpiexec)
    g = _target(st, vr, target_rank, call)
    ref = rinfo if (fetch and op is NO_OP) else info   # NO_OP: the origin may be empty
    assert ref is not None
    disp, count, dt = _target_spec(vr, target, ref, call)
    if rinfo is not None and rinfo.nbytes != count * dt.size:
        raise MPIUsageError(f"rank {vr.rank}: Win.{call}: the result buffer's "
                            f"{rinfo.nbytes} bytes do not match the target's "
                            f"{count * dt.size} bytes")
    mem, index = _locate(st, vr, g, disp, count, dt, call)
    dtype = _elem(vr, op, dt, ref.datatype, call=call)
    data = info.mem.tobytes() if info.mem is not None else None

    def apply() -> None:
        if mem is None:   # a placeholder window: timing only
            return
        old = mem[index].tobytes()
        if rinfo is not None and rinfo.mem is not None:
            rinfo.mem[0:rinfo.nbytes] = old
        if op is not NO_OP and data is not None:
            mem[index] = np.frombuffer(_combine(op, old, data, dtype), dtype=np.uint8)

    out = 0 if op is NO_OP else info.nbytes
    return _issue(vr, st, win, g, call, out, count * dt.size if fetch else None, apply)


def _single(vr: VirtualRank, spec: Any, call: str, what: str) -> BufInfo:
    info = _origin(vr, spec, call)
    if info.count != 1:
        raise MPIUsageError(f"rank {vr.rank}: Win.{call}: the {what} buffer must hold one "
                            f"element, it holds {info.count} x {info.datatype.label}")
    return info


def _same_type(vr: VirtualRank, call: str, *infos: BufInfo) -> None:
    first = infos[0].datatype
    for info in infos[1:]:
        if info.datatype.size != first.size or info.datatype.dtype != first.dtype:
            raise MPIUsageError(f"rank {vr.rank}: Win.{call}: buffers of different "
                                f"datatypes ({first.label}, {info.datatype.label})")


# -- the mpi4py methods (bound to Win by bsim/mpi/onesided/window.py) --------------------------

def Put(win: Any, origin: Any, target_rank: int, target: Any = None) -> None:
    """Put data into a memory window on a remote process."""
    _put(win, origin, target_rank, target, "Put")


def Get(win: Any, origin: Any, target_rank: int, target: Any = None) -> None:
    """Get data from a memory window on a remote process."""
    _get(win, origin, target_rank, target, "Get")


def Accumulate(win: Any, origin: Any, target_rank: int, target: Any = None,
               op: Any = SUM) -> None:
    """Accumulate data into the target process."""
    _accumulate(win, origin, None, target_rank, target, op, "Accumulate", False)


def Get_accumulate(win: Any, origin: Any, result: Any, target_rank: int, target: Any = None,
                   op: Any = SUM) -> None:
    """Fetch-and-accumulate data into the target process."""
    _accumulate(win, origin, result, target_rank, target, op, "Get_accumulate", True)


def Fetch_and_op(win: Any, origin: Any, result: Any, target_rank: int, target_disp: int = 0,
                 op: Any = SUM) -> None:
    """Perform one-sided read-modify-write of one element."""
    vr = current()
    o = _single(vr, origin, "Fetch_and_op", "origin")
    r = _single(vr, result, "Fetch_and_op", "result")
    _same_type(vr, "Fetch_and_op", o, r)
    _accumulate(win, [o.mem, 1, o.datatype] if o.mem is not None else [None, 1, o.datatype],
                [r.mem, 1, r.datatype], target_rank, (target_disp, 1, o.datatype), op,
                "Fetch_and_op", True)


def Compare_and_swap(win: Any, origin: Any, compare: Any, result: Any, target_rank: int,
                     target_disp: int = 0) -> None:
    """Perform one-sided atomic compare-and-swap of one element."""
    vr = current()
    call = "Compare_and_swap"
    st = state_of(win, vr, call)
    o = _single(vr, origin, call, "origin")
    c = _single(vr, compare, call, "compare")
    r = _single(vr, result, call, "result")
    _same_type(vr, call, o, c, r)
    if target_rank == PROC_NULL:
        return
    g = _target(st, vr, target_rank, call)
    mem, index = _locate(st, vr, g, int(target_disp), 1, o.datatype, call)
    new = o.mem.tobytes() if o.mem is not None else None
    cmp = c.mem.tobytes() if c.mem is not None else None

    def apply() -> None:
        if mem is None or new is None or cmp is None:   # placeholders: timing only
            return
        old = mem[index].tobytes()
        if r.mem is not None:
            r.mem[0:r.nbytes] = old
        if old == cmp:
            mem[index] = np.frombuffer(new, dtype=np.uint8)

    _issue(vr, st, win, g, call, o.nbytes + c.nbytes, r.nbytes, apply)


def _handed(win: Any, req: Request | None, call: str) -> Request:
    """The request-based form's handle: the operation's request (PROC_NULL: complete)."""
    if req is None:
        vr = current()
        req = Request(vr, ReqKind.SEND, f"Win.{call}")
        req.resolve(vr.clock, 0.0, vr.clock)
    return hand_out(req)


def Rput(win: Any, origin: Any, target_rank: int, target: Any = None) -> Request:
    """Put data into a memory window on a remote process (request-based)."""
    return _handed(win, _put(win, origin, target_rank, target, "Rput"), "Rput")


def Rget(win: Any, origin: Any, target_rank: int, target: Any = None) -> Request:
    """Get data from a memory window on a remote process (request-based)."""
    return _handed(win, _get(win, origin, target_rank, target, "Rget"), "Rget")


def Raccumulate(win: Any, origin: Any, target_rank: int, target: Any = None,
                op: Any = SUM) -> Request:
    """Accumulate data into the target process (request-based)."""
    req = _accumulate(win, origin, None, target_rank, target, op, "Raccumulate", False)
    return _handed(win, req, "Raccumulate")


def Rget_accumulate(win: Any, origin: Any, result: Any, target_rank: int, target: Any = None,
                    op: Any = SUM) -> Request:
    """Fetch-and-accumulate data into the target process (request-based)."""
    req = _accumulate(win, origin, result, target_rank, target, op, "Rget_accumulate", True)
    return _handed(win, req, "Rget_accumulate")
