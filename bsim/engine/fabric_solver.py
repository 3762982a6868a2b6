"""The rates of the fluid contention layer: weighted max-min fairness by progressive filling.

:class:`MaxMinSolver` is the part of :class:`~bsim.engine.fabric.ContentionLayer` that,
for the flows of the components a settle touched, computes their max-min fair rates
(``netmodels/maxmin.py`` states the model; ``docs/networks.md``, "Contention") and
predicts when each ends.  Progressive filling (Bertsekas and Gallager, *Data Networks*,
Sec. 6.5.2): raise every unfrozen flow's rate in proportion to its weight until a link is
full, freeze the flows crossing it, repeat.  Weights are 1 under ``share=equal`` and ``1 /
route latency`` under ``share=latency`` (SimGrid's CM02).  A flow alone on its links gets
its route's smallest capacity, which is what filling gives in one step, computed directly.
"""

from __future__ import annotations

from heapq import heapify, heappop, heappush
from typing import TYPE_CHECKING

from .fabric_routes import Flow

if TYPE_CHECKING:
    from .core import Engine

__all__ = ["MaxMinSolver"]


class MaxMinSolver:
    """Rates and completion predictions of the flows of touched components (mixed into
    the contention layer, whose per-link state it reads)."""

    engine: Engine
    _users: list[dict[Flow, None] | None]
    _cap: list[float]
    _residual: list[float]
    _count: list[float]
    _wsum: list[float]
    _weighted: bool
    _heap: list[float]
    _due: dict[float, list[int]]
    recomputed: int

    def _fill(self, seen: list[int], flows: list[Flow]) -> None:
        """New rates over a union of components (:meth:`_fill_shared`, or
        :meth:`_fill_alone` for a lone flow), then new completion predictions.

        Progressive filling: repeatedly take the link with the smallest fair share ``residual /
        unfrozen weight`` (a heap; shares only grow as flows freeze, so a
        stale entry is pushed back with its current share), freeze each of
        its unfrozen flows at ``share * weight`` and charge that to their
        other links.  Weights are 1 under ``share=equal`` (plain max-min) and
        ``1 / route latency`` under ``share=latency`` (weighted max-min).
        Ties go to the smaller link number (any order gives the same rates).
        """
        if len(flows) == 1:   # a flow alone on its links (most fills of a wavefront)
            self._fill_alone(seen, flows[0])
        else:
            self._fill_shared(seen, flows)
        now = self.engine._now
        fheap: list = self._heap
        due: dict = self._due
        changed = 0
        for f in flows:
            rate = f.new
            f.new = -1.0
            old = f.rate
            if rate == old:
                continue   # same rate: the old prediction stands
            left = f.left - old * (now - f.t_upd)
            if left < 0.0:
                left = 0.0
            f.left = left
            f.t_upd = now
            f.rate = rate
            finish = f.finish = now + left / rate
            bucket = due.get(finish)
            if bucket is None:
                due[finish] = [f.seq]
                heappush(fheap, finish)
            else:
                bucket.append(f.seq)
            changed += 1
        self.recomputed += changed

    def _fill_alone(self, seen: list[int], f: Flow) -> None:
        """:meth:`_fill` for a component of one flow: its rate is its smallest share,
        ``(min capacity / n) * w`` with ``n`` the weight on each of its links (its own
        ``w``, or 1 under ``share=equal``), the same float progressive filling gives (a
        division by one positive ``n`` keeps the order of the capacities)."""
        w = f.w
        if self._weighted:
            n: float = w
            wsum = self._wsum
            for lk in seen:
                wsum[lk] = w
        else:
            n = 1
        cap = self._cap
        f.new = (min([cap[lk] for lk in seen]) / n) * w

    def _fill_shared(self, seen: list[int], flows: list[Flow]) -> None:
        """:meth:`_fill`'s progressive filling of a component of several flows."""
        users: list = self._users
        cap: list = self._cap
        residual: list = self._residual
        count: list = self._count
        # links by fair share: a heap of distinct shares (floats) and the links at
        # each, so that no tuple is allocated per link
        heap: list = []
        at: dict = {}
        weighted = self._weighted
        wsum: list = self._wsum
        # (the containers' annotations type them under Cython, setup.py)
        crossing: dict
        bucket: list
        for lk in seen:
            crossing = users[lk]
            n: float = wsum[lk] if weighted else len(crossing)
            if n < 0.0:   # share=latency: summed again only once the link's flows changed
                n = sum([f.w for f in crossing], 0.0)
                wsum[lk] = n
            c = residual[lk] = cap[lk]
            count[lk] = n
            share = c / n
            bucket = at.get(share)
            if bucket is None:
                at[share] = [lk]
                heap.append(share)
            else:
                bucket.append(lk)
        heapify(heap)
        while heap:
            share = heappop(heap)
            for lk in at.pop(share):
                n = count[lk]
                if n <= 0:
                    continue
                current = residual[lk] / n
                if current != share:   # changed since queued: queue again at its share
                    bucket = at.get(current)
                    if bucket is None:
                        at[current] = [lk]
                        heappush(heap, current)
                    else:
                        bucket.append(lk)
                    continue
                for f in users[lk]:  # type: ignore[union-attr]
                    if f.new >= 0.0:
                        continue
                    w = f.w
                    rate = f.new = share * w
                    for other in f.links:
                        residual[other] -= rate
                        count[other] -= w
