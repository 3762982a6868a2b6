# cython: boundscheck=False, wraparound=False
"""The rates of the fluid contention layer: weighted max-min fairness by progressive filling.

:class:`MaxMinSolver` is the part of :class:`~bsim.engine.fabric.ContentionLayer` that
holds the flows' numbers and, for the flows of the components a settle touched, computes
their max-min fair rates (``netmodels/maxmin.py`` states the model; ``docs/networks.md``,
"Contention") and predicts when each ends.  Progressive filling (Bertsekas and Gallager,
*Data Networks*, Sec. 6.5.2): raise every unfrozen flow's rate in proportion to its weight
until a link is full, freeze the flows crossing it, repeat.  Weights are 1 under
``share=equal`` and ``1 / route latency`` under ``share=latency`` (SimGrid's CM02).  A
flow alone on its links gets its route's smallest capacity, which is what filling gives in
one step, computed directly.

Layout.  A flow in flight has a *slot*, a small int reused after it ends; its numbers
(weight, bytes left, rate, predicted end, ...) sit in flat arrays of doubles and longs
(lists when run as Python) indexed by the slot, and each link keeps the list of the
slots crossing it, in the order they joined.  Python runs this module as it is;
compiled (``setup.py``), the types in ``fabric_solver.pxd`` make the arrays C arrays and
the loops over them C loops, with the same floats in the same order, so both give the
same rates bit for bit.
"""

from __future__ import annotations

import math
from array import array
from heapq import heapify, heappop, heappush
from types import FunctionType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .core import Engine

__all__ = ["MaxMinSolver"]


_DOUBLES = ("_fw", "_fnew", "_fleft", "_frate", "_ftupd", "_ffinish")
_LONGS = ("_fmark", "_fseq")


def _running_compiled() -> bool:
    """Whether this module runs compiled: its functions are then not Python functions."""
    return not isinstance(_running_compiled, FunctionType)


# compiled, the per-slot and per-link numbers are arrays (the buffers the typed memoryviews
# of fabric_solver.pxd read); as Python, lists, which the interpreter indexes faster
_ARRAYS = _running_compiled()


def _doubles(n: int, value: float = 0.0) -> Any:
    return array("d", [value]) * n if _ARRAYS else [value] * n


def _longs(n: int) -> Any:
    return array("l", [0]) * n if _ARRAYS else [0] * n


class MaxMinSolver:
    """The flows' numbers, their rates and their completion predictions (the base of the
    contention layer)."""

    engine: Engine

    def _init_solver(self, cap: list[float], weighted: bool) -> None:
        """Per-link state for links of capacities *cap* (bytes/s, by link id) and no
        flow; *weighted*: ``share=latency``."""
        n = len(cap)
        self._weighted = weighted
        self._capd = _doubles(n)
        for lk, c in enumerate(cap):
            self._capd[lk] = c
        self._residual = _doubles(n)
        self._count = _doubles(n)    # unfrozen weight per link while filling
        # share=latency: the weight of the flows crossing each link, summed when the
        # solver first needs it after the link's flows changed (-1.0: to be summed)
        self._wsum = _doubles(n, -1.0)
        self._link_mark = _longs(n)
        self._users: list[list[int] | None] = [None] * n   # slots crossing each link
        # per slot: the arrays of _DOUBLES and _LONGS, and the flow's link ids
        self._flinks: list[tuple[int, ...]] = []
        self._free: list[int] = []
        self._nslots = 0
        self._backing: dict[str, Any] = {}
        self._grow(64)
        # predicted completions: a heap of times (floats, not tracked by the garbage
        # collector) and the seqs of the flows predicted to end at each; an entry is
        # stale unless its flow is still live with that end
        self._heap: list[float] = []
        self._due: dict[float, list[int]] = {}
        self.recomputed = 0

    def _add_links(self, caps: list[float]) -> None:
        """Links of capacities *caps* added (numbered after the others), with no flow: each
        per-link array copied into a longer one."""
        n, k = len(self._users), len(caps)
        for name, fill in (("_capd", 0.0), ("_residual", 0.0), ("_count", 0.0),
                           ("_wsum", -1.0), ("_link_mark", 0)):
            old = getattr(self, name)
            new = _longs(n + k) if name == "_link_mark" else _doubles(n + k, fill)
            for i in range(n):   # element by element: a typed memoryview when compiled
                new[i] = old[i]
            setattr(self, name, new)
        for i, c in enumerate(caps):
            self._capd[n + i] = c
        self._users.extend([None] * k)

    def _grow(self, size: int) -> None:
        """Room for *size* slots: each per-slot array copied into a larger one."""
        for name in _DOUBLES + _LONGS:
            old = self._backing.get(name)
            new = _doubles(size) if name in _DOUBLES else _longs(size)
            if old is not None:
                new[:len(old)] = old
            self._backing[name] = new
            setattr(self, name, new)
        self._flinks.extend([()] * (size - len(self._flinks)))

    def _open(self, links: tuple[int, ...], w: float, left: float, t: float,
              seq: int) -> int:
        """A slot for a flow of weight *w* with *left* bytes over *links*, joining at *t*
        with sequence number *seq*; it is added to its links' users."""
        free = self._free
        if free:
            s = free.pop()
        else:
            s = self._nslots
            if s == len(self._flinks):
                self._grow(2 * s)
            self._nslots = s + 1
        self._fw[s] = w
        self._fnew[s] = -1.0
        self._fleft[s] = left
        self._frate[s] = 0.0
        self._ftupd[s] = t
        self._ffinish[s] = math.inf
        self._fmark[s] = 0
        self._fseq[s] = seq
        self._flinks[s] = links
        users = self._users
        wsum = self._wsum
        for lk in links:
            crossing = users[lk]
            if crossing is None:
                users[lk] = [s]
            else:
                crossing.append(s)
            wsum[lk] = -1.0
        return s

    def _close(self, s) -> None:  # s: int
        """Slot *s*'s flow has ended: off its links' users, and the slot free."""
        users = self._users
        wsum = self._wsum
        for lk in self._flinks[s]:
            users[lk].remove(s)  # type: ignore[union-attr]
            wsum[lk] = -1.0
        self._flinks[s] = ()
        self._free.append(s)

    def _ends_at(self, s, t: float):  # s: int; -> bool
        """Whether slot *s*'s flow is predicted to end at *t* (a heap entry is current)."""
        return self._ffinish[s] == t

    def _resolve(self, dirty: list, epoch) -> None:  # epoch: int
        """New rates for the components of the links in *dirty* (tuples of link ids whose
        flows changed): a depth-first search over links and the flows crossing them,
        each visited once per *epoch*, then :meth:`_fill` over what it found."""
        users = self._users
        mark = self._link_mark
        fmark = self._fmark
        flinks = self._flinks
        stack: list = []
        for links in dirty:
            stack.extend(links)
        seen: list = []      # links of the touched components
        flows: list = []     # slots of the touched components
        while stack:
            lk = stack.pop()
            if mark[lk] == epoch:
                continue
            mark[lk] = epoch
            crossing = users[lk]
            if crossing:
                seen.append(lk)
                for s in crossing:
                    if fmark[s] != epoch:
                        fmark[s] = epoch
                        flows.append(s)
                        for lk in flinks[s]:   # (a link marked already would be skipped)
                            if mark[lk] != epoch:
                                stack.append(lk)
        if flows:
            self._fill(seen, flows)

    def _fill(self, seen: list, flows: list) -> None:
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
        fheap = self._heap
        due = self._due
        fnew = self._fnew
        frate = self._frate
        fleft = self._fleft
        ftupd = self._ftupd
        ffinish = self._ffinish
        fseq = self._fseq
        changed = 0
        for s in flows:
            rate = fnew[s]
            fnew[s] = -1.0
            old = frate[s]
            if rate == old:
                continue   # same rate: the old prediction stands
            left = fleft[s] - old * (now - ftupd[s])
            if left < 0.0:
                left = 0.0
            fleft[s] = left
            ftupd[s] = now
            frate[s] = rate
            finish = now + left / rate
            ffinish[s] = finish
            bucket = due.get(finish)
            if bucket is None:
                due[finish] = [fseq[s]]
                heappush(fheap, finish)
            else:
                bucket.append(fseq[s])
            changed += 1
        self.recomputed += changed

    def _fill_alone(self, seen: list, s) -> None:  # s: int
        """:meth:`_fill` for a component of one flow: its rate is its smallest share,
        ``(min capacity / n) * w`` with ``n`` the weight on each of its links (its own
        ``w``, or 1 under ``share=equal``), the same float progressive filling gives (a
        division by one positive ``n`` keeps the order of the capacities)."""
        w = self._fw[s]
        cap = self._capd
        if self._weighted:
            n = w
            wsum = self._wsum
            for lk in seen:
                wsum[lk] = w
        else:
            n = 1.0
        best = math.inf
        for lk in seen:
            c = cap[lk]
            if c < best:
                best = c
        self._fnew[s] = (best / n) * w

    def _fill_shared(self, seen: list, flows: list) -> None:
        """:meth:`_fill`'s progressive filling of a component of several flows."""
        users = self._users
        cap = self._capd
        residual = self._residual
        count = self._count
        fw = self._fw
        fnew = self._fnew
        flinks = self._flinks
        # links by fair share: a heap of distinct shares (floats) and the links at
        # each, so that no tuple is allocated per link
        heap: list = []
        at: dict = {}
        weighted = self._weighted
        wsum = self._wsum
        for lk in seen:
            crossing = users[lk]
            if weighted:
                n = wsum[lk]
                if n < 0.0:   # summed again only once the link's flows changed
                    n = sum([fw[s] for s in crossing], 0.0)
                    wsum[lk] = n
            else:
                n = len(crossing)
            c = cap[lk]
            residual[lk] = c
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
                if n <= 0.0:
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
                crossing = users[lk]
                for s in crossing:
                    if fnew[s] >= 0.0:
                        continue
                    w = fw[s]
                    rate = share * w
                    fnew[s] = rate
                    for other in flinks[s]:
                        residual[other] -= rate
                        count[other] -= w
