"""The links of the fluid fabric and the paths of messages over them.

:class:`LinkTable` numbers a network model's links once (the solver's state is
kept in lists indexed by these small ints) and turns a message into its
*paths*: ``((link ids, share of the bytes, 1 / min capacity, weight, latency),
...)``, one per route it is striped over.  ``latency`` is the sum of the
route's link latencies; ``weight`` is the flow's claim in the max-min sharing:
1 for every flow (``share=equal``), or ``1 / latency`` (``share=latency``,
SimGrid's CM02 weighting; see :meth:`LinkTable.weight`).  Three sources, from the model
(``bsim/engine/fabric.py`` explains the model):

* ``route(src, dst)`` (topology models) or ``rail_routes(src, dst)`` (fat-tree
  rails): one route, or one per rail used, each carrying an equal share;
  cached per rank pair (at most ``PATHS_CACHE_LIMIT`` pairs);
* fat-tree ``routing=adaptive``: ``route_nodes_adaptive`` picks the up ports
  per message from the current link loads (not cached);
* ``contention_flows(src, dst, nbytes)`` (``twolevel``'s shared NICs): the
  model gives the links and the bytes of each part;
* a flat model (Hockney, LogGP, piecewise, ...; no links): :class:`FlatNics`,
  each rank's NIC is a sending and a receiving link (:meth:`LinkTable.flat_paths`, the
  pair's links kept per rank pair, the size asked of the model per message).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .fabric_options import SHARES

if TYPE_CHECKING:
    from netmodels.base import NetworkModel

    from .rank import VirtualRank

__all__ = ["LinkTable", "FlatNics", "Flow", "Paths", "PATHS_CACHE_LIMIT"]

Paths = tuple[tuple[tuple[int, ...], float, float, float, float], ...]
PATHS_CACHE_LIMIT = 1 << 20   # (src, dst) routes kept; dropped when full (all-to-all)


class Flow:
    """Bytes moving over fixed links (int ids) at a rate set by the solver (its numbers
    sit in the solver's arrays at index ``slot``: ``bsim/engine/fabric_solver.py``).

    The first flow of a message also carries the message's bookkeeping
    (``start``, ``alone``, the callback, how many of its flows are still
    running); the others of a striped message point to it as ``head`` (``None``
    on the first: no reference cycle).  Ended flows are recycled by the layer.
    """

    __slots__ = ("links", "seq", "slot", "head", "start", "alone", "owner", "fn", "payload",
                 "parts", "done", "pair", "nxt", "paths", "scale", "late")

    def __init__(self) -> None:
        self.links: tuple[int, ...] = ()
        self.seq = 0
        self.slot = -1        # its numbers' index in the solver's arrays (fabric_solver.py)
        self.head: Flow | None = None
        self.start = 0.0
        self.late = 0.0       # how long after start the flow entered the network
        self.alone = 0.0
        self.owner: VirtualRank | None = None
        self.fn: Callable[..., None] | None = None
        self.payload: Any = None
        self.parts = 1
        self.done: float | None = None
        self.pair = -1
        self.nxt: Flow | None = None    # next message of the same pair (ordered)
        self.paths: Paths = ()
        self.scale = 1.0


class LinkTable:
    """The links of *network* numbered once, and the paths of messages over them.

    Raises ``ValueError`` if the model cannot route (no ``links()``, or
    neither ``route()`` nor ``contention_flows()``), or a link has no capacity.
    """

    def __init__(self, network: NetworkModel, nranks: int, share: str = "equal") -> None:
        if share not in SHARES:
            raise ValueError(f"contention: share must be one of {', '.join(SHARES)}, "
                             f"got {share!r}")
        self.share = share
        links = getattr(network, "links", None)
        self.hook = getattr(network, "contention_flows", None)
        # a flat model's NICs: its paths come from flat_paths (hook is None then)
        self.flat: FlatNics | None = None
        if links is None or not (hasattr(network, "route") or self.hook is not None):
            # a flat model: every rank's NIC is a link (see FlatNics)
            self.flat = nics = FlatNics(network, nranks)
            links = nics.links
        self.nranks = nranks
        self.network = network
        self.link_ids: list[Any] = []
        self.index: dict[Any, int] = {}
        self.cap: list[float] = []
        self.lat: list[float] = []
        self._append_links(links())
        positive = [x for x in self.lat if x > 0.0]
        self._floor = min(positive) if positive else 1.0   # a zero-latency route's stand-in
        self._rail_routes = getattr(network, "rail_routes", None)
        # fat-tree routing=adaptive, dragonfly routing=ugal: the route is chosen per
        # message from the current link loads (number of flows in flight), so routes are
        # not cached
        self.adaptive = (getattr(network, "routing", None) in ("adaptive", "ugal")
                         and hasattr(network, "route_nodes_adaptive"))
        # latency of the last adaptive path beyond the model's own route (charged as delay)
        self.extra = 0.0
        self._route = getattr(network, "route", None)
        self.paths_cache: dict[int, Paths] = {}   # src * nranks + dst -> paths
        # what a path's links imply, per links tuple (hook_paths) or rank pair (flat_paths)
        self.hook_cache: dict[Any, tuple[tuple[int, ...], float, float, float]] = {}
        # flat_paths' last message per rank pair: (nbytes, paths), reused for the same size
        # when the model's wire() is a function of its arguments (no ``shared_state``, such
        # as network noise's counters, which each call advances)
        self.flat_last: dict[int, tuple[int, Paths]] = {}
        self._reuse_sizes = not getattr(network, "shared_state", "")

    def add_ranks(self, nranks: int) -> list[float]:
        """Room for *nranks* ranks in all (``MPI.Comm.Spawn``, once the network has placed
        them): the links of the network's table (or of the flat model's NICs) not known
        yet are appended, and the caches keyed by rank pair emptied (their keys count
        ``nranks``); the new links' capacities, in order."""
        if self.flat is not None:
            self.flat.nranks = nranks
            caps = self._append_links(self.flat.links())
        else:
            caps = self._append_links(self.network.links())
        self.nranks = nranks
        self.paths_cache.clear()
        self.hook_cache.clear()
        self.flat_last.clear()
        return caps

    def _append_links(self, table: dict[Any, tuple[float, float]]) -> list[float]:
        """The links of *table* (``link -> (capacity, latency)``) not known yet, numbered
        after the others; their capacities, in order (each must be > 0)."""
        caps: list[float] = []
        for lk, (bw, lat) in table.items():
            if lk in self.index:
                continue
            cap = float(bw)
            if not cap > 0:
                raise ValueError(f"contention: link {lk!r} has capacity {cap!r}; need > 0")
            self.index[lk] = len(self.link_ids)
            self.link_ids.append(lk)
            self.cap.append(cap)
            self.lat.append(float(lat))
            caps.append(cap)
        return caps

    def weight(self, latency: float) -> float:
        """The max-min weight of a flow whose route's latency is *latency* (:meth:`latency`).

        ``share=equal``: 1 (every flow has the same claim on a link: max-min
        fairness, Bertsekas & Gallager Sec. 6.5.2).  ``share=latency``:
        ``1 / sum of the route's link latencies``, so a link's capacity is
        split in inverse proportion to the flows' route latencies -- TCP's
        RTT unfairness, as SimGrid's CM02 model sets each flow's sharing
        penalty to its route latency (Casanova & Marchal 2002; SimGrid
        ``network_cm02.cpp``).  A route of zero latency counts as the
        smallest positive link latency of the network.
        """
        if self.share == "equal":
            return 1.0
        return 1.0 / (latency if latency > 0.0 else self._floor)

    def latency(self, ids: Sequence[int]) -> float:
        """Sum of the latencies of links *ids* (0 for a flat model's NICs)."""
        return sum([self.lat[i] for i in ids])

    def _paths(self, routes: list[Any], share: float | None = None) -> Paths:
        out = []
        for links in routes:
            if links:
                ids, inverse, weight, latency = self._implied(links)
                out.append((ids, share if share is not None else 1.0 / len(routes),
                            inverse, weight, latency))
        return tuple(out)

    def hook_paths(self, src: int, dst: int, nbytes: int) -> Paths:
        """Paths from the model's ``contention_flows`` (shares in bytes).

        What a path's links imply (link ids, inverse bottleneck capacity, weight,
        latency) is kept per links tuple: the model is asked for every message, as
        its sizes (and, for all we know, its links) may depend on *nbytes*."""
        assert self.hook is not None
        known = self.hook_cache
        out = []
        for links, size in self.hook(src, dst, nbytes):
            if links and size > 0:
                try:
                    implied = known.get(links)
                except TypeError:   # unhashable links (a list): not kept
                    implied = self._implied(links)
                if implied is None:
                    if len(known) >= PATHS_CACHE_LIMIT:
                        known.clear()
                    implied = known[links] = self._implied(links)
                ids, inverse, weight, latency = implied
                out.append((ids, float(size), inverse, weight, latency))
        return tuple(out)

    def flat_paths(self, src: int, dst: int, nbytes: int) -> Paths:
        """A flat model's message as one path over its two NICs (:class:`FlatNics`), its
        share the lone transfer time ``wire(s) - wire(0)`` in seconds; ``()`` to oneself or
        when that time is not positive.  What the NIC pair implies (ids, inverse capacity,
        weight, latency) is kept per rank pair (in :attr:`hook_cache`, keyed by the int
        ``src * nranks + dst``): the hot path of contention on a star or flat model."""
        if src == dst:
            return ()
        key = src * self.nranks + dst
        last = self.flat_last.get(key)
        if last is not None and last[0] == nbytes:   # the pair's size again (a halo, a sweep)
            return last[1]
        wire = self.network.wire
        size = wire(src, dst, nbytes) - wire(src, dst, 0)
        if not size > 0:
            return ()
        known = self.hook_cache
        implied = known.get(key)
        if implied is None:
            if len(known) >= PATHS_CACHE_LIMIT:
                known.clear()
                self.flat_last.clear()
            implied = known[key] = self._implied((("nic", src, "out"), ("nic", dst, "in")))
        ids, inverse, weight, latency = implied
        paths = ((ids, float(size), inverse, weight, latency),)
        if self._reuse_sizes:
            self.flat_last[key] = (nbytes, paths)
        return paths

    def _implied(self, links: Any) -> tuple[tuple[int, ...], float, float, float]:
        """Link ids of *links* (first occurrences), 1 / their smallest capacity, the
        flow weight and the route latency.  (Ids first, then any repeat dropped: ints hash
        faster than link tuples, the hot path of a run's first message per rank pair.)"""
        index = self.index
        ids = [index[lk] for lk in links]
        if len(set(ids)) != len(ids):
            ids = list(dict.fromkeys(ids))
        cap = self.cap
        latency = self.latency(ids)
        return tuple(ids), 1.0 / min([cap[i] for i in ids]), self.weight(latency), latency

    def adaptive_paths(self, src: int, dst: int, counts: Any) -> Paths:
        """One path per rail used, each chosen by the model from the loads in *counts*
        (flows in flight by link id).

        Sets :attr:`extra` to how much longer (in link latency) the chosen path is than
        the model's own route (``route_nodes``, what its ``cost`` prices), never below 0:
        a dragonfly's UGAL message sent the Valiant way is charged that latency too.
        Fat-tree up ports give routes of one length: 0."""
        net: Any = self.network   # a fat-tree or dragonfly (checked by the routing setting)
        self.extra = 0.0
        a, b = net.node_of(src), net.node_of(dst)
        if a == b:
            return ()
        load = LinkLoad(self.index, counts)
        rails = [0] if getattr(net, "rails", 1) == 1 else \
            sorted({links[0][0] for links in net.rail_routes(src, dst) if links})
        routes = [net.route_nodes_adaptive(a, b, load, rail) for rail in rails]
        paths = self._paths(routes, 1.0 / len(rails))
        if len(routes) == 1:
            base = net.route_nodes(a, b)
            if len(base) != len(routes[0]):
                extra = paths[0][4] - self.latency(tuple(self.index[lk] for lk in base))
                self.extra = extra if extra > 0.0 else 0.0
        return paths

    def pair_paths(self, key: int, src: int, dst: int) -> Paths:
        """The paths of the pair (*src*, *dst*), computed and cached under *key*."""
        if src == dst:
            routes: list[Any] = []
        elif self._rail_routes is not None:   # fat-tree rails: one route per rail used
            routes = list(self._rail_routes(src, dst))
        else:
            assert self._route is not None
            routes = [self._route(src, dst)]
        if len(self.paths_cache) >= PATHS_CACHE_LIMIT:
            self.paths_cache.clear()
        paths = self.paths_cache[key] = self._paths(routes)
        return paths


class FlatNics:
    """Contention on a flat model: each rank's NIC is two links, sending and receiving.

    A flat model has no topology, so the only resource messages can share is
    the end points' network interface: a message from *src* to *dst* is one
    flow over ``("nic", src, "out")`` and ``("nic", dst, "in")`` whose size is
    its lone transfer time ``wire(s) - wire(0)`` (the part that grows with the
    size: ``s/bandwidth`` for Hockney, ``(s-1)G`` for LogGP) on links of one
    second per second.  While ``k`` messages leave one rank (or reach one
    rank) each moves at ``1/k`` of its lone speed: the tutorial's NIC sharing
    (modeling tutorial, "Other Factors Affecting Communication Performance"),
    here per rank since a flat model has no nodes (``twolevel`` shares per node).
    A message to oneself and a model whose wire time does not grow with the size
    (``zero``) make no flow.  Each NIC link's latency is half the model's
    zero-byte wire time (``min_wire() / 2``), so a route's latency is the
    model's (used by ``start=after_latency``).
    """

    CAPACITY = 1.0   # seconds of lone transfer per second

    def __init__(self, network: NetworkModel, nranks: int) -> None:
        self.network = network
        self.nranks = nranks

    def links(self) -> dict[tuple[str, int, str], tuple[float, float]]:
        """``("nic", rank, "out"|"in") -> (1.0, min_wire / 2)`` for every rank."""
        lat = float(self.network.min_wire()) / 2
        return {("nic", r, way): (self.CAPACITY, lat)
                for r in range(self.nranks) for way in ("out", "in")}

    def contention_flows(self, src: int, dst: int, nbytes: int
                         ) -> tuple[tuple[tuple[Any, ...], float], ...]:
        """``((links, lone transfer seconds),)``, or ``()`` for a message to oneself."""
        if src == dst:
            return ()
        wire = self.network.wire
        return (((("nic", src, "out"), ("nic", dst, "in")),
                 wire(src, dst, nbytes) - wire(src, dst, 0)),)


class LinkLoad:
    """Read-only ``link -> flows in flight`` view for adaptive routing."""

    __slots__ = ("_index", "_counts")

    def __init__(self, index: dict[Any, int], counts: Any) -> None:
        self._index = index
        self._counts = counts   # flows in flight by link id

    def get(self, link: Any, default: float = 0.0) -> float:
        """Flows in flight on *link* (*default* for a link the table does not know)."""
        i = self._index.get(link)
        if i is None:
            return default
        return float(self._counts[i])

    def __getitem__(self, link: Any) -> float:
        return self.get(link)

    def __contains__(self, link: Any) -> bool:
        return link in self._index
