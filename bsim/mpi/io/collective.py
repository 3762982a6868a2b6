"""Collective MPI-IO data access (MPI 4.0 Sec. 14.4.3-14.4.5): ``Read_all``, ``Write_at_all``,
their nonblocking forms, the ordered (shared pointer) forms and the split collectives
(``*_begin`` / ``*_end``), and their time.  Data movement: :mod:`bsim.mpi.io.access`.

**Time** (``docs/io.md``) of a collective call of ``P`` members, as ROMIO's two-phase
I/O runs it (Thakur, Gropp and Lusk, "Data sieving and collective I/O in ROMIO", 1999):

1. a barrier of the file's group (the run's collective cost source prices it);
2. the exchange ``X`` between the members and the ``A = fs.aggregator_count(P)``
   aggregators, group ranks ``floor(j P / A)`` for ``j = 0 .. A-1`` (ROMIO's one
   aggregator per node, the ranks spread over the group; an assumption of this model).
   The file system says which aggregator handles which bytes (``fs.domains``: stripe
   ``k`` to aggregator ``k mod A``).  Member ``i`` has ``b_ij`` bytes in aggregator
   ``j``'s domain; the bytes an aggregator holds itself move nowhere.  Aggregator ``j``
   receives ``R_j = sum over i != agg(j) of b_ij`` over its one link and member ``i``
   sends ``U_i = sum over j with agg(j) != i of b_ij`` over its own, so::

       X = max( max_j t(R_j), max_i t(U_i) )

   with ``t(s)`` one message of ``s`` bytes as the run's protocol prices a lone message
   on the run's network (``CollectiveCosts.message_time``: ``latency + s / bandwidth``
   on Hockney), between aggregator ``j`` and the member that gives it most bytes, and
   between member ``i`` and the aggregator that takes most of its bytes (lowest on a
   tie).  A write sends to the aggregators, a read from them (the same volumes, the
   other direction).  The formula sees neither contention nor network noise, as a
   collective formula does not (``docs/collectives.md``);
3. the aggregators' access of the **union** of the members' bytes, each byte once
   (overlapping requests are read, or written, once: ROMIO's aggregators access their
   file domain once), through the file's queues: ``fs.finish`` (``fs.collective`` when
   idle, :mod:`netmodels.filesystem`).  A write exchanges first and then writes; a
   read reads first and then exchanges.

The plan is computed once per call, O(P) in the members' segments, by the first member
that asks (in simulated-time order when it can), the others read its end time.

A split collective's ``_begin`` starts the operation as its nonblocking form does (the
ordered forms complete in ``_begin``, which needs every member's count); ``_end``
completes it and fills the status.  One split collective may be active per file handle
(MPI 4.0 Sec. 14.4.5): a second ``_begin`` or an ``_end`` that does not match the
``_begin`` is an error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import accumulate
from typing import TYPE_CHECKING, Any

from netmodels.filesystem import union

from ...constants import ANY_SOURCE, ANY_TAG
from ...engine.collective_costs import CollectiveCosts
from ...engine.collective_rules import finalize
from ...engine.rank import current
from ...errors import MPIUsageError
from ..common.namespace import INT_CONSTANTS
from ..data.buffers import parse_buffer
from ..requests.request import Request, hand_out
from .access import (
    FileState,
    _access,
    _advance,
    _links,
    _req,
    _status,
    charge_until,
    filesystem,
    first_out,
    group_call,
    no_pointer_of_mine,
    state_of,
)

if TYPE_CHECKING:
    from ...engine.core import Engine
    from ...engine.rank import VirtualRank

__all__ = ["Read_all", "Write_all", "Read_at_all", "Write_at_all", "Iread_all", "Iwrite_all",
           "Iread_at_all", "Iwrite_at_all", "Read_ordered", "Write_ordered",
           "Read_all_begin", "Read_all_end", "Write_all_begin", "Write_all_end",
           "Read_at_all_begin", "Read_at_all_end", "Write_at_all_begin", "Write_at_all_end",
           "Read_ordered_begin", "Read_ordered_end", "Write_ordered_begin",
           "Write_ordered_end", "aggregator_ranks", "exchange_time"]

_ERR_IO = INT_CONSTANTS["ERR_IO"]   # MPICH's class for a misplaced _begin or _end

Segments = list[tuple[int, int]]


def aggregator_ranks(P: int, A: int) -> list[int]:
    """The group ranks of the *A* aggregators of *P* members: ``floor(j P / A)``."""
    return [j * P // A for j in range(A)]


def exchange_time(engine: Engine, members: Sequence[int], parts: Sequence[Segments],
                  fs: Any, write: bool) -> float:
    """Seconds of the two-phase exchange ``X = max(max_j t(R_j), max_i t(U_i))`` (module
    docstring) of the members (world ranks *members*, group order) whose file bytes are
    *parts*; *write*: members send to the aggregators, else receive from them."""
    P = len(parts)
    A = fs.aggregator_count(P)
    aggs = aggregator_ranks(P, A)
    recv = [0] * A
    recv_from = [(0, 0)] * A          # (largest block, its member) per aggregator
    out: list[tuple[int, int, int]] = []   # (U_i, member i, aggregator of its largest)
    for i, segs in enumerate(parts):
        if not segs:
            continue
        sent, best, to = 0, 0, 0
        for j, b in sorted(fs.domains(segs, A).items()):
            if aggs[j] == i:
                continue
            recv[j] += b
            sent += b
            if b > recv_from[j][0]:
                recv_from[j] = (b, i)
            if b > best:
                best, to = b, j
        if sent:
            out.append((sent, i, to))
    one = CollectiveCosts.message_time(engine)

    def t(member: int, agg: int, nbytes: int) -> float:
        a, b = members[member], members[aggs[agg]]
        return one(a, b, nbytes) if write else one(b, a, nbytes)
    x = max((t(recv_from[j][1], j, r) for j, r in enumerate(recv) if r), default=0.0)
    return max(x, max((t(i, to, u) for u, i, to in out), default=0.0))


def _collective_end(vr: VirtualRank, st: FileState, inst: Any, start: float, write: bool,
                    plan: Callable[[], list[Segments]]) -> float:
    """When collective *inst*'s I/O, from *start* (after the barrier), ends: the exchange
    and the aggregators' access of the union of ``plan()``, the members' segments in
    group order (module docstring); computed by the first member that asks."""
    entry = st.coll_end.get(inst.key)
    if entry is None and vr.clock > vr.engine._now:
        vr.sync("File.collective")   # (another member may have computed it meanwhile)
        entry = st.coll_end.get(inst.key)
    if entry is None:
        P = inst.size
        parts = plan()
        fs = filesystem(vr)
        x = exchange_time(vr.engine, st.members, parts, fs, write) if P > 1 else 0.0
        links = _links(vr)
        both = [0.0, links["aggregate"]]   # the aggregators' own client links are free
        segs = union(s for ss in parts for s in ss)
        end = fs.finish(segs, start + x if write else start, st.targets(fs),
                        fs.aggregator_count(P), both)
        links["aggregate"] = both[1]
        entry = st.coll_end[inst.key] = [end if write else end + x, P]
    entry[1] -= 1
    if entry[1] == 0:
        del st.coll_end[inst.key]
    return float(entry[0])


def _parts(inst: Any) -> Callable[[], list[Segments]]:
    """The plan of a collective whose members contributed ``(bytes, segments)``."""
    def plan() -> list[Segments]:
        return [ss for _, ss in inst.values]
    return plan


def _collective(f: Any, buf: Any, offset: int | None, call: str, write: bool,
                status: Any, blocking: bool) -> Request | None:
    vr = current()
    st = state_of(f, vr, call)
    no_pointer_of_mine(vr, st, call)
    at = offset is not None
    if offset is None:
        offset = f._local.position
    done, segs, _ = _access(vr, f, st, call, buf, offset, write)
    if not at:
        _advance(f, done)
    inst, me, req = group_call(vr, st, call, (done, segs), blocking=blocking)
    if blocking:
        end = _collective_end(vr, st, inst, vr.clock, write, _parts(inst))
        charge_until(vr, end, f"File.{call}")
        finalize(vr, st.comm, inst)
        _status(status, done)
        return None

    def post() -> None:
        assert req.avail is not None
        end = _collective_end(vr, st, inst, req.avail + req.cost, write, _parts(inst))
        charge_until(vr, end, f"File.{call}")
        finalize(vr, st.comm, inst)

    req.envelope = (ANY_SOURCE, ANY_TAG, done)
    req.post = post
    return hand_out(req)


def _ordered(f: Any, buf: Any, call: str, write: bool, status: Any) -> int:
    """A collective access at the shared pointer in group-rank order (blocking)."""
    vr = current()
    st = state_of(f, vr, call)
    view = f._local.view
    info = parse_buffer(vr, buf, f"File.{call}")
    mine = info.nbytes // view.esize
    inst, me, _ = group_call(vr, st, call, (mine, st.shared))
    base = inst.values[0][1]
    entry = st.prefix.get(inst.key)
    if entry is None:   # once per call: each member's etype offset, and the total
        entry = st.prefix[inst.key] = [list(accumulate((c for c, _ in inst.values),
                                                       initial=base)), inst.size]
    starts = entry[0]
    entry[1] -= 1
    if entry[1] == 0:
        del st.prefix[inst.key]
    done, _, _ = _access(vr, f, st, call, buf, starts[me], write)
    if first_out(st, inst):
        st.shared = starts[-1]

    def plan() -> list[Segments]:
        e = view.esize
        return [view.segments(a * e, (b - a) * e) for a, b in zip(starts, starts[1:])]
    end = _collective_end(vr, st, inst, vr.clock, write, plan)
    charge_until(vr, end, f"File.{call}")
    finalize(vr, st.comm, inst)
    _status(status, done)
    return done


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
