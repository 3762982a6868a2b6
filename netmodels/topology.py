"""Common base of the topology network models (torus, fat-tree, graph, Blue Waters).

A topology model knows its *nodes* (network endpoints, each with ``cores``
cores) and its directed *links*.  It maps world ranks to nodes with a
:mod:`netmodels.mapping` spec, and answers:

* ``cost(src, dst, nbytes)``: uncontended end-to-end time.  Ranks on the same
  node pay ``intra_latency + nbytes / intra_bandwidth``; a rank to itself pays
  nothing (as in :mod:`netmodels.flat`); ranks on different nodes pay the
  model's :meth:`node_cost`.
* ``route(src_rank, dst_rank)``: the tuple of directed link ids the message
  crosses (empty on one node), for the contention layer
  (:mod:`netmodels.maxmin`).
* ``links()``: link id -> ``(bandwidth, latency)``.

The mapping is bound by ``prepare(nranks)``; a model used before that is
prepared for the whole machine (``nodes * cores`` ranks) on first use.
"""

from __future__ import annotations

from abc import abstractmethod
from collections import Counter
from collections.abc import Hashable, Iterable
from typing import Any

from .base import NetworkModel, NetworkSpecError, Rank, SimTime, check_nonnegative, check_positive
from .mapping import Mapping, MappingError, build_mapping

__all__ = ["LinkId", "TopologyModel", "link_loads", "parse_dims", "MAX_NODES", "check_node_count"]

MAX_NODES = 1 << 22   # nodes a topology may tabulate (coordinates, routes): ~4.2 million


def check_node_count(name: str, nodes: int, shape: str) -> None:
    """Refuse, before allocating, a topology of more than :data:`MAX_NODES` nodes."""
    if nodes > MAX_NODES:
        raise NetworkSpecError(f"{name} {shape}: {nodes:,} nodes is more than the "
                               f"{MAX_NODES:,} bsim tabulates (memory for their coordinates "
                               f"and routes); model a smaller machine")


LinkId = Hashable

# Routes are cached per (src node, dst node); the cache is dropped when it
# reaches this many entries so that all-pairs traffic on 4096 nodes stays bounded.
ROUTE_CACHE_LIMIT = 1 << 20
COST_CACHE_LIMIT = 1 << 16      # (node pair, size) prices kept; emptied when full
_SIZE_LIMIT = 1 << 40           # sizes at or above it (and non-int sizes) are not cached
_NODE_LIMIT = 1 << 24


def parse_dims(model: str, dims: Any) -> tuple[int, ...]:
    """``"16x16x16"`` / ``16`` / ``(16, 16, 16)`` -> tuple of ints >= 1."""
    try:
        if isinstance(dims, str):
            out = tuple(int(p) for p in dims.lower().split("x"))
        elif isinstance(dims, int):
            out = (dims,)
        else:
            out = tuple(int(p) for p in dims)
    except (TypeError, ValueError):
        raise NetworkSpecError(f"{model}: expected dimensions like 16x16x16, got {dims!r}") \
            from None
    if not out or any(p < 1 for p in out):
        raise NetworkSpecError(f"{model}: every dimension must be >= 1, got {dims!r}")
    return out


class TopologyModel(NetworkModel):
    """Base class: mapping, intra-node parameters, route cache and the cost skeleton."""

    common_parameters = {
        "latency": "seconds per message between nodes (end-point/software latency)",
        "intra_latency": "seconds per message between ranks on one node",
        "intra_bandwidth": "bytes/second between ranks on one node",
        "cores": "cores (rank slots) per node",
        "mapping": "rank->node mapping spec: block, roundrobin[:nodes=N], file:PATH, ...",
    }

    def _init_common(self, latency: float, intra_latency: float, intra_bandwidth: float,
                     cores: int, mapping: str | Mapping) -> None:
        check_nonnegative(self.name, latency=latency, intra_latency=intra_latency)
        check_positive(self.name, intra_bandwidth=intra_bandwidth)
        if isinstance(cores, bool) or not isinstance(cores, int) or cores < 1:
            raise NetworkSpecError(f"{self.name}: cores must be an int >= 1, got {cores!r}")
        self.latency = float(latency)
        self.intra_latency = float(intra_latency)
        self.intra_bandwidth = float(intra_bandwidth)
        self.cores = cores
        try:
            self._mapping = build_mapping(mapping, cores_per_node=cores, nodes=self.num_nodes())
        except MappingError as exc:
            raise NetworkSpecError(f"{self.name}: {exc}") from None
        self.mapping = mapping if isinstance(mapping, str) else repr(mapping)
        self._node: list[int] | None = None
        self._route_cache: dict[tuple[int, int], tuple[LinkId, ...]] = {}
        # node_cost by (node pair, size): a message's price is asked at both its ends, and
        # collectives and halos repeat a few sizes between the same nodes
        self._cost_cache: dict[int, SimTime] = {}

    def spec(self) -> str:
        """The spec string that rebuilds this model (strings unquoted, ``None`` left out)."""
        args = ",".join(f"{k}={v}" for k, v in self.params().items() if v is not None)
        return f"{self.name}:{args}" if args else self.name

    # -- what each topology provides -------------------------------------
    @abstractmethod
    def num_nodes(self) -> int:
        """Number of endpoints (compute nodes) of the network."""

    @abstractmethod
    def node_route(self, a: int, b: int) -> tuple[LinkId, ...]:
        """Directed links from node *a* to node *b* (``a != b``), uncached."""

    @abstractmethod
    def node_cost(self, a: int, b: int, nbytes: int) -> SimTime:
        """Uncontended time of *nbytes* from node *a* to node *b* (``a != b``)."""

    @abstractmethod
    def links(self) -> dict[LinkId, tuple[float, float]]:
        """Every directed link: id -> (bandwidth bytes/s, latency seconds)."""

    @abstractmethod
    def min_node_cost(self) -> SimTime:
        """Lower bound of :meth:`node_cost` over distinct nodes and sizes."""

    # -- mapping ------------------------------------------------------------
    def prepare(self, nranks: int) -> None:
        """Bind the mapping to *nranks* ranks; check nodes exist and are not oversubscribed."""
        try:
            self._mapping.prepare(nranks)
        except MappingError as exc:
            raise NetworkSpecError(f"{self.name}: {exc}") from None
        nodes = self._mapping.nodes
        total = self.num_nodes()
        if max(nodes) >= total:
            raise NetworkSpecError(f"{self.name}: {nranks} ranks need node {max(nodes)} "
                                   f"but the network has {total} nodes (0..{total - 1})")
        for node, count in self._mapping.ranks_per_node().items():
            if count > self.cores:
                raise NetworkSpecError(f"{self.name}: mapping places {count} ranks on node "
                                       f"{node} but nodes have cores={self.cores}")
        self._node = nodes

    def placement(self) -> list[int] | None:
        return self._node

    def _nodes(self) -> list[int]:
        if self._node is None:
            self.prepare(self.num_nodes() * self.cores)
        return self._node  # type: ignore[return-value]

    def node_of(self, rank: Rank) -> int:
        """Node hosting world rank *rank* under this model's mapping."""
        nodes = self._nodes()
        if not 0 <= rank < len(nodes):
            raise NetworkSpecError(f"{self.name}: rank {rank} out of range [0, {len(nodes)})")
        return nodes[rank]

    # -- NetworkModel ---------------------------------------------------------
    def cost(self, src: Rank, dst: Rank, nbytes: int) -> SimTime:
        if src == dst:
            return 0.0
        nodes = self._node   # hot path: node_of inlined (one lookup per message end)
        if nodes is None or not (0 <= src < len(nodes) and 0 <= dst < len(nodes)):
            a, b = self.node_of(src), self.node_of(dst)   # prepares, or names the bad rank
        else:
            a, b = nodes[src], nodes[dst]
        if a == b:
            return self.intra_latency + nbytes / self.intra_bandwidth
        if nbytes.__class__ is not int or not 0 <= nbytes < _SIZE_LIMIT or b >= _NODE_LIMIT:
            return self.node_cost(a, b, nbytes)
        key = (a * _NODE_LIMIT + b) * _SIZE_LIMIT + nbytes
        cache = self._cost_cache
        c = cache.get(key)
        if c is None:
            if len(cache) >= COST_CACHE_LIMIT:
                cache.clear()
            c = cache[key] = self.node_cost(a, b, nbytes)
        return c

    def wire(self, src: Rank, dst: Rank, nbytes: int) -> SimTime:
        return self.cost(src, dst, nbytes)

    def min_cost(self) -> SimTime:
        bounds = [self.min_node_cost()] if self.num_nodes() > 1 else []
        if self.cores > 1 or not bounds:
            bounds.append(self.intra_latency)
        return min(bounds)

    def route(self, src: Rank, dst: Rank) -> tuple[LinkId, ...]:
        """Directed link ids crossed by a message from rank *src* to rank *dst*."""
        return self.route_nodes(self.node_of(src), self.node_of(dst))

    def route_nodes(self, a: int, b: int) -> tuple[LinkId, ...]:
        """Cached :meth:`node_route`; ``()`` when ``a == b``."""
        if a == b:
            return ()
        key = (a, b)
        links = self._route_cache.get(key)
        if links is None:
            if len(self._route_cache) >= ROUTE_CACHE_LIMIT:
                self._route_cache.clear()
            links = self._route_cache[key] = self.node_route(a, b)
        return links


def link_loads(model: TopologyModel, pairs: Iterable[tuple[Rank, Rank]]) -> Counter[LinkId]:
    """Number of messages crossing each link when every (src, dst) pair sends once.

    This is the contention count ``C_i`` of the tutorial's
    ``T = sum L_i + max(C_i * (S / N_i) / B_i)`` (modeling tutorial, "Communication
    Pattern Cost").
    """
    loads: Counter[LinkId] = Counter()
    for src, dst in pairs:
        loads.update(model.route(src, dst))
    return loads
