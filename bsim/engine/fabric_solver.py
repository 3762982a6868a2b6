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

Layout.  Everything the solver walks is a flat array of numbers (a list when run as
Python), so that compiled its loops read C numbers and chase no Python objects.  A flow
in flight has a *slot*, a small int reused after it ends; its numbers (weight, bytes
left, rate, predicted end, ...) sit in per-slot arrays, its link ids in ``_flink`` at
``slot * _stride`` (``_flen`` of them).  Each link keeps the slots crossing it, in the
order they joined, in a segment of ``_ubuf``: ``_ulen`` of them from ``_ustart``, room
for ``_ucap`` (a full segment moves to the end of the buffer with twice the room; a full
buffer is laid out afresh, larger).  The search of a settle and the filling keep their
links and slots in scratch arrays (``_stack``, ``_seen``, ``_flows``).  Python runs this
module as it is; compiled (``setup.py``), the types in ``fabric_solver.pxd`` make the
arrays typed memoryviews and the loops over them C loops, with the same floats in the
same order, so both give the same rates bit for bit.
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
_LONGS = ("_fmark", "_fseq", "_flen")


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
        # the slots crossing each link: a segment of _ubuf (see the module's docstring)
        self._backing: dict[str, Any] = {}   # each array's object, by attribute name
        self._set("_ustart", _longs(n))
        self._set("_ulen", _longs(n))
        self._set("_ucap", _longs(n))
        # room for two slots per link before the first relayout (each relayout walks every
        # link: starting empty, a run's first flows would relay the buffer at every doubling)
        self._set("_ubuf", _longs(2 * n))
        self._uend = 0
        self._seen = _longs(n)       # scratch: the links of the touched components
        self._stack = _longs(0)      # scratch: the search's links to visit
        # per slot: the arrays of _DOUBLES and _LONGS, the link ids (_flink) and scratch
        self._stride = 1
        self._set("_flink", _longs(0))
        self._free: list[int] = []
        self._nslots = 0
        self._slotcap = 0
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
        n, k = len(self._backing["_ulen"]), len(caps)
        for name, fill in (("_capd", 0.0), ("_residual", 0.0), ("_count", 0.0),
                           ("_wsum", -1.0), ("_link_mark", 0)):
            old = getattr(self, name)
            new = _longs(n + k) if name == "_link_mark" else _doubles(n + k, fill)
            for i in range(n):   # element by element: a typed memoryview when compiled
                new[i] = old[i]
            setattr(self, name, new)
        for i, c in enumerate(caps):
            self._capd[n + i] = c
        for name in ("_ustart", "_ulen", "_ucap"):   # no slot and no room yet: 0, 0, 0
            new = _longs(n + k)
            new[:n] = self._backing[name]
            self._set(name, new)
        self._seen = _longs(n + k)

    def _set(self, name: str, new: Any) -> None:
        """Array *new* as attribute *name* (a typed memoryview when compiled), its object
        kept in ``_backing`` for copying it."""
        self._backing[name] = new
        setattr(self, name, new)

    def _grow(self, size: int) -> None:
        """Room for *size* slots: each per-slot array copied into a larger one."""
        for name in _DOUBLES + _LONGS:
            old = self._backing.get(name)
            new = _doubles(size) if name in _DOUBLES else _longs(size)
            if old is not None:
                new[:len(old)] = old
            self._set(name, new)
        flink = _longs(size * self._stride)
        flink[:self._slotcap * self._stride] = self._backing["_flink"]
        self._set("_flink", flink)
        self._flows = _longs(size)
        self._slotcap = size

    def _restride(self, stride: int) -> None:
        """Room for *stride* link ids per slot in ``_flink``: each slot's ids moved."""
        old, step = self._backing["_flink"], self._stride
        flen = self._backing["_flen"]
        new = _longs(self._slotcap * stride)
        for s in range(self._nslots):
            new[s * stride:s * stride + flen[s]] = old[s * step:s * step + flen[s]]
        self._set("_flink", new)
        self._stride = stride

    def _room(self, lk) -> None:  # lk: int
        """Link *lk*'s segment of ``_ubuf`` is full: move it to the end with twice the
        room, or lay every link out afresh in a larger buffer when the end is reached."""
        ustart = self._ustart
        ucap = self._ucap
        ubuf = self._ubuf
        n = self._ulen[lk]
        room = 2 * n if n else 2
        end = self._uend
        if end + room <= len(ubuf):
            a = ustart[lk]
            for i in range(n):
                ubuf[end + i] = ubuf[a + i]
            ustart[lk] = end
            ucap[lk] = room
            self._uend = end + room
            return
        ucap[lk] = room
        self._relayout()

    def _relayout(self) -> None:
        """Every link's segment copied, in link order, into a buffer twice the room the
        segments ask for (``_ucap``)."""
        ustart = self._backing["_ustart"]
        ulen = self._backing["_ulen"]
        ucap = self._backing["_ucap"]
        old = self._backing["_ubuf"]
        new = _longs(2 * sum(ucap))
        end = 0
        for i in range(len(ucap)):
            n = ulen[i]
            new[end:end + n] = old[ustart[i]:ustart[i] + n]
            ustart[i] = end
            end += ucap[i]
        self._set("_ubuf", new)
        self._uend = end

    def _open(self, links: tuple, w: float, left: float, t: float, seq):  # seq: int; -> int
        """A slot for a flow of weight *w* with *left* bytes over *links*, joining at *t*
        with sequence number *seq*; it is added to its links' users."""
        free = self._free
        if free:
            s = free.pop()
        else:
            s = self._nslots
            if s == self._slotcap:
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
        m = len(links)
        if m > self._stride:
            self._restride(m)
        self._flen[s] = m
        k = s * self._stride
        flink = self._flink
        ustart = self._ustart
        ulen = self._ulen
        ucap = self._ucap
        wsum = self._wsum
        for lk in links:
            flink[k] = lk
            k += 1
            n = ulen[lk]
            if n == ucap[lk]:
                self._room(lk)
            self._ubuf[ustart[lk] + n] = s
            ulen[lk] = n + 1
            wsum[lk] = -1.0
        return s

    def _close(self, s):  # s: int; -> bool
        """Slot *s*'s flow has ended: off its links' users (the later ones move up), and
        the slot free.  Whether another flow still crosses one of its links (if none, no
        rate changes: its component was the flow alone)."""
        ubuf = self._ubuf
        ustart = self._ustart
        ulen = self._ulen
        wsum = self._wsum
        shared = False
        k = s * self._stride
        for lk in self._flink[k:k + self._flen[s]]:
            i = ustart[lk]
            end = i + ulen[lk] - 1
            while ubuf[i] != s:
                i += 1
            while i < end:
                ubuf[i] = ubuf[i + 1]
                i += 1
            ulen[lk] = end - ustart[lk]
            if end > ustart[lk]:
                shared = True
            wsum[lk] = -1.0
        self._flen[s] = 0
        self._free.append(s)
        return shared

    def _ends_at(self, s, t: float):  # s: int; -> bool
        """Whether slot *s*'s flow is predicted to end at *t* (a heap entry is current)."""
        return self._ffinish[s] == t

    def _resolve(self, dirty: list, epoch) -> None:  # epoch: int
        """New rates for the components of the links in *dirty* (tuples of link ids whose
        flows changed): a depth-first search over links and the flows crossing them,
        each visited once per *epoch*, then :meth:`_fill` over what it found."""
        need = self._nslots * self._stride   # each slot pushes its links at most once
        for links in dirty:
            need += len(links)
        if need > len(self._stack):
            self._stack = _longs(2 * need)
        stack = self._stack
        ubuf = self._ubuf
        ustart = self._ustart
        ulen = self._ulen
        mark = self._link_mark
        fmark = self._fmark
        flink = self._flink
        flen = self._flen
        stride = self._stride
        seen = self._seen     # links of the touched components
        flows = self._flows   # slots of the touched components
        top = 0
        for links in dirty:
            for lk in links:
                stack[top] = lk
                top += 1
        nseen = 0
        nflows = 0
        while top:
            top -= 1
            lk = stack[top]
            if mark[lk] == epoch:
                continue
            mark[lk] = epoch
            n = ulen[lk]
            if n:
                seen[nseen] = lk
                nseen += 1
                a = ustart[lk]
                for s in ubuf[a:a + n]:
                    if fmark[s] != epoch:
                        fmark[s] = epoch
                        flows[nflows] = s
                        nflows += 1
                        k = s * stride
                        for lk in flink[k:k + flen[s]]:   # (a link marked already
                            if mark[lk] != epoch:         # would be skipped)
                                stack[top] = lk
                                top += 1
        if nflows:
            self._fill(nseen, nflows)

    def _fill(self, nseen, nflows) -> None:  # nseen, nflows: int
        """New rates over a union of components (the first *nseen* links of ``_seen``
        and *nflows* slots of ``_flows``: :meth:`_fill_shared`, or :meth:`_fill_alone`
        for a lone flow), then new completion predictions.

        Progressive filling: repeatedly take the link with the smallest fair share ``residual /
        unfrozen weight`` (a heap; shares only grow as flows freeze, so a
        stale entry is pushed back with its current share), freeze each of
        its unfrozen flows at ``share * weight`` and charge that to their
        other links.  Weights are 1 under ``share=equal`` (plain max-min) and
        ``1 / route latency`` under ``share=latency`` (weighted max-min).
        Links of equal shares go in the order they were queued.
        """
        flows = self._flows
        if nflows == 1:   # a flow alone on its links (most fills of a wavefront)
            self._fill_alone(nseen, flows[0])
        else:
            self._fill_shared(nseen)
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
        for s in flows[:nflows]:
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

    def _fill_alone(self, nseen, s) -> None:  # nseen, s: int
        """:meth:`_fill` for a component of one flow: its rate is its smallest share,
        ``(min capacity / n) * w`` with ``n`` the weight on each of its links (its own
        ``w``, or 1 under ``share=equal``), the same float progressive filling gives (a
        division by one positive ``n`` keeps the order of the capacities)."""
        w = self._fw[s]
        cap = self._capd
        seen = self._seen
        if self._weighted:
            n = w
            wsum = self._wsum
            for lk in seen[:nseen]:
                wsum[lk] = w
        else:
            n = 1.0
        best = math.inf
        for lk in seen[:nseen]:
            c = cap[lk]
            if c < best:
                best = c
        self._fnew[s] = (best / n) * w

    def _fill_shared(self, nseen) -> None:  # nseen: int
        """:meth:`_fill`'s progressive filling of a component of several flows."""
        ubuf = self._ubuf
        ustart = self._ustart
        ulen = self._ulen
        cap = self._capd
        residual = self._residual
        count = self._count
        fw = self._fw
        fnew = self._fnew
        flink = self._flink
        flen = self._flen
        stride = self._stride
        # links by fair share: a heap of distinct shares (floats) and the links at
        # each, so that no tuple is allocated per link
        heap: list = []
        at: dict = {}
        weighted = self._weighted
        wsum = self._wsum
        last = -1.0   # the share of `bucket`, the bucket last used (shares are > 0)
        bucket = None
        for lk in self._seen[:nseen]:
            a = ustart[lk]
            if weighted:
                n = wsum[lk]
                if n < 0.0:   # summed again only once the link's flows changed
                    n = sum([fw[s] for s in ubuf[a:a + ulen[lk]]], 0.0)
                    wsum[lk] = n
            else:
                n = ulen[lk]
            c = cap[lk]
            residual[lk] = c
            count[lk] = n
            share = c / n
            if share != last:   # (links in a row often share a share: no dict lookup)
                bucket = at.get(share)
                if bucket is None:
                    bucket = at[share] = []
                    heap.append(share)
                last = share
            bucket.append(lk)
        heapify(heap)
        while heap:
            share = heappop(heap)
            last = -1.0   # (the bucket last used may be the one popped)
            for lk in at.pop(share):
                n = count[lk]
                if n <= 0.0:
                    continue
                current = residual[lk] / n
                if current != share:   # changed since queued: queue again at its share
                    if current != last:
                        bucket = at.get(current)
                        if bucket is None:
                            bucket = at[current] = []
                            heappush(heap, current)
                        last = current
                    bucket.append(lk)
                    continue
                a = ustart[lk]
                for s in ubuf[a:a + ulen[lk]]:
                    if fnew[s] >= 0.0:
                        continue
                    w = fw[s]
                    rate = share * w
                    fnew[s] = rate
                    k = s * stride
                    for other in flink[k:k + flen[s]]:
                        residual[other] -= rate
                        count[other] -= w
