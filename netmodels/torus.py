"""k-ary n-cube torus with dimension-order routing.

The BSIM paper (Sec. 4.A) designs a petascale system of 4096 8-core nodes in a
16x16x16 3-D torus with 10 GB/s per direction per link, and charges a receive
``l + s/w`` with ``l`` "calculated along the shortest route between the two
nodes in the 3D torus" (Sec. 4.D).  That machine is::

    torus:dims=16x16x16,link_bandwidth=1e10,cores=8,mapping=block
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .base import NetworkSpecError, SimTime, check_nonnegative, check_positive, register
from .mapping import Mapping
from .topology import LinkId, TopologyModel, check_node_count, parse_dims

__all__ = ["Torus"]


@register
class Torus(TopologyModel):
    """k-ary n-cube torus: ``cost = latency + hops*hop_latency + s/link_bandwidth``.

    The formula is the uncontended receive time of the BSIM paper (Sec. 3.C, 4.D:
    ``l + s/w`` with ``l`` along the shortest route) with the latency split
    into an end-point part and a per-hop part.  ``hops`` is the closed form
    ``sum_d min(|a_d - b_d|, k_d - |a_d - b_d|)``.  Ranks on one node pay
    ``intra_latency + s/intra_bandwidth``.

    Nodes are numbered with dimension 0 fastest:
    ``node = x0 + k0*(x1 + k1*(x2 + ...))``.  Each node has two directed
    links per dimension with ``k_d > 1``: link id ``(node, d, +1)`` to
    ``x_d + 1 mod k_d`` and ``(node, d, -1)`` to ``x_d - 1 mod k_d``.

    Routing is dimension order (0, 1, 2, ...), the short way round each
    ring; when the distance is exactly ``k_d/2`` both ways are equally short
    and ``tie`` decides: ``plus`` (default) goes the ``+`` way (so on a ring
    of 2 only ``+`` links carry traffic); ``simgrid`` goes ``+`` except from
    coordinate ``k_d/2``, whence ``-`` (the rule of SimGrid's TorusZone, for
    differential checks against SMPI).  A 4x4 torus and the route from node 0 (0,0) to node 10
    (2,2): two ``+`` hops in x (tie, k/2 = 2: goes +), then two ``+`` in y::

        y=3  12 ---13 ---14 ---15 ---(wrap to 12)
              |     |     |     |
        y=2   8 ---9 ---[10]---11
              |     |     ^     |
        y=1   4 ---5 ----6 ----7
              |     |     ^     |
        y=0  [0]==>1 ===>2 ----3
             x=0   x=1   x=2   x=3     route: (0,0,+1) (1,0,+1) (2,1,+1) (6,1,+1)
    """

    name = "torus"
    parameters = {
        "dims": "ring sizes joined by x, e.g. 16x16x16",
        "link_bandwidth": "bytes/second per link per direction",
        "hop_latency": "seconds per router-to-router hop",
        "tie": "direction at exactly half a ring: plus (default) or simgrid (+ except "
               "from coordinate k/2, as SimGrid's TorusZone)",
        **TopologyModel.common_parameters,
    }

    def __init__(self, dims: str | int | tuple[int, ...] = "8x8x8",
                 link_bandwidth: float = 1e10, hop_latency: float = 1e-7,
                 tie: str = "plus", latency: float = 1e-6, intra_latency: float = 5e-7,
                 intra_bandwidth: float = 2e10, cores: int = 1,
                 mapping: str | Mapping = "block") -> None:
        self.shape = parse_dims(self.name, dims)
        self.dims = "x".join(map(str, self.shape))
        check_positive(self.name, link_bandwidth=link_bandwidth)
        check_nonnegative(self.name, hop_latency=hop_latency)
        if tie not in ("plus", "simgrid"):
            raise NetworkSpecError(f"torus: tie must be plus or simgrid, got {tie!r}")
        self.tie = tie
        self.link_bandwidth = float(link_bandwidth)
        self.hop_latency = float(hop_latency)
        self._nnodes = math.prod(self.shape)
        check_node_count(self.name, self._nnodes, self.dims)
        # coordinates of every node, precomputed for the closed-form hop count
        self._coords: list[tuple[int, ...]] = [self.coords(n) for n in range(self._nnodes)]
        self._init_common(latency, intra_latency, intra_bandwidth, cores, mapping)

    # -- geometry -------------------------------------------------------------
    def num_nodes(self) -> int:
        return self._nnodes

    def coords(self, node: int) -> tuple[int, ...]:
        """Coordinates of *node* (dimension 0 fastest)."""
        if not 0 <= node < math.prod(self.shape):
            raise NetworkSpecError(f"torus {self.dims}: node {node} out of range")
        out = []
        for k in self.shape:
            node, x = divmod(node, k)
            out.append(x)
        return tuple(out)

    def node_at(self, coords: tuple[int, ...]) -> int:
        """Node id of *coords* (taken modulo each ring)."""
        node, stride = 0, 1
        for x, k in zip(coords, self.shape):
            node += (x % k) * stride
            stride *= k
        return node

    def hops(self, a: int, b: int) -> int:
        """Router-to-router hops from node *a* to node *b*: ``sum min(d, k-d)``."""
        hops = 0
        # hot path: inlined min(d, k - d) over the dimensions
        for xa, xb, k in zip(self._coords[a], self._coords[b], self.shape):
            d = xa - xb if xa > xb else xb - xa
            hops += d if d + d <= k else k - d
        return hops

    def group_shape(self, ranks: Sequence[int]) -> tuple[tuple[int, ...], ...]:
        """The ranks' nodes as coordinate offsets from the first one's, modulo each ring.

        Every link of a torus is alike and a cost depends only on the hops, ``sum min(d,
        k - d)`` of the coordinate differences, and on whether both ranks share a node, so
        two groups of one shape (translates of each other) have the same cost between
        corresponding members: a collective formula priced for one holds for the other
        (``bsim.engine.collective_costs``: HPL's 64 process rows on a 16^3 torus are one
        shape).
        """
        nodes, coords, shape = self._nodes(), self._coords, self.shape
        first = coords[nodes[ranks[0]]]
        return tuple(tuple((x - x0) % k for x, x0, k in zip(coords[nodes[r]], first, shape))
                     for r in ranks)

    def diameter(self) -> int:
        """Largest hop count: ``sum floor(k_d / 2)``."""
        return sum(k // 2 for k in self.shape)

    def node_route(self, a: int, b: int) -> tuple[LinkId, ...]:
        links: list[LinkId] = []
        cur = list(self._coords[a])
        target = self._coords[b]
        node = a
        stride = 1
        simgrid = self.tie == "simgrid"
        for d, k in enumerate(self.shape):
            delta = (target[d] - cur[d]) % k      # steps going +
            if delta:
                step, count = (1, delta) if delta + delta <= k else (-1, k - delta)
                if delta + delta == k and simgrid and cur[d] + cur[d] == k:
                    step = -1
                for _ in range(count):
                    links.append((node, d, step))
                    x = cur[d]
                    nx = (x + step) % k
                    node += (nx - x) * stride
                    cur[d] = nx
            stride *= k
        return tuple(links)

    def node_cost(self, a: int, b: int, nbytes: int) -> SimTime:
        return self.latency + self.hops(a, b) * self.hop_latency + nbytes / self.link_bandwidth

    def min_node_cost(self) -> SimTime:
        return self.latency + self.hop_latency

    def links(self) -> dict[LinkId, tuple[float, float]]:
        out: dict[LinkId, tuple[float, float]] = {}
        for node in range(self._nnodes):
            for d, k in enumerate(self.shape):
                if k > 1:
                    out[(node, d, 1)] = (self.link_bandwidth, self.hop_latency)
                    out[(node, d, -1)] = (self.link_bandwidth, self.hop_latency)
        return out

    def gap(self, src: int, nbytes: int) -> SimTime:
        return nbytes / self.link_bandwidth

    def to_networkx(self):  # pragma: no cover - exercised by tests only
        """The torus as a networkx ``MultiDiGraph`` of its directed links (for checks)."""
        import networkx as nx
        g = nx.MultiDiGraph()
        g.add_nodes_from(range(self._nnodes))
        for (node, d, step) in self.links():
            c = list(self._coords[node])
            c[d] += step
            g.add_edge(node, self.node_at(tuple(c)), key=(d, step))
        return g
