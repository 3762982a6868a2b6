"""Dragonfly networks: groups of routers joined all-to-all by global links.

Kim, Dally, Scott & Abts, "Technology-Driven, Highly-Scalable Dragonfly Topology"
(ISCA 2008): routers form *groups*; inside a group they are joined by local links, and
every pair of groups by global links.  The structure here is SimGrid's ``DRAGONFLY``
cluster (``topo_parameters="G,L;C,L;R,L;N"``, ``DragonflyZone``, SimGrid 3.32): ``G``
groups of ``C`` chassis of ``R`` routers, ``N`` terminals (network endpoints, bsim's
nodes) per router.  The routers of one chassis are joined all-to-all (``router_links``
links per pair), the routers at the same position of the chassis of one group too
(``chassis_links``): with ``C = 1`` a group is all-to-all, with ``C > 1`` it is a 2-D
flattened butterfly (Cray XC's "Aries" group: 6 chassis x 16 blades).  Each pair of
groups is joined by ``group_links`` links.  As in SimGrid, the ``k`` links of a pair
are one link of ``k`` times the bandwidth.

Global link arrangement (``arrangement``):

* ``simgrid`` (default): router ``h`` of each group (local index ``chassis * R +
  blade``) is the one linked to group ``h`` (SimGrid's ``DragonflyZone``); needs ``G <=
  C * R``.
* ``consecutive``: group ``g``'s global ports are numbered router-major, ``p = h`` for
  a group ``h < g`` and ``h - 1`` above, ``ceil((G - 1) / (C R))`` ports per router: port
  ``p`` is on router ``p // ports`` (the "absolute" arrangement of Hastings et al.,
  "Comparing global link arrangements for Dragonfly networks", Cluster 2015; Kim et al.
  2008's balanced dragonfly ``G = a h + 1``).
"""

from __future__ import annotations

import math

from .base import NetworkSpecError, SimTime, check_nonnegative, check_positive, register
from .mapping import Mapping
from .topology import LinkId, TopologyModel, check_node_count

__all__ = ["Dragonfly"]

_MASK = (1 << 64) - 1
ROUTINGS = ("minimal", "valiant", "ugal")
ARRANGEMENTS = ("simgrid", "consecutive")


def _mix(x: int) -> int:
    """SplitMix64's finaliser (Steele, Lea & Flood 2014): a well-spread 64-bit hash."""
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


@register
class Dragonfly(TopologyModel):
    r"""Dragonfly: ``cost = latency + sum of the route's link latencies + s / min bandwidth``.

    The tutorial's single-message ``sum L_i + max(S / B_i)`` (modeling tutorial,
    "Communication Pattern Cost") over the route, plus the end-point ``latency``.
    Terminal links (node to router and back) have ``terminal_bandwidth`` and
    ``hop_latency``; a link inside a group ``local_bandwidth`` times ``router_links``
    (same chassis) or ``chassis_links`` (between chassis), and ``hop_latency``; a
    global link ``global_bandwidth * group_links`` and ``global_latency``.

    Numbering (SimGrid's): terminal ``t`` is on router ``t // N``; router ``r`` is in
    group ``r // (C R)``, chassis ``(r mod C R) // R``, blade ``r mod R``.  Link ids:
    ``("up", t, r)`` and ``("down", r, t)`` (terminal links), ``("router", r1, r2)``
    (same chassis), ``("chassis", r1, r2)`` (same blade, other chassis), ``("global",
    r1, r2)``, each one direction.

    Routing.  ``minimal`` (SimGrid's order): inside the source group to the router
    holding the global link to the destination group, over it, then inside the
    destination group to the destination router; inside a group a route first
    crosses to the target blade in its chassis (``router`` link), then to the target
    chassis (``chassis`` link).  So a route has 2 terminal links, at most 2 local
    links in each group and at most one global link.  ``valiant`` (Valiant &
    Brebner 1981, for dragonflies Kim et al. 2008 Sec. 4): minimal to an intermediate
    group, then minimal to the destination; the intermediate group is drawn, for each
    (source node, destination node) pair, from the groups other than the two ends by
    a hash of ``seed`` and the pair (the same every run); messages inside a group, or
    with fewer than 3 groups, go minimal.  ``ugal`` (Kim et al. 2008 Sec. 4.2,
    UGAL): under ``--contention fluid`` each message takes the pair's Valiant route
    when ``(1 + q_val) H_val < (1 + q_min) H_min``, ``q`` the most flows in flight on
    one link of the route and ``H`` its number of links, else the minimal route; the
    cost stays the minimal route's, and a Valiant message is charged its extra link
    latency.  Without contention (no loads) ``ugal`` is ``minimal``.

    Two groups of one chassis of 3 routers, 2 terminals per router (``G=2, C=1, R=3,
    N=2``); router 1 of each group holds the global link to group 1, router 0 of group 1
    the one to group 0.  Route from terminal 1 to terminal 10 (router 5, group 1)::

        group 0                                group 1
        +------------------------+             +------------------------+
        |  R0 ---------- [R1] ===|=== global ==|== [R3] ------- R4      |
        |   \\ router    /       |             |      \\ router  /       |
        |    \\  link   /        |             |       \\       /        |
        |      R2 ----+          |             |        [R5]---+         |
        +------------------------+             +------------------------+
         t0 [t1]  t2 t3  t4 t5                  t6 t7  t8 t9  [t10] t11

        route: ("up", 1, 0) ("router", 0, 1) ("global", 1, 3)
               ("router", 3, 5) ("down", 5, 10)
    """

    name = "dragonfly"
    parameters = {
        "groups": "number of groups (G)",
        "chassis": "chassis per group (C)",
        "routers": "routers per chassis (R)",
        "terminals": "terminals (nodes) per router (N)",
        "group_links": "links between each pair of groups (one link of that many times "
                       "global_bandwidth)",
        "chassis_links": "links between same-blade routers of two chassis of a group",
        "router_links": "links between two routers of one chassis",
        "terminal_bandwidth": "bytes/second per terminal link per direction",
        "local_bandwidth": "bytes/second per local (in-group) link per direction",
        "global_bandwidth": "bytes/second per global link per direction",
        "hop_latency": "seconds per terminal or local link crossed",
        "global_latency": "seconds per global link crossed",
        "routing": "minimal, valiant (random intermediate group) or ugal (adaptive, "
                   "--contention fluid)",
        "seed": "seed of valiant's intermediate groups",
        "arrangement": "global links: simgrid (router h of a group to group h) or "
                       "consecutive (ports router-major)",
        **TopologyModel.common_parameters,
    }

    def __init__(self, groups: int = 16, chassis: int = 1, routers: int = 16,
                 terminals: int = 16, group_links: int = 1, chassis_links: int = 1,
                 router_links: int = 1, terminal_bandwidth: float = 2.5e10,
                 local_bandwidth: float = 2.5e10, global_bandwidth: float = 2.5e10,
                 hop_latency: float = 1e-7, global_latency: float = 3e-7,
                 routing: str = "minimal", seed: int = 0, arrangement: str = "simgrid",
                 latency: float = 1e-6, intra_latency: float = 5e-7,
                 intra_bandwidth: float = 2e10, cores: int = 1,
                 mapping: str | Mapping = "block") -> None:
        for key, value in (("groups", groups), ("chassis", chassis), ("routers", routers),
                           ("terminals", terminals), ("group_links", group_links),
                           ("chassis_links", chassis_links), ("router_links", router_links)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise NetworkSpecError(f"dragonfly: {key} must be an int >= 1, got {value!r}")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise NetworkSpecError(f"dragonfly: seed must be an int >= 0, got {seed!r}")
        if routing not in ROUTINGS:
            raise NetworkSpecError(f"dragonfly: routing must be one of {', '.join(ROUTINGS)}, "
                                   f"got {routing!r}")
        if arrangement not in ARRANGEMENTS:
            raise NetworkSpecError(f"dragonfly: arrangement must be one of "
                                   f"{', '.join(ARRANGEMENTS)}, got {arrangement!r}")
        check_positive(self.name, terminal_bandwidth=terminal_bandwidth,
                       local_bandwidth=local_bandwidth, global_bandwidth=global_bandwidth)
        check_nonnegative(self.name, hop_latency=hop_latency, global_latency=global_latency)
        per_group = chassis * routers
        if arrangement == "simgrid" and groups > per_group:
            raise NetworkSpecError(f"dragonfly: arrangement=simgrid links router h of each "
                                   f"group to group h, so groups ({groups}) must be at most "
                                   f"chassis*routers ({per_group}); use "
                                   f"arrangement=consecutive")
        self.groups, self.chassis, self.routers, self.terminals = groups, chassis, routers, \
            terminals
        self.group_links, self.chassis_links, self.router_links = group_links, chassis_links, \
            router_links
        self.terminal_bandwidth = float(terminal_bandwidth)
        self.local_bandwidth = float(local_bandwidth)
        self.global_bandwidth = float(global_bandwidth)
        self.hop_latency = float(hop_latency)
        self.global_latency = float(global_latency)
        self.routing, self.seed, self.arrangement = routing, seed, arrangement
        self._per_group = per_group
        self._ports = max(1, -(-(groups - 1) // per_group))   # consecutive: ports per router
        self._nnodes = groups * per_group * terminals
        check_node_count(self.name, self._nnodes, f"{groups}x{chassis}x{routers}x{terminals}")
        self._values = {"up": (self.terminal_bandwidth, self.hop_latency),
                        "down": (self.terminal_bandwidth, self.hop_latency),
                        "router": (self.local_bandwidth * router_links, self.hop_latency),
                        "chassis": (self.local_bandwidth * chassis_links, self.hop_latency),
                        "global": (self.global_bandwidth * group_links, self.global_latency)}
        self._minimal_cache: dict[tuple[int, int], tuple[LinkId, ...]] = {}
        self._valiant_cache: dict[tuple[int, int], tuple[LinkId, ...]] = {}
        self._init_common(latency, intra_latency, intra_bandwidth, cores, mapping)

    # -- geometry -----------------------------------------------------------------
    def num_nodes(self) -> int:
        return self._nnodes

    def num_routers(self) -> int:
        """Routers of the whole network: ``G C R``."""
        return self.groups * self._per_group

    def coords(self, node: int) -> tuple[int, int, int, int]:
        """(group, chassis, blade, terminal) of *node*, SimGrid's ``rankId_to_coords``."""
        if not 0 <= node < self._nnodes:
            raise NetworkSpecError(f"dragonfly: node {node} out of range [0, {self._nnodes})")
        router, term = divmod(node, self.terminals)
        group, local = divmod(router, self._per_group)
        chassis, blade = divmod(local, self.routers)
        return group, chassis, blade, term

    def gateway(self, group: int, other: int) -> int:
        """The router of *group* holding the global link to group *other*."""
        if self.arrangement == "simgrid":
            local = other
        else:
            local = (other if other < group else other - 1) // self._ports
        return group * self._per_group + local

    def _local_path(self, x: int, y: int, out: list[LinkId]) -> None:
        """Links from router *x* to router *y* of one group: blade first, then chassis."""
        if x == y:
            return
        R = self.routers
        if x % R != y % R:                    # to y's blade in x's chassis
            z = x - x % R + y % R
            out.append(("router", x, z))
            x = z
        if x != y:                            # to y's chassis at y's blade
            out.append(("chassis", x, y))

    def _route_via(self, a: int, b: int, middle: int | None) -> tuple[LinkId, ...]:
        """Terminal *a* to terminal *b*, minimal or through group *middle*."""
        N, per = self.terminals, self._per_group
        ra, rb = a // N, b // N
        ga, gb = ra // per, rb // per
        out: list[LinkId] = [("up", a, ra)]
        cur = ra
        stops = [] if ga == gb else ([gb] if middle is None else [middle, gb])
        here = ga
        for there in stops:
            gw = self.gateway(here, there)
            self._local_path(cur, gw, out)
            cur = self.gateway(there, here)
            out.append(("global", gw, cur))
            here = there
        self._local_path(cur, rb, out)
        out.append(("down", rb, b))
        return tuple(out)

    def minimal_route(self, a: int, b: int) -> tuple[LinkId, ...]:
        """The minimal route from node *a* to node *b* (``a != b``), cached."""
        key = (a, b)
        route = self._minimal_cache.get(key)
        if route is None:
            if len(self._minimal_cache) >= 1 << 20:
                self._minimal_cache.clear()
            route = self._minimal_cache[key] = self._route_via(a, b, None)
        return route

    def intermediate_group(self, a: int, b: int) -> int | None:
        """Valiant's intermediate group of the pair (*a*, *b*), or None when it goes minimal."""
        per = self._per_group * self.terminals
        ga, gb = a // per, b // per
        if ga == gb or self.groups < 3:
            return None
        k = _mix(_mix(self.seed) ^ (a * self._nnodes + b)) % (self.groups - 2)
        for g in sorted((ga, gb)):            # the k-th group other than ga and gb
            if k >= g:
                k += 1
        return k

    def valiant_route(self, a: int, b: int) -> tuple[LinkId, ...]:
        """The Valiant route from node *a* to node *b* (``a != b``), cached."""
        key = (a, b)
        route = self._valiant_cache.get(key)
        if route is None:
            if len(self._valiant_cache) >= 1 << 20:
                self._valiant_cache.clear()
            route = self._valiant_cache[key] = \
                self._route_via(a, b, self.intermediate_group(a, b))
        return route

    def node_route(self, a: int, b: int) -> tuple[LinkId, ...]:
        if self.routing == "valiant":
            return self.valiant_route(a, b)
        return self.minimal_route(a, b)

    def hops(self, a: int, b: int) -> int:
        """Router-to-router links on the route from node *a* to node *b* (0 on one router)."""
        return len(self.route_nodes(a, b)) - 2 if a != b else 0

    def route_nodes_adaptive(self, a: int, b: int, load: dict[LinkId, float],
                             rail: int = 0) -> tuple[LinkId, ...]:
        """UGAL's choice between the pair's minimal and Valiant routes from *load*
        (flows in flight per link): Valiant when ``(1 + q_val) H_val < (1 + q_min) H_min``."""
        if a == b:
            return ()
        minimal = self.route_nodes(a, b)
        if self.routing != "ugal":
            return minimal
        valiant = self.valiant_route(a, b)
        if valiant == minimal:
            return minimal
        q_min = max([load.get(lk, 0.0) for lk in minimal])
        q_val = max([load.get(lk, 0.0) for lk in valiant])
        if (1.0 + q_val) * len(valiant) < (1.0 + q_min) * len(minimal):
            return valiant
        return minimal

    # -- costs ----------------------------------------------------------------------
    def route_figures(self, route: tuple[LinkId, ...]) -> tuple[float, float]:
        """(sum of link latencies, smallest bandwidth) of *route*."""
        values = self._values
        lat, bw = 0.0, math.inf
        for link in route:
            b, l = values[link[0]]   # type: ignore[index]
            lat += l
            if b < bw:
                bw = b
        return lat, bw

    def node_cost(self, a: int, b: int, nbytes: int) -> SimTime:
        lat, bw = self.route_figures(self.route_nodes(a, b))
        return self.latency + lat + nbytes / bw

    def min_node_cost(self) -> SimTime:
        """Every route crosses two terminal links; with one terminal per router also one
        router-to-router link at least."""
        extra = 0.0
        if self.terminals == 1:
            options = ([self.hop_latency] if self._per_group > 1 else []) + \
                ([self.global_latency] if self.groups > 1 else [])
            extra = min(options)
        return self.latency + 2 * self.hop_latency + extra

    def gap(self, src: int, nbytes: int) -> SimTime:
        return nbytes / self.terminal_bandwidth

    def inert(self, contention: bool, protocol: str) -> list[str]:
        """``routing=ugal`` without fluid contention (no loads: it routes minimally) or with
        fewer than 3 groups (no Valiant route); ``seed`` under ``routing=minimal``."""
        out = []
        if self.routing == "ugal" and not contention:
            out.append("routing=ugal (only --contention fluid routes by link load; "
                       "without it every message goes minimal)")
        if self.routing in ("ugal", "valiant") and self.groups < 3:
            out.append(f"routing={self.routing} (fewer than 3 groups: no intermediate group, "
                       f"every message goes minimal)")
        if self.routing == "minimal" and self.seed:
            out.append("seed (routing=minimal draws no intermediate group)")
        return out

    def links(self) -> dict[LinkId, tuple[float, float]]:
        out: dict[LinkId, tuple[float, float]] = {}
        v = self._values
        N, R, per = self.terminals, self.routers, self._per_group
        for t in range(self._nnodes):
            out[("up", t, t // N)] = v["up"]
            out[("down", t // N, t)] = v["down"]
        for r in range(self.num_routers()):
            base = r - r % R                   # first router of r's chassis
            for k in range(R):
                if base + k != r:
                    out[("router", r, base + k)] = v["router"]
            first = r - r % per + r % R        # r's blade in chassis 0 of its group
            for c in range(self.chassis):
                other = first + c * R
                if other != r:
                    out[("chassis", r, other)] = v["chassis"]
        for g in range(self.groups):
            for h in range(self.groups):
                if g != h:
                    out[("global", self.gateway(g, h), self.gateway(h, g))] = v["global"]
        return out

    def to_networkx(self):
        """The network as a networkx ``MultiDiGraph``: nodes ``("t", t)`` and ``("r", r)``,
        one edge per directed link, keyed by its link id (for checks)."""
        import networkx as nx
        g = nx.MultiDiGraph()
        for link in self.links():
            kind, x, y = link   # type: ignore[misc]
            src = ("t", x) if kind == "up" else ("r", x)
            dst = ("t", y) if kind == "down" else ("r", y)
            g.add_edge(src, dst, key=link)
        return g
