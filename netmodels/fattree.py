"""Fat-trees: k-ary n-trees, the Quadrics quaternary fat-tree, oversubscribed leaves, rails.

All are generalised fat-trees XGFT(h; m_1..m_h; w_1..w_h) (Ohring et al.
1995): level 0 holds the compute nodes, levels 1..h the switches; an element
of level ``l-1`` has ``w_l`` parents and a switch of level ``l`` has ``m_l``
children.  Hence ``prod m`` nodes and ``prod_{i>l} m_i * prod_{i<=l} w_i``
switches on level ``l``.

* k-ary n-tree: ``m = (k,)*n``, ``w = (1,) + (k,)*(n-1)``: ``k^n`` nodes and
  ``n*k^(n-1)`` switches.  With ``k = 4`` it is the Quadrics quaternary
  fat-tree of dimension n: "4^n processing nodes and n.4^(n-1) switches
  interconnected as a delta network" (installation paper, Sec. 2, Fig. 1).
* Oversubscribed leaves (MILC paper, Sec. V "ds1": 36-port leaves, 3:1 between
  leaves and spine): a leaf of ``leaf_ports = 36`` ports at
  ``oversubscription = 3`` has ``36*3/4 = 27`` down and ``9`` up ports;
  with ``leaves = L`` it is the two-level XGFT(2; 27, L; 1, 9): ``27*L``
  nodes, ``L`` leaves and 9 spines (one link from every leaf to every spine).
  ``oversubscription`` is an int >= 1 (default 1, i.e. 1:1).
* ``rails = R`` independent copies of the network, one NIC per rail per node
  (installation paper, Sec. 2: the ASCI Q system "contains two rails ... two Elan cards
  per node").  ``rail_policy=assign`` (default) sends each message whole on
  rail ``core_of(src) % R`` (installation paper, Sec. 5: "Individual messages are not
  striped across channels"); ``rail_policy=stripe`` splits every message in
  ``R`` equal parts, one per rail, so the bandwidth term is ``s/(R*bw)``.
"""

from __future__ import annotations

import math

from .base import NetworkSpecError, SimTime, check_nonnegative, check_positive, register
from .mapping import Mapping
from .topology import LinkId, TopologyModel, parse_dims

__all__ = ["FatTree"]


@register
class FatTree(TopologyModel):
    r"""Fat-tree: ``cost = latency + switches*hop_latency + s/(link_bandwidth*R_eff)``.

    ``switches = 2*L - 1`` switches are crossed between nodes whose nearest
    common ancestors are on level ``L``; ``R_eff`` is ``rails`` when striping,
    else 1.  Every link has ``link_bandwidth`` per direction.

    Topology (exactly one of): ``k`` and ``n`` (k-ary n-tree; default 4-ary
    3-tree); ``quaternary = n`` (Quadrics, the installation paper); ``leaf_ports``,
    ``oversubscription`` and ``leaves`` (two levels, the MILC paper's ds1); or
    ``down = m_1x..xm_h`` and ``up = w_1x..xw_h`` (any XGFT).

    Numbering.  Node ``p`` has base-``m`` digits ``a_1..a_h`` (``a_1``
    fastest).  A level-``l`` element is ``(g, r)``: ``g = p // (m_1..m_l)``
    is the subtree it serves and ``r < w_1..w_l`` its replica; its index on
    the level is ``g*R_l + r`` with ``R_l = w_1..w_l``.  Its up port ``j``
    leads to ``(g // m_{l+1}, r + j*R_l)`` on level ``l+1``.  Link ids are
    ``(rail, "up", l, index, j)`` for that cable going up and
    ``(rail, "down", l, index, j)`` for the same cable coming down.

    Routing.  Up to the nearest common ancestor level ``L`` (smallest ``L``
    with ``src // M_L == dst // M_L``), then down, which is unique.
    ``routing=dmodk``: from level ``l`` take up port ``j = (dst // R_l) mod
    w_{l+1}`` (destination-mod-k; all traffic to one destination meets at one
    top switch, so down paths never collide).  ``routing=adaptive``: take the
    up port whose link has the least load in the ``load`` mapping given to
    :meth:`route_nodes_adaptive` (ties: the d-mod-k port, then the following
    ports cyclically); with no load given it is d-mod-k.

    A 2-ary 3-tree (8 nodes, 12 switches), route 0 -> 6 with d-mod-k:
    L = 3; up ports (6 // 1) mod 1 = 0, (6 // 1) mod 2 = 0, (6 // 2) mod 2 = 1,
    so the top replica is 0 + 1*2 = 2; then the unique way down.  Only the
    route's links are drawn above level 1 (S2.r of each half also links to
    S3.r and S3.(r+2); each leaf to both S2 of its half)::

        level 3     S3.0    S3.1   [S3.2]    S3.3
                         _______/    \_______
                        /                    \
        level 2   [S2.0]  S2.1            [S2.2]  S2.3
                     |                       |
        level 1   [S1.0]    S1.1     S1.2  [S1.3]
                   /  \     /  \     /  \   /  \
        nodes    [0]   1   2    3   4    5 [6]   7

        route: (0,up,0,0,0) (0,up,1,0,0) (0,up,2,0,1)
               (0,down,2,2,1) (0,down,1,3,0) (0,down,0,6,0)
    """

    name = "fattree"
    parameters = {
        "k": "k-ary n-tree: switch arity (k down, k up)",
        "n": "k-ary n-tree: number of switch levels",
        "quaternary": "Quadrics quaternary fat-tree of this dimension (installation paper)",
        "leaf_ports": "two-level tree: ports per leaf switch (e.g. 36)",
        "oversubscription": "two-level tree: leaf down:up ratio (e.g. 3 for 3:1)",
        "leaves": "two-level tree: number of leaf switches",
        "down": "XGFT children per switch per level, e.g. 27x8",
        "up": "XGFT parents per element per level, e.g. 1x9",
        "rails": "independent network planes (one NIC each per node)",
        "rail_policy": "assign (whole message on rail core%rails) or stripe",
        "routing": "dmodk or adaptive",
        "link_bandwidth": "bytes/second per link per direction",
        "hop_latency": "seconds per switch crossed",
        **TopologyModel.common_parameters,
    }

    def __init__(self, k: int | None = None, n: int | None = None,
                 quaternary: int | None = None, leaf_ports: int | None = None,
                 oversubscription: int | None = None, leaves: int | None = None,
                 down: str | None = None, up: str | None = None,
                 rails: int = 1, rail_policy: str = "assign", routing: str = "dmodk",
                 link_bandwidth: float = 1e10, hop_latency: float = 1e-7,
                 latency: float = 1e-6, intra_latency: float = 5e-7,
                 intra_bandwidth: float = 2e10, cores: int = 1,
                 mapping: str | Mapping = "block") -> None:
        self.k, self.n, self.quaternary = k, n, quaternary
        self.leaf_ports, self.oversubscription, self.leaves = leaf_ports, oversubscription, leaves
        self.down, self.up = down, up
        self.m, self.w = self._arities()
        if not isinstance(rails, int) or rails < 1:
            raise NetworkSpecError(f"fattree: rails must be an int >= 1, got {rails!r}")
        if rail_policy not in ("assign", "stripe"):
            raise NetworkSpecError(f"fattree: rail_policy must be assign or stripe, "
                                   f"got {rail_policy!r}")
        if routing not in ("dmodk", "adaptive"):
            raise NetworkSpecError(f"fattree: routing must be dmodk or adaptive, got {routing!r}")
        check_positive(self.name, link_bandwidth=link_bandwidth)
        check_nonnegative(self.name, hop_latency=hop_latency)
        self.rails, self.rail_policy, self.routing = rails, rail_policy, routing
        self.link_bandwidth = float(link_bandwidth)
        self.hop_latency = float(hop_latency)
        h = len(self.m)
        self.levels = h
        # M[l] = m_1..m_l (nodes under a level-l element), R[l] = w_1..w_l (replicas)
        self.M = [math.prod(self.m[:l]) for l in range(h + 1)]
        self.R = [math.prod(self.w[:l]) for l in range(h + 1)]
        self._nnodes = self.M[h]
        self._init_common(latency, intra_latency, intra_bandwidth, cores, mapping)

    def _arities(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        given = [name for name, v in (("k/n", self.k if self.k is not None else self.n),
                                      ("quaternary", self.quaternary),
                                      ("leaf_ports", self.leaf_ports),
                                      ("down/up", self.down if self.down is not None
                                       else self.up)) if v is not None]
        if len(given) > 1:
            raise NetworkSpecError(f"fattree: give only one of k/n, quaternary, leaf_ports, "
                                   f"down/up; got {', '.join(given)}")
        if self.quaternary is not None:
            return self._kary(4, self.quaternary)
        if self.leaf_ports is not None:
            o, leaves = 1 if self.oversubscription is None else self.oversubscription, self.leaves
            if isinstance(o, bool) or not isinstance(o, int) or o < 1:
                raise NetworkSpecError(f"fattree: oversubscription must be an int >= 1 "
                                       f"(down:up ports per leaf), got {o!r}")
            if leaves is None or leaves < 1:
                raise NetworkSpecError("fattree: leaf_ports needs leaves=L (number of leaves)")
            if self.leaf_ports % (o + 1):
                raise NetworkSpecError(f"fattree: {self.leaf_ports} leaf ports cannot be split "
                                       f"{o}:1 into whole down and up ports")
            ups = self.leaf_ports // (o + 1)
            return (self.leaf_ports - ups, leaves), (1, ups)
        if self.down is not None or self.up is not None:
            m = parse_dims(self.name, self.down if self.down is not None else "")
            w = parse_dims(self.name, self.up) if self.up is not None else (1,) + m[:-1]
            if len(m) != len(w):
                raise NetworkSpecError(f"fattree: down {self.down} and up {self.up} "
                                       f"need one entry per level")
            return m, w
        if self.oversubscription is not None or self.leaves is not None:
            raise NetworkSpecError("fattree: oversubscription/leaves need leaf_ports")
        return self._kary(4 if self.k is None else self.k, 3 if self.n is None else self.n)

    def _kary(self, k: int, n: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        if not isinstance(k, int) or not isinstance(n, int) or k < 1 or n < 1:
            raise NetworkSpecError(f"fattree: k and n must be ints >= 1, got k={k!r} n={n!r}")
        return (k,) * n, (1,) + (k,) * (n - 1)

    # -- sizes ----------------------------------------------------------------
    def num_nodes(self) -> int:
        return self._nnodes

    def switches_per_level(self) -> list[int]:
        """Switch count of levels 1..h (one rail)."""
        return [self._nnodes // self.M[l] * self.R[l] for l in range(1, self.levels + 1)]

    def num_switches(self) -> int:
        """Switches of all rails: ``rails * sum_l prod_{i>l} m_i prod_{i<=l} w_i``."""
        return self.rails * sum(self.switches_per_level())

    # -- routing --------------------------------------------------------------
    def nca_level(self, a: int, b: int) -> int:
        """Level of the nearest common ancestors of nodes *a* and *b* (0 if equal)."""
        for l, size in enumerate(self.M):
            if a // size == b // size:
                return l
        raise NetworkSpecError(f"fattree: nodes {a} and {b} out of range")  # pragma: no cover

    def switches_crossed(self, a: int, b: int) -> int:
        """Switches on the route: ``2*L - 1`` (0 when ``a == b``)."""
        level = self.nca_level(a, b)
        return 2 * level - 1 if level else 0

    def _path(self, a: int, b: int, rail: int, load: dict | None = None) -> list[LinkId]:
        top = self.nca_level(a, b)
        M, R, w = self.M, self.R, self.w
        up: list[LinkId] = []
        r = 0
        for l in range(top):
            width = w[l]
            j = (b // R[l]) % width                 # d-mod-k port
            if load is not None and width > 1:
                index = (a // M[l]) * R[l] + r
                best = min(range(width), key=lambda i: (
                    load.get((rail, "up", l, index, (j + i) % width), 0), i))
                j = (j + best) % width
            up.append((rail, "up", l, (a // M[l]) * R[l] + r, j))
            r += j * R[l]
        down: list[LinkId] = []
        for l in range(top - 1, -1, -1):            # unique way down from replica r
            index = (b // M[l]) * R[l] + r % R[l]
            j = r // R[l]
            down.append((rail, "down", l, index, j))
            r %= R[l]
        return up + down

    def _rail(self, a: int) -> int:
        return 0

    def node_route(self, a: int, b: int) -> tuple[LinkId, ...]:
        """Links of rail 0 (rank-level :meth:`route` picks the rail)."""
        return tuple(self._path(a, b, 0))

    def rail_routes(self, src: int, dst: int) -> list[tuple[LinkId, ...]]:
        """One route per rail the message of rank *src* to rank *dst* uses.

        ``assign``: one route, on rail ``core_of(src) % rails``.  ``stripe``:
        ``rails`` routes, each carrying ``nbytes / rails``.
        """
        a, b = self.node_of(src), self.node_of(dst)
        if a == b:
            return [()]
        base = self.route_nodes(a, b)
        if self.rail_policy == "stripe":
            rails = range(self.rails)
        else:
            rails = range(self._mapping.cores[src] % self.rails,
                          self._mapping.cores[src] % self.rails + 1)
        # fat-tree link ids are tuples (rail, direction, level, switch, port)
        return [tuple((rail,) + link[1:] for link in base) if rail else base  # type: ignore[index]
                for rail in rails]

    def route(self, src: int, dst: int) -> tuple[LinkId, ...]:
        """Links crossed by the message of rank *src* to rank *dst* (all its rails)."""
        return tuple(link for links in self.rail_routes(src, dst) for link in links)

    def route_nodes_adaptive(self, a: int, b: int, load: dict[LinkId, float],
                             rail: int = 0) -> tuple[LinkId, ...]:
        """Route with the least-loaded up port at every level (``routing=adaptive``)."""
        if a == b:
            return ()
        if self.routing != "adaptive":
            return self.route_nodes(a, b)
        return tuple(self._path(a, b, rail, load))

    # -- costs --------------------------------------------------------------
    def _bandwidth(self) -> float:
        return self.link_bandwidth * (self.rails if self.rail_policy == "stripe" else 1)

    def node_cost(self, a: int, b: int, nbytes: int) -> SimTime:
        return (self.latency + self.switches_crossed(a, b) * self.hop_latency
                + nbytes / self._bandwidth())

    def min_node_cost(self) -> SimTime:
        return self.latency + self.hop_latency

    def gap(self, src: int, nbytes: int) -> SimTime:
        return nbytes / self._bandwidth()

    def inert(self, contention: bool, protocol: str) -> list[str]:
        """``routing=adaptive`` without fluid contention (no link loads to choose by) or on
        a tree with one up port everywhere; ``rails=R`` under ``assign`` without fluid
        contention (a message whole on one rail costs what it costs on one plane) or when
        every placed rank has the same ``core % R`` (all messages on one rail);
        ``rail_policy=stripe`` with one rail."""
        out = []
        if self.routing == "adaptive":
            if not contention:
                out.append("routing=adaptive (only --contention fluid routes by link load)")
            elif max(self.w) <= 1:
                out.append("routing=adaptive (every element has one up port: no choice)")
        if self.rails > 1 and self.rail_policy == "assign":
            cores = self._mapping.cores if self._node is not None else range(self.cores)
            used = sorted({core % self.rails for core in cores})
            if not contention:
                out.append(f"rails={self.rails} (rail_policy=assign sends a message whole on "
                           f"one rail: the rails share load only under --contention fluid)")
            elif len(used) == 1:
                out.append(f"rails={self.rails} (rail_policy=assign puts every message on rail "
                           f"core % {self.rails} = {used[0]}: each node's ranks use one rail)")
        if self.rails == 1 and self.rail_policy == "stripe":
            out.append("rail_policy=stripe (one rail: nothing to stripe over)")
        return out

    def links(self) -> dict[LinkId, tuple[float, float]]:
        out: dict[LinkId, tuple[float, float]] = {}
        value = (self.link_bandwidth, self.hop_latency)
        for rail in range(self.rails):
            for l in range(self.levels):
                count = self._nnodes // self.M[l] * self.R[l]
                for index in range(count):
                    for j in range(self.w[l]):
                        out[(rail, "up", l, index, j)] = value
                        out[(rail, "down", l, index, j)] = value
        return out

    def to_networkx(self):
        """One rail as a networkx ``Graph``: nodes ``("node", p)`` and ``("sw", l, i)``."""
        import networkx as nx
        g = nx.Graph()
        for l in range(self.levels):
            for index in range(self._nnodes // self.M[l] * self.R[l]):
                gr, r = divmod(index, self.R[l])
                lower = ("node", index) if l == 0 else ("sw", l, index)
                for j in range(self.w[l]):
                    upper = (gr // self.m[l]) * self.R[l + 1] + r + j * self.R[l]
                    g.add_edge(lower, ("sw", l + 1, upper), port=j)
        return g
