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
from .nodes import NODE_PARAMETERS, NodeLayer

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
    """Base class: mapping, intra-node parameters, route cache and the cost skeleton.

    Every subclass also takes the node layer's keys (:data:`~netmodels.nodes.NODE_PARAMETERS`:
    ``nics``, ``devices``, ``nic_policy``, ``device_latency``, ``device_bandwidth``):
    :func:`~netmodels.base.build_network` sets them with :meth:`set_node_layer` after the
    model is built, so a topology's own ``__init__`` need not know them.
    """

    node_parameters = NODE_PARAMETERS
    nics: int | None = None              # the node layer's keys as given (None: not given)
    devices: int | None = None
    nic_policy: str | None = None
    device_latency: float | None = None
    device_bandwidth: float | None = None
    _layer: NodeLayer | None = None      # set by set_node_layer (None: one NIC, one device)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "parameters" in cls.__dict__:   # a topology of its own: give it the node keys
            cls.parameters = {**cls.parameters,
                              **{k: v for k, v in NODE_PARAMETERS.items()
                                 if k not in cls.parameters}}

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
        self._mapping_given = mapping
        self._node: list[int] | None = None
        self._host: list[int] | None = None      # node of each rank (== _node: one NIC)
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

    # -- node layer -----------------------------------------------------------
    def set_node_layer(self, nics: int | None = None, devices: int | None = None,
                       nic_policy: str | None = None, device_latency: float | None = None,
                       device_bandwidth: float | None = None) -> None:
        """Give the nodes several NICs and devices (:mod:`netmodels.nodes`): with
        ``nics = k`` a node owns ``k`` endpoints, so the mapping places ranks on
        ``num_nodes() // k`` nodes.  All None leaves the model as it was built."""
        given = {"nics": nics, "devices": devices, "nic_policy": nic_policy,
                 "device_latency": device_latency, "device_bandwidth": device_bandwidth}
        if all(v is None for v in given.values()):
            return
        if type(self).cost is not TopologyModel.cost:
            raise NetworkSpecError(f"{self.name}: prices its messages itself; it takes no "
                                   f"{', '.join(k for k, v in given.items() if v is not None)}")
        layer = NodeLayer.build(self.name, self.num_nodes(), self.intra_latency,
                                self.intra_bandwidth, **given)
        for key, value in given.items():
            setattr(self, key, value)
        self._layer = layer
        mapping = self._mapping_given
        try:
            self._mapping = build_mapping(mapping, cores_per_node=self.cores,
                                          nodes=self.num_nodes() // layer.nics)
        except MappingError as exc:
            raise NetworkSpecError(f"{self.name}: {exc}") from None
        self._node = self._host = None
        # the layered price and routes shadow the class's (no test on the default hot path)
        self.cost = self._layered_cost   # type: ignore[method-assign]
        self.route = self._layered_route   # type: ignore[method-assign]
        if hasattr(type(self), "rail_routes"):
            self.rail_routes = self._layered_rail_routes   # type: ignore[attr-defined]
        if hasattr(type(self), "route_nodes_adaptive"):
            self.route_nodes_adaptive = self._layered_adaptive   # type: ignore[attr-defined]
        self.route_nodes = self._layered_route_nodes   # type: ignore[method-assign]
        self.group_shape = None   # a translate's costs also depend on devices: not shared

    def num_hosts(self) -> int:
        """Compute nodes: endpoints over NICs a node (``num_nodes()`` with one NIC)."""
        return self.num_nodes() // (self._layer.nics if self._layer else 1)

    def rank_layout(self) -> dict[str, list[int]] | None:
        """Each rank's ``node``, ``device`` and ``nic`` (its NIC's index on its node) after
        :meth:`prepare`; None without a node layer (one NIC and one device a node)."""
        layer = self._layer
        if layer is None or self._host is None:
            return None
        cores = self._mapping.cores
        return {"node": list(self._host),
                "device": [layer.device(c, self.cores) for c in cores],
                "nic": [layer.nic(c, self.cores) for c in cores]}

    # -- mapping ------------------------------------------------------------
    def prepare(self, nranks: int) -> None:
        """Bind the mapping to *nranks* ranks; check nodes exist and are not oversubscribed.

        With a node layer each rank's endpoint is its node's NIC: ``node * nics + nic``."""
        try:
            self._mapping.prepare(nranks)
        except MappingError as exc:
            raise NetworkSpecError(f"{self.name}: {exc}") from None
        nodes = self._mapping.nodes
        total = self.num_hosts()
        if max(nodes) >= total:
            raise NetworkSpecError(f"{self.name}: {nranks} ranks need node {max(nodes)} "
                                   f"but the network has {total} nodes (0..{total - 1})")
        for node, count in self._mapping.ranks_per_node().items():
            if count > self.cores:
                raise NetworkSpecError(f"{self.name}: mapping places {count} ranks on node "
                                       f"{node} but nodes have cores={self.cores}")
        layer = self._layer
        if layer is None:
            self._node = self._host = nodes
            return
        k, cores = layer.nics, self.cores
        self._host = nodes
        self._node = [n * k + layer.nic(c, cores) for n, c in zip(nodes, self._mapping.cores)]
        self._device = [layer.device(c, cores) for c in self._mapping.cores]

    def placement(self) -> list[int] | None:
        return self._host

    def _nodes(self) -> list[int]:
        if self._node is None:
            self.prepare(self.num_hosts() * self.cores)
        return self._node  # type: ignore[return-value]

    def node_of(self, rank: Rank) -> int:
        """Network endpoint of world rank *rank* under this model's mapping: its node, or
        with several NICs a node (:mod:`netmodels.nodes`) the NIC it is bound to."""
        nodes = self._nodes()
        if not 0 <= rank < len(nodes):
            raise NetworkSpecError(f"{self.name}: rank {rank} out of range [0, {len(nodes)})")
        return nodes[rank]

    def _on_one_node(self, src: Rank, dst: Rank) -> bool:
        self.node_of(src), self.node_of(dst)   # prepares, or names a bad rank
        hosts = self._host
        assert hosts is not None
        return hosts[src] == hosts[dst]

    def _layered_cost(self, src: Rank, dst: Rank, nbytes: int) -> SimTime:
        """:meth:`cost` with a node layer: one device, devices of one node, or the network
        from NIC to NIC (:mod:`netmodels.nodes`)."""
        if src == dst:
            return 0.0
        if self._on_one_node(src, dst):
            if self._device[src] == self._device[dst]:
                return self.intra_latency + nbytes / self.intra_bandwidth
            layer = self._layer
            assert layer is not None
            return layer.device_latency + nbytes / layer.device_bandwidth
        a, b = self._node[src], self._node[dst]   # type: ignore[index]
        return self._cached_node_cost(a, b, nbytes)

    def _cached_node_cost(self, a: int, b: int, nbytes: int) -> SimTime:
        """:meth:`node_cost` between nodes *a* and *b*, kept per (a, b, nbytes) in one int
        key (sizes below ``_SIZE_LIMIT``, nodes below ``_NODE_LIMIT``; others computed)."""
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

    def _layered_route(self, src: Rank, dst: Rank) -> tuple[LinkId, ...]:
        """The class's route between NICs; ``()`` between ranks of one node."""
        if self._on_one_node(src, dst):
            return ()
        return type(self).route(self, src, dst)

    def _layered_route_nodes(self, a: int, b: int) -> tuple[LinkId, ...]:
        """:meth:`route_nodes` between NIC endpoints; ``()`` for two NICs of one node."""
        k = self._layer.nics if self._layer else 1
        if a // k == b // k:
            return ()
        return type(self).route_nodes(self, a, b)

    def _layered_adaptive(self, a: int, b: int, load: Any, *args: Any) -> tuple[LinkId, ...]:
        """The class's load-dependent route between NIC endpoints *a* and *b*; ``()`` for
        two NICs of one node (endpoint // nics)."""
        k = self._layer.nics if self._layer else 1
        if a // k == b // k:
            return ()
        return type(self).route_nodes_adaptive(self, a, b, load, *args)  # type: ignore[attr-defined]

    def _layered_rail_routes(self, src: Rank, dst: Rank) -> list[tuple[LinkId, ...]]:
        if self._on_one_node(src, dst):
            return [()]
        return type(self).rail_routes(self, src, dst)   # type: ignore[attr-defined]

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
        return self._cached_node_cost(a, b, nbytes)

    def wire(self, src: Rank, dst: Rank, nbytes: int) -> SimTime:
        return self.cost(src, dst, nbytes)

    def min_cost(self) -> SimTime:
        bounds = [self.min_node_cost()] if self.num_hosts() > 1 else []
        layer = self._layer
        devices = 1 if layer is None else min(layer.devices, self.cores)
        if self.cores > devices or not bounds:   # two rank slots share a device
            bounds.append(self.intra_latency)
        if layer is not None and devices > 1:    # two rank slots on different devices
            bounds.append(layer.device_latency)
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
