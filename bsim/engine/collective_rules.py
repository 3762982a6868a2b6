# cython: annotation_typing=False
"""Collective operations in the engine: dependency rules, costs, mismatch detection.

Every collective call on a communicator is the k-th collective of the calling
rank on that communicator; the calls with the same k form one *instance*
(:class:`CollInstance`), where ranks register their arrival time (their clock)
and contribution.  Timing follows ``docs/collectives.md`` (after the BSIM paper,
Sec. 2.C):

* **all** (barrier, allreduce, allgather, alltoall, reduce_scatter, scan,
  exscan, and communicator creation): every rank completes at
  ``max(arrivals) + T``; its wait is ``max(arrivals) - own arrival``.
* **fan-out** (bcast, scatter): the root completes at ``own + T``; a non-root
  at ``max(own, root arrival) + T``, waiting ``max(0, root - own)``.
* **fan-in** (reduce, gather): a non-root completes at ``own + T``; the root
  at ``max(arrivals) + T``.

``T = T(op, P, nbytes)`` comes from the run's collective cost source
(:class:`CollectiveCosts`): ``analytic`` formulas, the MILC paper's ``clog``
(``c + d*log2 P``), a measured ``table`` (BSIM paper's PRIMEQUEST method), or
``algorithmic``: the collective is expanded into the point-to-point messages
of a named algorithm (``netmodels.collective_schedules``) which go through the network
model, so topology, contention and the protocol act on them and the rules
above emerge from the messages.  Nonblocking collectives use the analytic
twin of the algorithm when the source is algorithmic.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from netmodels.collective_algorithms import LINEAR_ROOTED, canonical_op
from netmodels.collective_schedules import linear_v_part, rank_parts

from ..constants import COLLECTIVE, CommKind, ReqKind
from ..errors import CollectiveMismatchError
from .collective_costs import CollectiveCosts
from .events import PRIO_NET, Call
from .matching import Message, post_receive
from .request_state import new_request
from .schedule_driver import run_rounds, usable

try:   # compiled or not (bsim/engine/compiled.py, TYPED): the request's constructor
    import cython
except ImportError:
    from . import pure_cython as cython

if TYPE_CHECKING:
    from .core import Engine
    from .rank import VirtualRank
    from .surface import Comm, Request

__all__ = ["ALL", "FANOUT", "FANIN", "CollectiveCosts", "CollInstance", "Aggregate", "LARGEST",
           "TOTAL", "arrive", "start_into", "arrival_info"]

# hot path: the kinds as module globals (an Enum attribute lookup costs several times a global's)
SEND, RECV = ReqKind.SEND, ReqKind.RECV

ALL, FANOUT, FANIN = 0, 1, 2
_K_ALL, _K_FANOUT, _K_FANIN = ALL, FANOUT, FANIN   # C longs when compiled (the .pxd)


class Aggregate:
    """A cost size that is the same for every member, ``fn(instance)`` (e.g. the largest
    contribution of an allreduce): evaluated once per set of arrivals, not once per
    member, so a collective's cost is O(P) to compute rather than O(P^2)."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[CollInstance], float]) -> None:
        self.fn = fn


def _largest(inst: CollInstance) -> float:
    return max(inst.nbytes)


def _total(inst: CollInstance) -> float:
    return sum(inst.nbytes)


# the two sizes the calls use, made once (an Aggregate per call was an allocation per call)
LARGEST = Aggregate(_largest)   # the largest contribution (allreduce, allgather, alltoall)
TOTAL = Aggregate(_total)       # the sum of the contributions (the vector exchanges)


def _no_cost(member: int) -> float:
    """The cost function of an instance before its first arrival sets it (never called)."""
    raise AssertionError("collective cost asked before any arrival")


class CollInstance:
    """One collective call across the members of a communicator.

    In a distributed run each host process keeps its own instance of a call,
    filled by its members' arrivals and by the arrivals other hosts ship
    (:func:`arrival_info`); ``local`` and ``expect`` count the members run
    here and the arrivals this process will see.
    """

    __slots__ = ("key", "op", "kind", "root", "size", "sig", "sig_rank", "arrived", "times",
                 "values", "reqs", "max_t", "root_t", "finalized", "result", "nbytes",
                 "rounds", "extra", "local", "expect", "cost_fn", "rkey", "scheduled",
                 "root_known", "alg", "call", "shared")

    def __init__(self, key: Any, op: str, kind: int, root: int, size: int) -> None:
        self.key = key
        self.op = op
        self.kind = kind
        self.root = root
        self.size = size
        self.sig: tuple[Any, ...] | None = None
        self.sig_rank = -1
        self.arrived = 0
        self.times: list[float | None] = [None] * size
        self.values: list[Any] = [None] * size
        self.reqs: list[Request | None] = [None] * size
        self.max_t = float("-inf")
        self.root_t: float | None = None
        self.finalized = 0
        self.result: Any = None
        self.nbytes: list[float] = [0.0] * size
        self.rounds: Any = None
        self.extra: Any = None
        self.local = -1          # members run by this process (-1: none arrived yet)
        self.expect = size       # arrivals this process will know of
        self.cost_fn: Callable[[int], float] = _no_cost   # T for a member (set on arrival)
        self.rkey = 0            # tie-break key of the completion event (owner's)
        self.scheduled = False   # completion event scheduled
        self.root_known = False  # fan-out: the root's arrival is visible here
        self.alg = False         # run as point-to-point messages (no completion event)
        self.call = ""           # ... and the name its rounds' waits report
        self.shared = False      # every member pays one T (an Aggregate size): cost_fn(0)

    def record(self, me: int, t: float, value: Any, nbytes: float, rkey: int) -> None:
        """Register member *me*'s arrival at time *t*."""
        self.times[me] = t
        self.values[me] = value
        self.nbytes[me] = nbytes
        self.arrived += 1
        if t > self.max_t:
            self.max_t = t
        if me == self.root:
            self.root_t = t
        if rkey:
            self.rkey = rkey


def _show(s: tuple[Any, ...]) -> str:
    op, root, extra = s[:3]
    parts = [f"{s[3]} {op}" if len(s) > 3 else op]   # a 4th item: "nonblocking"
    if root >= 0:
        parts.append(f"root={root}")
    parts += [f"{k}={v}" for k, v in extra]
    return f"{parts[0]}({', '.join(parts[1:])})"


def _mismatch(vr: VirtualRank, comm: Comm, seq: int, inst: CollInstance,
              sig: tuple[Any, ...]) -> CollectiveMismatchError:
    return CollectiveMismatchError(
        f"collective mismatch on {comm!r} at its collective #{seq}: rank "
        f"{inst.sig_rank} called {_show(inst.sig or ())}, rank {comm.rank_of(vr)} called "
        f"{_show(sig)} (world ranks {comm.world_rank(inst.sig_rank, vr)} and {vr.rank})")


_reuse: list[Request] = []


def start_into(req: Request, post: Callable[[], Any]) -> Any:
    """Run *post* (a nonblocking collective call) so that its arrival fills *req*.

    A persistent collective (``Allreduce_init``, ...) starts as its nonblocking
    call, but into its own request object.  Ranks run one at a time and the call
    reaches :func:`arrive` without yielding, so the next request made is *req*'s.
    """
    _reuse[:] = [req]
    try:
        return post()
    finally:
        _reuse.clear()


def arrive(vr: VirtualRank, comm: Comm, op: str, kind: int, root: int, nbytes: float,
           value: Any, extra: tuple[Any, ...] = (), blocking: bool = True,
           cost_bytes: Callable[[CollInstance, int], float] | Aggregate | None = None,
           cost_op: str | None = None,
           blocks: Callable[[CollInstance], Sequence[float] | None] | None = None,
           ident: tuple[Any, int, int] | None = None
           ) -> tuple[CollInstance, int, Request | None]:
    """Register the calling rank's arrival at its next collective on *comm*.

    Returns the instance, the rank's communicator rank and its request
    (``None`` when the collective was run algorithmically and is already
    complete).  *extra* are ``(name, value)`` pairs that must agree across
    ranks (operation, sizes); *cost_bytes* computes the size that sets a
    member's ``T`` once the arrivals it needs are known (default: the
    member's *nbytes*); *cost_op* is the collective whose cost applies when
    *op* is not one (communicator creation).  *blocks* (Gatherv, Scatterv): every
    member's block as the root knows it, read from the instance once the root has
    arrived (None there: not known); a linear algorithm then moves and prices each
    block as it is (:func:`~netmodels.collective_schedules.linear_v_part`).  *ident*:
    ``comm.coll_identity(vr)`` when the call has asked it already.

    Visibility (docs/distributed.md): a member learns of the others'
    arrivals the lookahead ``δ`` after them, so the completion that depends
    on other members is resolved by an event at ``max(arrivals) + δ`` (all,
    fan-in root) or ``root arrival + δ`` (fan-out); the times charged are the
    rules' above.  A member's own part (fan-out root, fan-in non-root, a
    1-member communicator) resolves at once.
    """
    cop = cost_op or op
    eng = vr.engine
    cctx, me, size = comm.coll_identity(vr) if ident is None else ident
    seqs = vr.coll_seq
    if seqs is None:
        seqs = vr.coll_seq = {}
    seq = seqs.get(cctx, 0)
    seqs[cctx] = seq + 1
    key = (cctx, seq)
    colls = eng.colls
    inst = colls.get(key)
    # MPI 4.1 Sec. 6.12: a nonblocking collective (or a started persistent one) never
    # matches a blocking one, so the signatures differ
    sig = (op, root, extra) if blocking else (op, root, extra, "nonblocking")
    if inst is None:
        inst = colls[key] = CollInstance(key, op, kind, root, size)
        inst.sig, inst.sig_rank = sig, me
    elif inst.sig != sig:
        raise _mismatch(vr, comm, seq, inst, sig)
    costs = eng.collective_costs
    sized = _sized(extra)
    if inst.local < 0:
        _count_local(eng, inst, comm, vr)
        members = comm.members(vr)
        root0 = root if root >= 0 else 0

        if isinstance(cost_bytes, Aggregate):
            inst.shared = True
            inst.cost_fn = costs.shared_cost(eng, comm, members, cop, inst, cost_bytes.fn,
                                             root0, sized)
        else:   # a rooted linear algorithm prices each member by its own messages
            linear = (costs.linear_kind(cop, size, nbytes if sized else None)
                      if kind != _K_ALL else None)
            inst.cost_fn = costs.member_cost(eng, comm, members, cop, inst, cost_bytes, root0,
                                             sized, linear, blocks)
    t = vr.clock
    # the member whose key orders the completion event: the root, or member 0
    rkey = vr.next_key() if me == (root if root >= 0 else 0) else 0
    alg = (costs.algorithm(cop, size, nbytes if sized else None)
           if costs.any_algorithmic and blocking and size > 1 else None)
    if alg is not None:
        inst.alg = True
    elif me == 0 and size > 1:   # priced by a formula: no contention, no network noise
        eng.formula_collectives += 1
    if me == 0 and size > 1:   # once per call: the key its algorithm is chosen from
        calls, ck = costs.calls, (cop, size, nbytes if sized else None)
        calls[ck] = calls.get(ck, 0) + 1
    inst.record(me, t, value, nbytes, rkey)
    vr.ops += 1
    if eng.host_of is not None and size > 1:
        _ship_arrival(eng, comm, vr, inst, me, t, value, nbytes, rkey, alg is not None)
    if alg is not None:
        _run_algorithm(vr, comm, key, inst, me, cop, alg, nbytes, blocks)
        return inst, me, None
    # compiled, the surface's Request (whose __init__ is RequestState's) is made in C
    req = (_reuse.pop() if _reuse else new_request(eng.request_class, vr, RECV, op)
           if cython.compiled else eng.request_class(vr, RECV, op))
    if req.kind != RECV:   # a persistent collective's request, started again
        req.reset(RECV)    # type: ignore[attr-defined]
    req.src = COLLECTIVE
    inst.reqs[me] = req
    T_of = inst.cost_fn
    bg = not blocking and eng.protocol.overlaps
    if size == 1:
        _resolve(req, t, T_of(me), bg)
        return inst, me, req
    if kind == _K_FANOUT:
        if me == root:
            _resolve(req, t, T_of(me), bg)
        elif inst.root_known and inst.root_t is not None:
            _resolve(req, inst.root_t, T_of(me), bg, t)
    elif kind == _K_FANIN and me != root:
        _resolve(req, t, T_of(me), bg)
    if kind == _K_FANOUT or inst.arrived == size:   # else _schedule_completion does nothing
        _schedule_completion(eng, inst)
    return inst, me, req


def _sized(extra: tuple[Any, ...]) -> bool:
    """Whether a call's signature carries its size (``("nbytes", n)``): then every member
    knows it (the signatures must agree), and an algorithm may be chosen from it.  Else
    (v-variants, Python objects) the members' sizes may differ, and an instance's algorithm,
    which must be the same at every member, is chosen without it (docs/collectives.md)."""
    for item in extra:
        if item[0] == "nbytes":
            return True
    return False


def _schedule_completion(eng: Engine, inst: CollInstance) -> None:
    """Once the arrivals a rule needs are known here, schedule its completion event."""
    if inst.scheduled or inst.alg:
        return
    if inst.kind == FANOUT:
        if inst.root_t is None:
            return
        t = inst.root_t + eng.lookahead
    elif inst.arrived == inst.size:
        t = inst.max_t + eng.lookahead
    else:
        return
    inst.scheduled = True
    eng.push(t, PRIO_NET, inst.rkey, Call(_complete, (inst, eng.protocol.overlaps)))


def _resolve(req: Request, start: float, T: float, background: bool,
             posted: float = float("-inf")) -> None:
    """Resolve a member's request: its part starts at *start* and takes *T*.  A blocking
    call, and under the ``bsim`` protocol a nonblocking one at its ``Wait`` (the seed's
    rule for ``irecv`` + ``wait``), is busy for *T* after ``max(clock, start)``
    (``avail = start``, ``cost = T``: the wait/comm split of ``VirtualRank.settle``).
    Under ``loggp`` a nonblocking one (*background*: ``Iallreduce``, a started persistent
    collective) runs while the rank computes, as its point-to-point calls do: its part
    cannot start before the rank *posted* it either, so its ``Wait`` ends at
    ``max(clock, max(start, posted) + T)`` (``avail`` that, no cost then): the rule's
    time, ``max(own, root) + T`` for a fan-out non-root, as the blocking call charges."""
    if background:
        req.resolve((posted if posted > start else start) + T, 0.0, start)
    else:
        req.resolve(start, T, start)


def _complete(inst: CollInstance, overlaps: bool) -> None:
    """The completion event: resolve the waiting members run by this process (a
    nonblocking call's request has its ``post`` set by then; under a protocol that
    *overlaps* it runs in the background: :func:`_resolve`)."""
    kind, root, reqs = inst.kind, inst.root, inst.reqs
    T_of = inst.cost_fn
    n = len(reqs)
    if kind == ALL:
        m = inst.max_t
        # an Aggregate's T is the same for every member (its memo: shared_cost), so it is
        # asked once; else member by member
        T = T_of(0) if inst.shared else 0.0
        for r in range(n):   # _resolve, inlined: a call per member is hot
            req = reqs[r]
            if req is None:
                continue
            if not inst.shared:
                T = T_of(r)
            if overlaps and req.post is not None:
                req.resolve(m + T, 0.0, m)
            else:
                req.resolve(m, T, m)
    elif kind == FANOUT:
        inst.root_known = True
        assert inst.root_t is not None   # scheduled only once the root's arrival is known
        rt = inst.root_t
        times = inst.times
        for r in range(n):   # _resolve, inlined
            req = reqs[r]
            if req is None or r == root:
                continue
            if overlaps and req.post is not None:
                own = times[r]   # a late member's part starts at its post: max(own, rt)
                req.resolve((own if own is not None and own > rt else rt) + T_of(r), 0.0, rt)
            else:
                req.resolve(rt, T_of(r), rt)
    else:
        req = reqs[root]
        if req is not None:
            _resolve(req, inst.max_t, T_of(root), overlaps and req.post is not None)


def finalize(vr: VirtualRank, comm: Comm, inst: CollInstance) -> None:
    """Count a member done with *inst*; drop the instance when all are."""
    inst.finalized += 1
    if inst.finalized == inst.local and inst.arrived == inst.expect:
        vr.engine.colls.pop(inst.key, None)
        inst.cost_fn = _no_cost   # its closure refers to inst: free the members' buffers now


# -- distributed runs: arrivals shipped between host processes -------------------

def _count_local(eng: Engine, inst: CollInstance, comm: Comm, vr: VirtualRank) -> None:
    """Set how many members run here and how many arrivals this process will see."""
    host_of = eng.host_of
    if host_of is None:
        inst.local = inst.expect = inst.size
        return
    members = comm.members(vr)
    here = eng.host
    local = sum(1 for w in members if host_of[w] == here)
    inst.local = local
    root = inst.root
    if inst.kind == FANOUT:
        inst.expect = local + (0 if host_of[members[root]] == here else 1)
    elif inst.kind == FANIN:
        inst.expect = inst.size if host_of[members[root]] == here else local
    else:
        inst.expect = inst.size


def _hosts_of(eng: Engine, comm: Comm, vr: VirtualRank) -> tuple[int, ...]:
    """The host processes running members of *comm* (cached per communicator)."""
    cache = eng.comm_hosts
    cctx = comm.coll_context(vr)
    hosts = cache.get(cctx)
    if hosts is None:
        host_of = eng.host_of
        assert host_of is not None   # a distributed run
        hosts = cache[cctx] = tuple(sorted({host_of[w] for w in comm.members(vr)}))
    return hosts


def _ship_arrival(eng: Engine, comm: Comm, vr: VirtualRank, inst: CollInstance, me: int,
                  t: float, value: Any, nbytes: float, rkey: int, alg: bool) -> None:
    """Send this arrival to the other host processes whose members need it."""
    kind, root = inst.kind, inst.root
    if kind == FANOUT and me != root:
        return
    if kind == FANIN:
        if me == root:
            return
        assert eng.host_of is not None   # a distributed run
        dests: tuple[int, ...] = (eng.host_of[comm.world_rank(root, vr)],)
    else:
        dests = _hosts_of(eng, comm, vr)
    info = ("A", inst.key, inst.op, kind, root, inst.size, inst.sig, me, vr.rank, t, value,
            nbytes, rkey, alg)
    for h in dests:
        if h != eng.host:
            eng.outbox[h].append((t + eng.lookahead, 0, info))
            eng.shipped += 1


def arrival_info(eng: Engine, info: tuple[Any, ...]) -> None:
    """Apply an arrival shipped by another host process (between windows)."""
    _, key, op, kind, root, size, sig, me, world, t, value, nbytes, rkey, alg = info
    inst = eng.colls.get(key)
    if inst is None:
        inst = eng.colls[key] = CollInstance(key, op, kind, root, size)
        inst.sig, inst.sig_rank = sig, me
    elif inst.sig != sig:
        raise CollectiveMismatchError(
            f"collective mismatch at collective #{key[1]} of context {key[0]!r}: rank "
            f"{inst.sig_rank} called {_show(inst.sig)}, rank {me} (world rank {world}) "
            f"called {_show(sig)}")
    if alg:
        inst.alg = True
    inst.record(me, t, value, nbytes, rkey)
    _schedule_completion(eng, inst)
    if inst.finalized == inst.local and inst.arrived == inst.expect:
        eng.colls.pop(key, None)
        inst.cost_fn = _no_cost


def _run_algorithm(vr: VirtualRank, comm: Comm, key: tuple[Any, ...], inst: CollInstance,
                   me: int, op: str, alg: str, nbytes: float,
                   blocks: Callable[[CollInstance], Sequence[float] | None] | None) -> None:
    """Execute this rank's part of the algorithm's schedule as real messages.

    A rank's sends carry the sizes of the schedule for its own *nbytes* (the
    schedules' structure depends only on the algorithm, P and the root), so
    no rank's part depends on which member arrived first.  A linear Gatherv or
    Scatterv with *blocks* moves each block as it is: the root's part from its
    counts, a non-root's from its own block, ``nbytes / P`` (``linear_v_part``).
    """
    root = inst.root if inst.root >= 0 else 0
    counts = blocks(inst) if blocks is not None and alg == "linear" and me == root else None
    if blocks is not None and alg == "linear" and (me != root or counts is not None):
        mine = linear_v_part(LINEAR_ROOTED[canonical_op(op)] == "in", root, me, counts,
                             nbytes / inst.size)
    else:
        by_size = inst.rounds
        if by_size is None:
            by_size = inst.rounds = {}
        per_rank = by_size.get(nbytes)
        if per_rank is None:
            per_rank = by_size[nbytes] = rank_parts(op, alg, inst.size, nbytes, root)
        mine = per_rank[me]
    eng = vr.engine
    proto = eng.protocol
    ctx: Any = key       # messages of this instance only match each other
    call = inst.call
    if not call:
        call = inst.call = f"{inst.op} (algorithmic {comm!r})"

    name, rank, ranks, send = inst.op, vr.rank, eng.ranks, proto.send
    # None: the communicator's ranks are world ranks (COMM_WORLD outside spawned worlds)
    world_rank = None if comm.kind is CommKind.WORLD and vr.world is None else comm.world_rank

    def post(i: int) -> list[Request]:
        k, sends, recvs = mine[i]   # k: the global round, used as the tag
        reqs = []
        for src, _size in recvs:   # receive sizes are implied by the matching sends
            req = vr.engine.request_class(vr, RECV, name)
            req.ctx, req.tag = ctx, k
            req.src = src if world_rank is None else world_rank(src, vr)
            req.t_post = vr.clock
            post_receive(vr, req)
            reqs.append(req)
        for dst, n in sends:
            world = dst if world_rank is None else world_rank(dst, vr)
            req = vr.engine.request_class(vr, SEND, name)
            vr.msgs += 1
            vr.nbytes += n
            send(vr, ranks[world], Message(ctx, rank, world, me, k, n, None, False), req, False)
            reqs.append(req)
        return reqs

    if usable(vr):   # the rounds after the first wait run without switching into the rank
        run_rounds(vr, post, len(mine), call)
        return
    for i in range(len(mine)):
        vr.settle(post(i), call)
