"""Any network given as a networkx graph.

Edges carry ``bandwidth`` (bytes/second per direction) and ``latency``
(seconds) attributes (defaults: the model's ``link_bandwidth`` and
``hop_latency``).  Endpoints are the graph nodes with attribute ``host=True``
or, if no node has it, every node, in the graph's node order: endpoint ``i``
is model node ``i``.  Routes are shortest paths with ``weight="latency"``
(networkx Dijkstra, deterministic for a given graph insertion order),
computed on first use and cached per (src node, dst node) pair, so networkx
is off the hot path after the first message of a pair.

Cost of an uncontended message over path ``e_1..e_h``::

    latency + sum_e latency_e + nbytes / min_e bandwidth_e

(the tutorial's single-message form ``sum L_i + max(S / B_i)``, the modeling tutorial,
"Communication Cost").  Link ids are ``(u, v)``, directed.

Injection gap (``--protocol loggp``): ``gap = nbytes / max_e bandwidth_e`` over the edges
leaving the sender's endpoint, as the torus and fat-tree charge ``nbytes / link
bandwidth``: a node injects one message at a time at the speed of its fastest outgoing
edge (a node with edges of 1 and 10 GB/s is busy ``S / 10 GB/s``).  That never exceeds
the message's own ``S / min bandwidth_e`` (its first edge leaves the sender), so the gap
never outlasts the transfer it spaces; the sum of the edges would let a torus node
inject six messages at once, which the torus model does not.  An endpoint with no
outgoing edge sends nothing between nodes: gap 0.  A three-host
line with a switch, route h0 -> h2::

    h0 ---- sw ---- h2          route: (h0, sw) (sw, h2)
             |
             h1
"""

from __future__ import annotations

from typing import Any

from .base import NetworkSpecError, SimTime, check_nonnegative, check_positive, register
from .mapping import Mapping
from .topology import LinkId, TopologyModel

__all__ = ["GraphNetwork"]


@register
class GraphNetwork(TopologyModel):
    """User graph: ``cost = latency + sum latency_e + s / min bandwidth_e`` on shortest paths;
    ``gap = s / max bandwidth`` of the sender's outgoing edges."""

    name = "graph"
    parameters = {
        "file": "graph file (.graphml, .gml, or edge list); objects: pass graph=",
        "link_bandwidth": "default edge bandwidth, bytes/second",
        "hop_latency": "default edge latency, seconds",
        **TopologyModel.common_parameters,
    }

    def __init__(self, graph: Any = None, file: str | None = None,
                 link_bandwidth: float = 1e10, hop_latency: float = 1e-7,
                 latency: float = 1e-6, intra_latency: float = 5e-7,
                 intra_bandwidth: float = 2e10, cores: int = 1,
                 mapping: str | Mapping = "block") -> None:
        import networkx as nx
        if (graph is None) == (file is None):
            raise NetworkSpecError("graph: give exactly one of graph= (a networkx graph) "
                                   "or file=PATH")
        if file is not None:
            graph = self._read(file)
        if not isinstance(graph, nx.Graph) or graph.number_of_nodes() == 0 \
                or graph.is_multigraph():
            raise NetworkSpecError(f"graph: expected a non-empty networkx Graph or DiGraph "
                                   f"(not a multigraph), got {graph!r}")
        check_positive(self.name, link_bandwidth=link_bandwidth)
        check_nonnegative(self.name, hop_latency=hop_latency)
        self.file = file
        self.link_bandwidth, self.hop_latency = float(link_bandwidth), float(hop_latency)
        self.graph = graph
        hosts = [v for v, d in graph.nodes(data=True) if d.get("host")]
        self.hosts = hosts or list(graph.nodes)
        self._index = {v: i for i, v in enumerate(self.hosts)}
        self._edge: dict[LinkId, tuple[float, float]] = {}
        for u, v, d in graph.edges(data=True):
            value = (float(d.get("bandwidth", self.link_bandwidth)),
                     float(d.get("latency", self.hop_latency)))
            check_positive(self.name, bandwidth=value[0])
            check_nonnegative(self.name, latency=value[1])
            self._edge[(u, v)] = value
            if not graph.is_directed():
                self._edge[(v, u)] = value
        fastest: dict[Any, float] = {}
        for link, (bandwidth, _) in self._edge.items():
            u = link[0]  # type: ignore[index]   # graph link ids are (u, v) tuples
            fastest[u] = max(fastest.get(u, 0.0), bandwidth)
        # seconds per byte of each endpoint's injection (0: no outgoing edge)
        self._inject = [1.0 / fastest[h] if h in fastest else 0.0 for h in self.hosts]
        self._init_common(latency, intra_latency, intra_bandwidth, cores, mapping)

    @staticmethod
    def _read(path: str) -> Any:
        import networkx as nx
        if path.endswith(".graphml"):
            return nx.read_graphml(path)
        if path.endswith(".gml"):
            return nx.read_gml(path)
        return nx.read_edgelist(path, data=True)

    def params(self) -> dict[str, Any]:
        out = super().params()
        if self.file is None:
            out["file"] = f"<graph nodes={self.graph.number_of_nodes()} " \
                          f"edges={self.graph.number_of_edges()}>"
        return out

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, GraphNetwork) and self.graph is other.graph
                and self.params() == other.params())

    def __hash__(self) -> int:
        return hash((type(self), id(self.graph)))

    def num_nodes(self) -> int:
        return len(self.hosts)

    def node_route(self, a: int, b: int) -> tuple[LinkId, ...]:
        import networkx as nx
        try:
            path = nx.shortest_path(self.graph, self.hosts[a], self.hosts[b],
                                    weight=lambda u, v, _: self._edge[(u, v)][1])
        except nx.NetworkXNoPath:
            raise NetworkSpecError(f"graph: no path from {self.hosts[a]!r} "
                                   f"to {self.hosts[b]!r}") from None
        return tuple(zip(path, path[1:]))

    def node_cost(self, a: int, b: int, nbytes: int) -> SimTime:
        edges = [self._edge[link] for link in self.route_nodes(a, b)]
        return (self.latency + sum(e[1] for e in edges)
                + nbytes / min(e[0] for e in edges))

    def gap(self, src: int, nbytes: int) -> SimTime:
        """``nbytes / fastest bandwidth`` of the edges leaving *src*'s endpoint."""
        return nbytes * self._inject[self.node_of(src)]

    def min_node_cost(self) -> SimTime:
        return self.latency + min((e[1] for e in self._edge.values()), default=0.0)

    def links(self) -> dict[LinkId, tuple[float, float]]:
        return dict(self._edge)
