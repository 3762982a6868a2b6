"""One-sided synchronization (MPI 4.0 Sec. 12.5) of the windows of :mod:`bsim.mpi.onesided.window`.

Timing rules (``c(a, b, s)``: the run's network cost of an ``s``-byte message, as in
:mod:`bsim.mpi.onesided.operations`; ``t``: the caller's clock when the call starts):

* ``Fence``: completes the caller's pending operations (``operations.py``), then a barrier
  over the window's group, priced by the run's collective cost model (``barrier``).
  After it every operation of the closed epoch is applied everywhere.
* ``Lock(g)``: a request reaches target *g* at ``t + c(o, g, 0)``; the target grants
  locks in arrival order (shared locks together, an exclusive one alone); the grant
  returns at ``t_grant + c(g, o, 0)``, when ``Lock`` returns.  The time the lock was
  held by others is wait, the round trip comm.  ``Lock_all``: shared locks on every
  member at once (returns at the latest grant).
* ``Unlock(g)``: completes the operations to *g*, then a release reaches *g* at
  ``t' + c(o, g, 0)`` (where waiting locks are granted) and its acknowledgement
  returns at ``+ c(g, o, 0)``, when ``Unlock`` returns.  ``Unlock_all``: the same with
  every member, in parallel.
* ``Flush*``: complete pending operations (no extra message).  ``Sync``: the memory
  is unified and directly shared, so it moves no data; it is a poll (the protocol's
  ``poll_time`` of wait, and the other ranks run), so a spin loop on window memory
  advances simulated time.
* PSCW: ``Post`` sends each origin a notice (``c(g, o, 0)``) and returns; ``Start``
  blocks until the notices of all its targets arrived; ``Complete`` completes the
  operations, sends each target a notice and returns; ``Wait`` blocks until the
  notices of all its origins arrived; ``Test`` is ``Wait`` if they did, else a poll.

Each of these messages counts in the rank's message count (a lock or unlock: two; a
notice: one), with no bytes.  Epoch errors are MPICH's (``ch3u_rma_sync.c``; MPICH 5
checked with mpiexec), one ``MPI_ERR_RMA_SYNC`` line each: ``Fence`` with a lock, a
``Lock_all``, a ``Start`` or a ``Post`` epoch open; ``Start`` or ``Lock_all`` with a
lock held; ``Lock`` inside ``Lock_all`` or ``Start``; ``Unlock`` of a ``Lock_all``
lock; ``Unlock_all`` without ``Lock_all``; ``Flush*`` and ``Sync`` outside a passive
target epoch.  ``Lock`` in a fence epoch is allowed (as MPICH).
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

import numpy as np

from ...constants import PROC_NULL, ReqKind
from ...engine.rank import current
from ...errors import MPIUsageError
from ..requests.request import Request
from .operations import WinState, complete_ops, rma_sync_error, state_of

if TYPE_CHECKING:
    from ...engine.rank import VirtualRank

__all__ = ["LOCK_EXCLUSIVE", "LOCK_SHARED", "Fence", "Lock", "Unlock", "Lock_all",
           "Unlock_all", "Flush", "Flush_all", "Flush_local", "Flush_local_all", "Sync",
           "Post", "Start", "Complete", "Wait", "Test"]

LOCK_EXCLUSIVE, LOCK_SHARED = 234, 235   # mpi4py 4.1.2 on MPICH
MODE_NOSUCCEED = 16384


class _LockState:
    """A target's lock: holders and the requests queued in arrival order."""

    __slots__ = ("exclusive", "shared", "queue")

    def __init__(self) -> None:
        self.exclusive: int | None = None
        self.shared: set[int] = set()
        self.queue: deque[tuple[int, int, Request, float]] = deque()


def _cost(vr: VirtualRank, src: int, dst: int) -> float:
    return float(vr.engine.protocol.net.cost(src, dst, 0))


def _grant(st: WinState, vr: VirtualRank, g: int) -> None:
    """Grant the queued locks of target *g* that can be held now (arrival order)."""
    lock = st.locks[g]
    now = vr.engine._now
    while lock.queue:
        origin, kind, req, t0 = lock.queue[0]
        if lock.exclusive is not None:
            return
        if kind == LOCK_EXCLUSIVE:
            if lock.shared:
                return
            lock.exclusive = origin
        else:
            lock.shared.add(origin)
        lock.queue.popleft()
        back = _cost(vr, st.members[g], origin)
        # held by others from the request's arrival to now: wait; the round trip: comm
        req.resolve(now + back, 0.0, t0 + (now - req.t_post))


def _lock(win: Any, vr: VirtualRank, st: WinState, g: int, kind: int, call: str) -> Request:
    held = win._locks
    if g in held:
        raise rma_sync_error(vr, call, f"rank {g} of the window is already locked by this "
                             f"rank (Unlock it first)")
    if kind not in (LOCK_EXCLUSIVE, LOCK_SHARED):
        raise MPIUsageError(f"rank {vr.rank}: Win.{call}: lock type {kind!r} is neither "
                            f"LOCK_EXCLUSIVE nor LOCK_SHARED")
    held[g] = kind
    eng = vr.engine
    t0 = vr.clock
    arrive = max(t0 + _cost(vr, vr.rank, st.members[g]), eng._now)
    req = Request(vr, ReqKind.SEND, f"Win.{call}")
    req.t_post = arrive

    def request() -> None:
        lock = st.locks.setdefault(g, _LockState())
        lock.queue.append((vr.rank, kind, req, t0))
        _grant(st, vr, g)

    eng.call_at(arrive, vr, request)
    vr.msgs += 2   # the request and the grant
    return req


def _unlock(win: Any, vr: VirtualRank, st: WinState, g: int, call: str) -> Request:
    if win._locks.pop(g, None) is None:
        raise rma_sync_error(vr, call, f"rank {g} of the window is not locked by this rank")
    eng = vr.engine
    t0 = vr.clock
    dst = st.members[g]
    arrive = max(t0 + _cost(vr, vr.rank, dst), eng._now)
    req = Request(vr, ReqKind.SEND, f"Win.{call}")
    back = _cost(vr, dst, vr.rank)
    origin = vr.rank

    def release() -> None:
        lock = st.locks[g]
        if lock.exclusive == origin:
            lock.exclusive = None
        else:
            lock.shared.discard(origin)
        _grant(st, vr, g)
        req.resolve(arrive + back, 0.0, t0)

    eng.call_at(arrive, vr, release)
    vr.msgs += 2   # the release and its acknowledgement
    return req


def _rank(st: WinState, vr: VirtualRank, rank: Any, call: str) -> int:
    n = len(st.members)
    if not isinstance(rank, (int, np.integer)) or not 0 <= rank < n:
        raise MPIUsageError(f"rank {vr.rank}: Win.{call}: rank {rank!r} is not in the "
                            f"window's group (valid: 0..{n - 1} or PROC_NULL)")
    return int(rank)


def _passive(win: Any) -> str:
    """The caller's open passive-target epoch, described, or ``""``."""
    if win._lock_all:
        return "a Lock_all epoch is open (close it with Unlock_all)"
    if win._locks:
        return f"locks are held on ranks {sorted(win._locks)} (Unlock them first)"
    return ""


def _refuse(win: Any, vr: VirtualRank, call: str, passive: bool = True, start: bool = True,
            post: bool = False) -> None:
    """Raise ``MPI_ERR_RMA_SYNC`` if an epoch *call* cannot overlap is open: a passive
    target one, a ``Start`` one, a ``Post`` one (the checks of MPICH's ``MPID_Win_fence``,
    ``_start``, ``_lock``, ``_lock_all`` in ``ch3u_rma_sync.c``)."""
    what = _passive(win) if passive else ""
    if not what and start and win._start_group is not None:
        what = "a Start epoch is open (close it with Complete)"
    if not what and post and win._post_group is not None:
        what = "a Post epoch is open (close it with Wait or Test)"
    if what:
        raise rma_sync_error(vr, call, what)


def _flushable(win: Any, vr: VirtualRank, call: str) -> None:
    """``Flush*`` and ``Sync`` need a passive-target epoch (MPICH's ``MPID_Win_flush``,
    ``MPID_Win_sync``; MPICH 5 refuses them in a fence epoch too, checked with mpiexec)."""
    if not win._locks:
        raise rma_sync_error(vr, call, "no passive-target epoch is open (call Lock or "
                             "Lock_all first)")


def Lock(win: Any, rank: int, lock_type: int = LOCK_EXCLUSIVE, assertion: int = 0) -> None:
    """Begin an RMA access epoch at the target process."""
    vr = current()
    st = state_of(win, vr, "Lock")
    if win._lock_all:
        raise rma_sync_error(vr, "Lock", "a Lock_all epoch is open (close it with Unlock_all)")
    _refuse(win, vr, "Lock", passive=False)
    if rank == PROC_NULL:
        return
    g = _rank(st, vr, rank, "Lock")
    vr.settle([_lock(win, vr, st, g, lock_type, "Lock")], "Win.Lock")


def Unlock(win: Any, rank: int) -> None:
    """Complete an RMA access epoch at the target process."""
    vr = current()
    st = state_of(win, vr, "Unlock")
    if win._lock_all:
        raise rma_sync_error(vr, "Unlock", "the locks are Lock_all's (close them with "
                             "Unlock_all)")
    if rank == PROC_NULL:
        return
    g = _rank(st, vr, rank, "Unlock")
    complete_ops(win, vr, "Unlock", g)
    vr.settle([_unlock(win, vr, st, g, "Unlock")], "Win.Unlock")


def Lock_all(win: Any, assertion: int = 0) -> None:
    """Begin an RMA access epoch at all processes (shared locks)."""
    vr = current()
    st = state_of(win, vr, "Lock_all")
    _refuse(win, vr, "Lock_all")
    win._lock_all = True
    reqs = [_lock(win, vr, st, g, LOCK_SHARED, "Lock_all") for g in range(len(st.members))]
    vr.settle(reqs, "Win.Lock_all")


def Unlock_all(win: Any) -> None:
    """Complete the RMA access epoch started by ``Lock_all``."""
    vr = current()
    st = state_of(win, vr, "Unlock_all")
    if not win._lock_all:
        held = (f" (the locks on ranks {sorted(win._locks)} are Lock's: Unlock each)"
                if win._locks else "")
        raise rma_sync_error(vr, "Unlock_all", f"no Lock_all epoch is open{held}")
    win._lock_all = False
    complete_ops(win, vr, "Unlock_all")
    reqs = [_unlock(win, vr, st, g, "Unlock_all") for g in range(len(st.members))]
    vr.settle(reqs, "Win.Unlock_all")


def _flush(win: Any, rank: int | None, call: str) -> None:
    """Complete the calling rank's outstanding operations at target *rank* (every target
    when None; none for ``PROC_NULL``).  The ``_local`` flushes complete what their plain
    twins do: bsim does not tell an operation's local completion from its remote one."""
    vr = current()
    st = state_of(win, vr, call)
    _flushable(win, vr, call)
    if rank is None:
        complete_ops(win, vr, call)
    elif rank != PROC_NULL:
        complete_ops(win, vr, call, _rank(st, vr, rank, call))


def Flush(win: Any, rank: int) -> None:
    """Complete all outstanding RMA operations at the given target."""
    _flush(win, rank, "Flush")


def Flush_all(win: Any) -> None:
    """Complete all outstanding RMA operations at all targets."""
    _flush(win, None, "Flush_all")


def Flush_local(win: Any, rank: int) -> None:
    """Complete locally all outstanding RMA operations at the given target."""
    _flush(win, rank, "Flush_local")


def Flush_local_all(win: Any) -> None:
    """Complete locally all outstanding RMA operations at all targets."""
    _flush(win, None, "Flush_local_all")


def Sync(win: Any) -> None:
    """Synchronize public and private copies of the window (a poll in bsim)."""
    vr = current()
    state_of(win, vr, "Sync")
    _flushable(win, vr, "Sync")
    vr.ops += 1
    vr.engine.protocol.poll(vr, "Win.Sync")


def Fence(win: Any, assertion: int = 0) -> None:
    """Perform an MPI fence synchronization on a window."""
    vr = current()
    st = state_of(win, vr, "Fence")
    _refuse(win, vr, "Fence", post=True)
    complete_ops(win, vr, "Fence")
    st.comm.Barrier()
    win._fence = not (assertion & MODE_NOSUCCEED)


# -- PSCW: notices from a sender to a receiver, consumed in order -------------------------

class _Notices:
    """Notices on one (kind, sender, receiver) channel: arrival times not yet consumed,
    and the requests waiting for the next ones."""

    __slots__ = ("times", "waiting")

    def __init__(self) -> None:
        self.times: deque[float] = deque()
        self.waiting: deque[Request] = deque()


def _channel(st: WinState, key: tuple[str, int, int]) -> _Notices:
    ch = st.notices.get(key)
    if ch is None:
        ch = st.notices[key] = _Notices()
    return ch


def _notify(vr: VirtualRank, st: WinState, kind: str, g_to: int) -> None:
    me = win_rank(st, vr)
    dst = st.members[g_to]
    t = max(vr.clock + _cost(vr, vr.rank, dst), vr.engine._now)
    key = (kind, me, g_to)

    def arrive() -> None:
        ch = _channel(st, key)
        if ch.waiting:
            ch.waiting.popleft().resolve(t, 0.0, t)
        else:
            ch.times.append(t)

    vr.engine.call_at(t, vr, arrive)
    vr.msgs += 1


def _expect(vr: VirtualRank, st: WinState, kind: str, g_from: int, call: str) -> Request:
    ch = _channel(st, (kind, g_from, win_rank(st, vr)))
    req = Request(vr, ReqKind.RECV, f"Win.{call}")
    if ch.times:
        t = ch.times.popleft()
        req.resolve(t, 0.0, t)
    else:
        ch.waiting.append(req)
    return req


def win_rank(st: WinState, vr: VirtualRank) -> int:
    """The calling rank's rank in the window's group."""
    return int(st.comm.Get_rank())


def _group_ranks(st: WinState, vr: VirtualRank, group: Any, call: str) -> list[int]:
    index = {w: i for i, w in enumerate(st.members)}
    try:
        return [index[w] for w in group.members]
    except (AttributeError, KeyError):
        raise MPIUsageError(f"rank {vr.rank}: Win.{call}: {group!r} is not a group of the "
                            f"window's members") from None


def Post(win: Any, group: Any, assertion: int = 0) -> None:
    """Start an RMA exposure epoch."""
    vr = current()
    st = state_of(win, vr, "Post")
    if win._post_group is not None:
        raise rma_sync_error(vr, "Post", "an exposure epoch is already open")
    origins = _group_ranks(st, vr, group, "Post")
    win._post_group = origins
    for g in origins:
        _notify(vr, st, "post", g)


def Start(win: Any, group: Any, assertion: int = 0) -> None:
    """Start an RMA access epoch for MPI."""
    vr = current()
    st = state_of(win, vr, "Start")
    if win._start_group is not None:
        raise rma_sync_error(vr, "Start", "an access epoch is already open")
    _refuse(win, vr, "Start")
    targets = _group_ranks(st, vr, group, "Start")
    win._start_group = targets
    reqs = [_expect(vr, st, "post", g, "Start") for g in targets]
    if reqs:
        vr.settle(reqs, "Win.Start")


def Complete(win: Any) -> None:
    """Complete an RMA access epoch started by ``Start``."""
    vr = current()
    st = state_of(win, vr, "Complete")
    targets = win._start_group
    if targets is None:
        raise rma_sync_error(vr, "Complete", "no Start epoch is open")
    complete_ops(win, vr, "Complete")
    win._start_group = None
    for g in targets:
        _notify(vr, st, "done", g)


def Wait(win: Any) -> None:
    """Complete an RMA exposure epoch started by ``Post``."""
    vr = current()
    st = state_of(win, vr, "Wait")
    origins = win._post_group
    if origins is None:
        raise rma_sync_error(vr, "Wait", "no Post epoch is open")
    reqs = [_expect(vr, st, "done", g, "Wait") for g in origins]
    win._post_group = None
    if reqs:
        vr.settle(reqs, "Win.Wait")


def Test(win: Any) -> bool:
    """Test whether an RMA exposure epoch has completed."""
    vr = current()
    st = state_of(win, vr, "Test")
    origins = win._post_group
    if origins is None:
        raise rma_sync_error(vr, "Test", "no Post epoch is open")
    vr.sync("Win.Test", True)
    me = win_rank(st, vr)
    now = vr.engine._now
    if all(any(t <= now for t in _channel(st, ("done", g, me)).times) for g in origins):
        Wait(win)
        return True
    vr.ops += 1
    vr.engine.protocol.poll(vr, "Win.Test")
    return False
