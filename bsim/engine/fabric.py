"""The fluid contention layer: messages in flight share link bandwidth, max-min fairly.

Owned by the engine as ``engine.fabric`` when a run asks for contention
(``simulate(..., contention="fluid")``, ``bsim run --contention fluid``) and
its network model can route: it has ``links()`` and either ``route(src, dst)``
(topology models; ``rail_routes`` for fat-tree rails) or
``contention_flows(src, dst, nbytes)`` (``twolevel``'s shared NICs).

Model (``netmodels/maxmin.py``, ``docs/networks.md``): a message is a
*flow* of its bytes over its route's directed links (striped over several
routes when a fat-tree stripes rails).  At every instant the rates of the
flows in flight are the max-min fair allocation of the link capacities, and
they change only when a flow starts or ends, so completion times are exact.
Options (``bsim/engine/fabric_options.py``): ``share=latency`` weighs flows by
``1 / route latency`` (weighted max-min, SimGrid's CM02), ``start=after_latency``
lets a flow's bytes move only once its route latency has passed (CM02 again).
The model's own uncontended formula stays the baseline: contention adds the
*delay* ``(completion - start) - alone``, where ``alone`` is the flow's
duration with the network to itself (``max_path size / min capacity``).
The protocols charge that delay (``bsim/engine/protocols.py``).

Incremental solver.  Max-min fair rates decompose over the connected
components of the flow-link graph, so when flows start or end only the
components of the links they touch are recomputed (progressive filling over a
heap of distinct link shares, ``bsim/engine/fabric_solver.py``).  Flows started or
ended at one instant are recomputed together by one *settle* event queued at that instant
with priority ``PRIO_SETTLE`` (after every rank wake-up and message event of the instant);
a flow that ended alone on its links changes no rate and queues none.  Flows that join
later (a route's latency first, ``start=after_latency``; ``loggp`` injections after the
NIC frees) wait in a start queue by time, and each such time queues the settle of its
instant, which adds them first.  Each flow keeps ``(bytes left at t_upd, rate)`` and is
drained only when its rate changes.  Predicted completions sit in a heap of times (an
entry is stale once its flow ended or changed rate); the engine holds one timer event for
the earliest, and stale timer events are filtered by a version counter.  Links are
numbered once, routes cached per rank pair and ended flows recycled, so a message leaves
no garbage for the collector (see ``docs/networks.md``, "Speed").

Determinism: flows are ordered by a layer-wide sequence number (completions at
one time are handled in start order, before the starts of that time), links
and flows are kept in lists (a link's flows in the order they joined) and
insertion-ordered dicts (never sets, whose order would depend on hashing), and
every engine event is keyed by the rank that caused it (``Engine.call_at``).
Messages started with ``ordered=True``
are reported per (src, dst) pair in start order, so messages of one pair never
overtake each other.  The layer holds global network state: distributed runs
(several host processes) do not support it yet.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from heapq import heappop, heappush
from typing import TYPE_CHECKING, Any

from .events import PRIO_NET, PRIO_SETTLE, TIE, Call
from .fabric_options import CONTENTION_MODES, STARTS, parse_contention
from .fabric_routes import Flow, LinkTable
from .fabric_solver import MaxMinSolver

if TYPE_CHECKING:
    from netmodels.base import NetworkModel

    from .core import Engine
    from .rank import VirtualRank

__all__ = ["ContentionLayer", "build_fabric", "parse_contention", "CONTENTION_MODES"]

_REL_EPS = 1e-12   # flows due within this relative time of the timer complete with it
# how a message's paths are found (LinkTable): adaptive rails, a flat model's NICs, the
# model's route table, or its contention_flows hook
_ADAPTIVE, _FLAT, _TABLE, _HOOK = 0, 1, 2, 3


class ContentionLayer(MaxMinSolver):
    """Fluid max-min sharing of *network*'s links among the messages of *engine*.

    A flat model (no ``links()``) gets one sending and one receiving NIC link
    per rank (:class:`~bsim.engine.fabric_routes.FlatNics`).
    """

    def __init__(self, engine: Engine, network: NetworkModel, share: str = "equal",
                 start: str = "send") -> None:
        if start not in STARTS:
            raise ValueError(f"contention: start must be one of {', '.join(STARTS)}, "
                             f"got {start!r}")
        self.engine = engine
        self.net = self.network = network
        self.routes = routes = LinkTable(network, engine.nranks, share)
        self.share, self.start = share, start
        self._weighted = share != "equal"
        self._after_latency = start == "after_latency"
        self.link_ids = routes.link_ids
        # what start_flow reads per message, held as the layer's own (C, compiled) fields
        self._queue = engine.queue
        self._ranks = engine.ranks   # (Spawn appends to the same list)
        self._nranks = routes.nranks
        self._route_mode = (_ADAPTIVE if routes.adaptive else _FLAT if routes.flat is not None
                            else _TABLE if routes.hook is None else _HOOK)
        self._paths_cache = routes.paths_cache
        self._flat_last = routes.flat_last
        self._index = routes.index
        self._cap = routes.cap
        self._init_solver(routes.cap, self._weighted)   # per link, for the whole run
        self._live: dict[int, Flow] = {}   # flows in flight by seq
        self._dirty: list[tuple[int, ...]] = []          # links whose component changed
        self._pair_first: dict[int, Flow] = {}           # ordered messages in flight per
        self._pair_last: dict[int, Flow] = {}            # pair, linked by Flow.nxt
        self._start_heap: list[float] = []               # flows starting later, by time
        self._starting: dict[float, list[Flow]] = {}
        self._pool: list[Flow] = []                      # ended flows, reused (no allocation)
        self._seq = 0
        self._epoch = 0
        self._settle_pending = False
        self._settle_call = Call(self._settle, ())   # the one settle event queued at a time
        self._armed_at = math.inf
        self._timer_ver = 0
        # statistics (benchmarks)
        self.flows_started = 0
        self.recomputed = 0
        self.settles = 0

    def __repr__(self) -> str:
        return (f"<ContentionLayer fluid net={self.net.name} links={len(self._cap)} "
                f"in_flight={self.in_flight()}>")

    def spec(self) -> str:
        """``fluid`` and its options that differ from the default (what a Result records)."""
        opts = [f"share={self.share}"] * (self.share != "equal") + \
            [f"start={self.start}"] * (self.start != "send")
        return ":".join(["fluid", ",".join(opts)]) if opts else "fluid"

    @property
    def capacity(self) -> dict[Any, float]:
        """Link id -> capacity (bytes/second) as the solver sees it."""
        return dict(zip(self.link_ids, self._cap, strict=True))

    # -- what the protocols call ---------------------------------------------
    def _alone(self, paths: Any) -> float:
        """A message of several parts (striped routes, rails), alone in the network: its
        parts share the links only with each other, so it ends when the most loaded link
        has carried its parts, ``max over links of (sum of the parts' shares on it) /
        capacity`` (one part per link: the slowest part alone).  Max-min reaches this
        bound for parts of equal shares over the same links, as striping makes them."""
        load: dict[int, float] = {}
        for links, share, _, _, _ in paths:
            for lk in links:
                load[lk] = load.get(lk, 0.0) + share
        cap = self._cap
        return max([total / cap[lk] for lk, total in load.items()])

    def start_flow(self, t: float, src: int, dst: int, nbytes: int,
                   on_done: Callable[[float, float, float, Any], None], payload: Any = None,
                   ordered: bool = False) -> None:
        """Send *nbytes* from world rank *src* to *dst* starting at time *t*.

        When the last byte has crossed the fluid network, at time ``done``,
        ``on_done(done, delay, t, payload)`` is called with ``delay = (done -
        entry) - alone`` (>= 0): the time contention added to the lone transfer.
        The flow enters the network at ``entry = max(t, now)`` (with
        ``start=after_latency``, at ``max(t + route latency, now)``, as SimGrid's
        CM02 moves a flow's bytes once its latency has passed): a rank's clock
        may trail the engine by up to the lookahead when what it waited for
        (a collective cheaper than a message, a message it was already blocked
        on) became visible only then; the lateness only shifts the interval in
        which the flow shares links (more than the lookahead: ``ValueError``).
        Messages on one node, to oneself or of 0 bytes end at *t* with no
        delay (``on_done`` may then run before this returns).  With *ordered*,
        the messages of one (src, dst) pair are reported in the order they were
        started (a later message that ends first waits for the earlier ones).
        """
        eng = self.engine
        now = eng._now
        late = 0.0
        if t < now:   # the sender learnt it could start only now (see the docstring)
            late = now - t
            # float noise of times near `now` (e.g. `ts + lookahead` rounded), or a wait
            # for receives sent in a tie with this one (events.TIE), is not lateness
            if late > eng.lookahead * (1.0 + 1e-9) + 64 * math.ulp(now) + now * TIE:
                raise ValueError(f"contention: flow {src}->{dst} starts at {t!r}, "
                                 f"{late!r} s before now {now!r} (more than the lookahead)")
        routes = self.routes
        mode = self._route_mode
        key = src * self._nranks + dst
        if nbytes > 0:
            extra = 0.0
            if mode == _FLAT:   # a flat model's NICs (a star, LogGP, ...)
                last = self._flat_last.get(key)   # (LinkTable.flat_paths' own cache)
                if last is not None and last[0] == nbytes:
                    paths = last[1]
                else:
                    paths = routes.flat_paths(src, dst, nbytes)
                scale = 1.0
            elif mode == _TABLE:
                cached = self._paths_cache.get(key)
                paths = cached if cached is not None else routes.pair_paths(key, src, dst)
                scale = float(nbytes)
            elif mode == _ADAPTIVE:
                paths = routes.adaptive_paths(src, dst, self._backing["_ulen"])
                scale = float(nbytes)
                extra = routes.extra   # a longer adaptive path's latency, charged as delay
            else:
                paths = routes.hook_paths(src, dst, nbytes)
                scale = 1.0
        else:
            paths = ()
            extra = 0.0
        f: Flow = self._pool.pop() if self._pool else Flow()
        f.start = t
        f.late = late
        if late:
            t = now
        f.owner = self._ranks[src]
        f.fn = on_done
        f.payload = payload
        f.done = None
        if paths:
            links, share, inv_cap, _, lat = paths[0]
            alone = share * inv_cap
            f.parts = len(paths)
            if f.parts > 1:
                for _, _, _, _, other in paths[1:]:
                    lat = max(lat, other)
                alone = self._alone(paths)
            f.alone = alone * scale - extra
            if self._after_latency and f.start + lat > t:
                t = f.start + lat
                f.late = lat
        else:
            f.parts = 1
            f.alone = 0.0
        f.nxt = None
        if ordered:
            f.pair = key
            last = self._pair_last.get(key)
            if last is None:
                self._pair_first[key] = f
            else:
                last.nxt = f
            self._pair_last[key] = f
        else:
            f.pair = -1
        if not paths:
            self._finish(f, t)
            return
        self.flows_started += f.parts
        f.paths = paths
        f.scale = scale
        if t > now:   # joins the network at t: the settle of that instant adds it
            bucket = self._starting.get(t)
            if bucket is None:
                self._starting[t] = [f]
                heappush(self._start_heap, t)
                self._queue_settle(t, f.owner)
            else:
                bucket.append(f)
        else:
            self._add(f)

    # -- flows entering and leaving ----------------------------------------------
    def _add(self, head: Flow) -> None:
        dirty = self._dirty
        t = self.engine._now
        scale = head.scale
        f: Flow = head
        for k, (links, share, _, w, _) in enumerate(head.paths):
            if k:
                f = self._pool.pop() if self._pool else Flow()
                f.head = head
                f.owner = head.owner
            else:
                f.head = None
            f.links = links
            self._seq += 1
            f.seq = self._seq
            f.slot = self._open(links, w, share * scale, t, f.seq)
            self._live[f.seq] = f
            dirty.append(links)
        if not self._settle_pending:
            self._schedule_settle(head.owner)  # type: ignore[arg-type]

    def _schedule_settle(self, owner: VirtualRank) -> None:
        if not self._settle_pending:
            self._settle_pending = True
            self._queue_settle(self.engine._now, owner)

    def _queue_settle(self, t: float, owner: VirtualRank) -> None:
        """The settle event at *t*, keyed by *owner* (``Engine.push``'s key rule, inlined:
        a hot path, a settle per start instant and per instant of shared ends)."""
        owner.seq += 1
        heappush(self._queue, (t, PRIO_SETTLE, owner.keybase | owner.seq, self._settle_call))

    def _on_timer(self, version: int) -> None:
        """The earliest predicted completion is due: end every flow due now (those that
        share links with others leave their components to the settle of the instant)."""
        if version != self._timer_ver:
            return   # superseded by an earlier completion
        f: Flow
        head: Flow
        self._armed_at = math.inf
        now = self.engine._now
        limit = now + _REL_EPS * abs(now)
        heap = self._heap
        due = self._due
        live = self._live
        dirty = self._dirty
        ending: list[int] = []
        while heap and heap[0] <= limit:
            t = heappop(heap)
            for seq in due.pop(t):
                f = live.get(seq)
                if f is not None and self._ends_at(f.slot, t):
                    ending.append(seq)
        ending.sort()   # flows ending together are handled in start order
        finished: list[Flow] = []
        owner = None
        for seq in ending:
            f = live.pop(seq, None)
            if f is None:
                continue
            if self._close(f.slot):   # others share its links: their rates change
                dirty.append(f.links)
                owner = f.owner
            head = f.head
            if head is None:
                head = f
            else:   # a stripe of a message: recycle it now
                f.head = f.owner = None
                f.links = ()
                self._pool.append(f)
            head.parts -= 1
            if head.parts == 0:
                finished.append(head)
        if owner is not None:
            self._schedule_settle(owner)
        else:   # no rate changed (each flow ended alone): no settle
            self._arm()
        for head in finished:
            self._finish(head, now)

    def _finish(self, f: Flow, done: float) -> None:
        """*f*'s message is through: report it (in pair order when ordered), recycle it."""
        f.done = done
        key = f.pair
        if key < 0:
            self._report(f)
            return
        if self._pair_first[key] is not f:
            return   # an earlier message of this pair is still in flight
        cur: Flow = f   # (None once the pair's reported messages run out)
        while cur is not None and cur.done is not None:
            nxt = cur.nxt
            self._report(cur)
            cur = nxt
        if cur is None:
            del self._pair_first[key], self._pair_last[key]
        else:
            self._pair_first[key] = cur

    def _report(self, f: Flow) -> None:
        done = f.done
        d = (done - f.start - f.late) - f.alone  # type: ignore[operator]
        fn, payload, start = f.fn, f.payload, f.start
        f.fn = f.payload = f.owner = f.nxt = None
        f.links = f.paths = ()
        self._pool.append(f)
        fn(done, d if d > 0.0 else 0.0, start, payload)  # type: ignore[misc]

    # -- the solver ---------------------------------------------------------------
    def _settle(self) -> None:
        """Add the flows that join the network now (:meth:`start_flow`'s start queue), then
        recompute the rates of every component touched since the last settle."""
        sheap = self._start_heap
        if sheap:
            limit = self.engine._now
            limit += _REL_EPS * abs(limit)
            if sheap[0] <= limit:
                self._settle_pending = True   # (the flows join this settle)
                while sheap and sheap[0] <= limit:
                    for f in self._starting.pop(heappop(sheap)):
                        self._add(f)
        self._settle_pending = False
        if not self._dirty:
            return   # a start instant whose flows an earlier settle took, or one settled
        self.settles += 1
        self._epoch += 1
        dirty = self._dirty
        self._dirty = []
        self._resolve(dirty, self._epoch)
        self._arm()

    def _arm(self) -> None:
        """Make sure the engine holds a timer for the earliest predicted completion."""
        f: Flow
        heap = self._heap
        armed = self._armed_at
        if not heap or heap[0] >= armed:
            return   # the timer held is the earliest (stale entries go when met)
        first = math.inf
        due = self._due
        live = self._live
        owner = None
        while heap:
            t = heap[0]
            for seq in due[t]:
                f = live.get(seq)
                if f is not None and self._ends_at(f.slot, t):
                    first, owner = t, f.owner
                    break
            else:
                heappop(heap)   # every flow predicted at t has ended or changed rate
                del due[t]
                continue
            break
        if first < armed:
            self._armed_at = first
            self._timer_ver += 1
            owner.seq += 1   # Engine.call_at, inlined (a hot path: a timer per completion)
            heappush(self._queue, (first, PRIO_NET, owner.keybase | owner.seq,
                                         Call(self._on_timer, (self._timer_ver,))))

    # -- ranks added during the run ---------------------------------------------------
    def add_ranks(self, nranks: int) -> None:
        """Make room for *nranks* ranks in all, more than before (``MPI.Comm.Spawn``, after
        the network has placed them): the links they bring (a flat model's NICs, a
        ``twolevel`` model's new nodes) join the solver with no flow, and the rank-pair keys
        of the messages in flight are renumbered for the larger count."""
        routes = self.routes
        old = routes.nranks
        caps = routes.add_ranks(nranks)
        self._nranks = nranks
        if caps:
            self._add_links(caps)
        first, last = self._pair_first, self._pair_last
        self._pair_first, self._pair_last = {}, {}
        for key, f in first.items():
            src, dst = divmod(key, old)
            new = src * nranks + dst
            self._pair_first[new] = f
            self._pair_last[new] = last[key]
            while f is not None:
                f.pair = new
                f = f.nxt

    # -- inspection -----------------------------------------------------------------
    def in_flight(self) -> int:
        """Number of flows currently sharing the network."""
        return len(self._live)


def build_fabric(engine: Engine, contention: str | None) -> ContentionLayer | None:
    """The contention layer for *contention* (``"fluid[:...]"``), or None for ``"none"``."""
    mode, opts = parse_contention(contention)
    if mode == "none":
        return None
    return ContentionLayer(engine, engine.network, **opts)
