"""Fluid (flow-level) contention: max-min fair bandwidth sharing over links.

Each flow moves ``nbytes`` over a fixed set of links.  At every instant the
rates are the max-min fair allocation (progressive filling, Bertsekas &
Gallager, *Data Networks*, Sec. 6.5.2): repeatedly take the link with the
smallest fair share ``residual capacity / unfrozen flows``, freeze its
unfrozen flows at that share, and subtract their rates from the other links
they cross.  Rates are recomputed whenever a flow starts or finishes, and
between those events every flow progresses linearly, so finish times are exact
(up to floating point).  This is the fluid model of SimGrid's LMM solver
without its latency and TCP-window corrections; latency is the caller's job.

A flow with no links (ranks on one node) or with ``nbytes == 0`` completes at
its start time.  Completions at the same time are returned in the order the
flows were added (deterministic whenever the engine's event order is).

Incremental use by an event engine::

    net = FluidNetwork(capacities)          # link id -> bytes/second
    net.add_flow(t, "m1", links, nbytes)
    while (nxt := net.next_completion()) is not None:
        t, fid = nxt
        net.advance_to(t); net.remove(fid)  # the message's last byte arrives at t
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping

__all__ = ["FluidNetwork", "max_min_rates", "simulate_flows"]

FlowId = Hashable
LinkId = Hashable

_REL_EPS = 1e-12


def max_min_rates(flows: Mapping[FlowId, tuple[LinkId, ...]],
                  capacity: Mapping[LinkId, float],
                  weights: Mapping[FlowId, float] | None = None) -> dict[FlowId, float]:
    """Max-min fair rates (bytes/second) of *flows* (id -> links) on *capacity*.

    With *weights* (flow id -> weight > 0; missing flows weigh 1) the
    allocation is weighted max-min: a link's level is ``residual / unfrozen
    weight`` and a flow frozen there gets ``level * weight`` (Bertsekas &
    Gallager Sec. 6.5.2, weighted form; SimGrid's LMM with penalty ``1 /
    weight``).  Flows with no links get ``math.inf``.  Raises ``KeyError``
    naming a link without a capacity.
    """
    weight = {fid: 1.0 for fid in flows}
    if weights is not None:
        weight.update((fid, float(w)) for fid, w in weights.items() if fid in weight)
    rates: dict[FlowId, float] = {}
    residual: dict[LinkId, float] = {}
    users: dict[LinkId, list[FlowId]] = {}
    for fid, links in flows.items():
        if not links:
            rates[fid] = math.inf
            continue
        for link in links:
            if link not in residual:
                if link not in capacity:
                    raise KeyError(f"flow {fid!r} crosses link {link!r} that has no capacity")
                residual[link] = float(capacity[link])
                users[link] = []
            users[link].append(fid)
    order = {link: i for i, link in enumerate(residual)}   # deterministic tie-break
    unfrozen = {link: list(fids) for link, fids in users.items()}
    while unfrozen:
        level = {lk: residual[lk] / sum(weight[f] for f in fids) for lk, fids in unfrozen.items()}
        link = min(level, key=lambda lk: (level[lk], order[lk]))
        for fid in unfrozen.pop(link):
            rates[fid] = rate = level[link] * weight[fid]
            for other in flows[fid]:
                if other in unfrozen:
                    residual[other] -= rate
                    unfrozen[other].remove(fid)
                    if not unfrozen[other]:
                        del unfrozen[other]
    return rates


class FluidNetwork:
    """Flows sharing link capacities max-min fairly; advanced by an event engine.

    *capacity* maps link id -> bytes/second (e.g. ``model.links()`` values'
    first element).  Time is float seconds and only moves forward.
    """

    def __init__(self, capacity: Mapping[LinkId, float], now: float = 0.0) -> None:
        for link, cap in capacity.items():
            if not (isinstance(cap, (int, float)) and cap > 0):
                raise ValueError(f"link {link!r}: capacity must be > 0, got {cap!r}")
        self.capacity = dict(capacity)
        self.now = float(now)
        self._links: dict[FlowId, tuple[LinkId, ...]] = {}
        self._left: dict[FlowId, float] = {}
        self._rate: dict[FlowId, float] = {}
        self._seq: dict[FlowId, int] = {}
        self._weight: dict[FlowId, float] = {}
        self._counter = 0

    def __len__(self) -> int:
        return len(self._links)

    def __repr__(self) -> str:
        return f"<FluidNetwork t={self.now} flows={len(self._links)} links={len(self.capacity)}>"

    def rate(self, flow_id: FlowId) -> float:
        """Current rate (bytes/second) of *flow_id*."""
        return self._rate[flow_id]

    def remaining(self, flow_id: FlowId) -> float:
        """Bytes *flow_id* still has to move at :attr:`now`."""
        return self._left[flow_id]

    def add_flow(self, t: float, flow_id: FlowId, links: Iterable[LinkId], nbytes: float,
                 weight: float = 1.0) -> None:
        """Start *flow_id* at time *t* over *links* (duplicates ignored) with *nbytes*.

        *weight* is its claim in weighted max-min sharing (see :func:`max_min_rates`).
        """
        if not (weight > 0 and math.isfinite(weight)):
            raise ValueError(f"flow {flow_id!r}: weight must be finite and > 0, got {weight!r}")
        if flow_id in self._links:
            raise ValueError(f"flow {flow_id!r} already active")
        if not (nbytes >= 0 and math.isfinite(nbytes)):
            raise ValueError(f"flow {flow_id!r}: nbytes must be finite and >= 0, got {nbytes!r}")
        path = tuple(dict.fromkeys(links))
        for link in path:
            if link not in self.capacity:
                raise KeyError(f"flow {flow_id!r} crosses link {link!r} that has no capacity")
        self.advance_to(t)
        self._links[flow_id] = path
        self._left[flow_id] = float(nbytes)
        self._seq[flow_id] = self._counter
        self._weight[flow_id] = float(weight)
        self._counter += 1
        self._recompute()

    def remove(self, flow_id: FlowId) -> None:
        """Take *flow_id* out (finished or cancelled) and reshare the bandwidth."""
        if flow_id not in self._links:
            raise KeyError(f"flow {flow_id!r} is not active")
        del self._links[flow_id], self._left[flow_id], self._rate[flow_id], self._seq[flow_id]
        del self._weight[flow_id]
        self._recompute()

    def _recompute(self) -> None:
        self._rate = max_min_rates(self._links, self.capacity, self._weight)

    def _finish(self, fid: FlowId) -> float:
        left, rate = self._left[fid], self._rate[fid]
        if left <= 0.0 or rate == math.inf:
            return self.now
        return self.now + left / rate

    def next_completion(self) -> tuple[float, FlowId] | None:
        """``(time, flow id)`` of the next flow to finish at current rates, or ``None``.

        Ties go to the flow added first.
        """
        best: tuple[float, int, FlowId] | None = None
        for fid in self._links:
            cand = (self._finish(fid), self._seq[fid], fid)
            if best is None or cand[:2] < best[:2]:
                best = cand
        return None if best is None else (best[0], best[2])

    def advance_to(self, t: float) -> None:
        """Move the clock to *t*, draining every flow at its rate.

        Raises ``ValueError`` if *t* is in the past or beyond the next
        completion (that flow must be removed first).
        """
        if t < self.now:
            raise ValueError(f"cannot go back in time from {self.now} to {t}")
        if t == self.now or not self._links:
            self.now = max(self.now, t)
            return
        nxt = self.next_completion()
        if nxt is not None and t > nxt[0] + _REL_EPS * max(1.0, abs(nxt[0])):
            raise ValueError(f"advance_to({t}) would skip completion of flow {nxt[1]!r} "
                             f"at {nxt[0]}; remove it first")
        dt = t - self.now
        for fid in self._links:
            rate, left = self._rate[fid], self._left[fid]
            # a flow due by t is done: snap to 0 instead of keeping float noise
            self._left[fid] = 0.0 if rate == math.inf or left <= rate * dt else left - rate * dt
        self.now = t


def simulate_flows(flows: Iterable[tuple[FlowId, Iterable[LinkId], float, float]],
                   capacity: Mapping[LinkId, float],
                   weights: Mapping[FlowId, float] | None = None) -> dict[FlowId, float]:
    """Finish time of every flow ``(id, links, nbytes, start)`` under max-min sharing.

    *weights* (flow id -> weight, default 1) makes it weighted max-min.
    Starts and completions are processed in time order; at equal times
    completions come first, then starts in the given order.
    """
    pending = sorted(((float(start), i, fid, tuple(links), nbytes)
                      for i, (fid, links, nbytes, start) in enumerate(flows)),
                     key=lambda p: (p[0], p[1]))
    net = FluidNetwork(capacity, now=pending[0][0] if pending else 0.0)
    done: dict[FlowId, float] = {}
    i = 0
    while i < len(pending) or len(net):
        nxt = net.next_completion()
        if nxt is not None and (i == len(pending) or nxt[0] <= pending[i][0]):
            t, fid = nxt
            net.advance_to(t)
            net.remove(fid)
            done[fid] = t
        else:
            start, _, fid, links, nbytes = pending[i]
            net.add_flow(start, fid, links, nbytes,
                         1.0 if weights is None else weights.get(fid, 1.0))
            i += 1
    return done
