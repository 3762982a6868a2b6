"""Blue Waters (IBM PERCS) as described in the modeling tutorial.

Everything here comes from the modeling tutorial, "II: Novel Architectures: Blue Waters"
(slides "Processor Hierarchy", "Communication Hierarchy provided by Hubs",
"Our (current) assumed communication parameters", "Routing
Considerations", "Communication Cost [with striping]", "Communication
Pattern Cost", "2D Example"):

* a P7 chip has 8 cores; a QCM is 4 chips with one Hub (Torrent); a drawer
  is 8 QCMs (+ Hubs); a supernode (SN) is 4 drawers (1024 cores); a system
  is up to 513 SNs.
* Hub links: W (x4) to the local QCM, LI (x7) to the other Hubs of the
  drawer, Lr (x24) to the Hubs of the other drawers of the SN, D (max 16) to
  other SNs; one D channel between any two SNs.
* assumed parameters (per hop latency, per-direction bandwidth)::

      W  QCM -> Hub     0.05 us   15 GB/s
      LI intra-drawer   0.1  us   15 GB/s
      Lr intra-SN       0.2  us    4 GB/s
      D  inter-SN      ~0.3  us    7 GB/s
      + MPI software stack 0.5 us

* cost of one message: ``T = sum L_i + max(C_i * (S / N_i) / B_i)`` over
  the link classes ``i`` of its route (``C_i`` = messages sharing the
  channel, ``N_i`` = channels striped over; ``C_i = N_i = 1`` is the
  single-message, no-striping form ``sum L_i + max(S / B_i)``).

A node of this model is a QCM/Hub (32 cores).  Node ``q`` is QCM
``q % 8`` of drawer ``(q // 8) % 4`` of SN ``q // 32``; a rank on core ``c`` of it
is on P7 chip ``c // 8``, whose own W link ("W (x4): local P7 QCM") joins it to the Hub.
Link ids: ``("W+", q, chip)`` chip->Hub, ``("W-", q, chip)`` Hub->chip, ``("LI", a, b)`` and
``("Lr", a, b)`` Hub ``a`` -> Hub ``b``, ``("D", s, t)`` SN ``s`` -> SN ``t``.
The D cable from SN ``s`` to SN ``t`` leaves from Hub ``j % 32`` of ``s``,
``j = (t - s - 1) mod nSN`` (so 513 SNs give each Hub 16 D links).

Routing: intra-SN direct (W+, LI or Lr, W-).  Inter-SN ``direct``: W+, to
the Hub owning the D cable, D, to the destination Hub, W-.  ``indirect``
(the tutorial's "case 2"): the first step (LI) reaches any Hub of the
drawer, whose D cables lead to up to 8*16 = 128 middle SNs; the middle SN is
``candidates[dst_node % len(candidates)]``; then LI|Lr to the D exit
towards the destination SN, D, and the last step inside the destination
SN.  Two SNs of a drawer (32 QCMs each), route from QCM 1 of SN 0 to QCM
2 of SN 1, direct (the D cable 0->1 leaves Hub 0, lands on Hub 0 of SN 1)::

        SN 0, drawer 0                          SN 1, drawer 0
        Hub 0 <--LI-- Hub 1   Hub 2 .. Hub 7    Hub 32 --LI--> Hub 34
          |             ^                         ^              |
          +=====D(0,1)==|=========================+              W-
                        W+                                       v
                      QCM 1                                    QCM 34

    route: ("W+",1,0) ("LI",1,0) ("D",0,1) ("LI",32,34) ("W-",34,0)

(from chip 0 to chip 0; :meth:`route` puts the ranks' chips on the W links, node-level
routes (:meth:`route_nodes`, :meth:`route_via`) run from chip 0 to chip 0 unless told).

Striping (``striping=true``, tutorial "Communication Cost with striping"):
``N_W = 1``, ``N_LI = 7`` ("Hub -> 7 other Hubs"), ``N_Lr = 24`` (our
reading: a Hub's 24 Lr), ``N_D = 1`` direct or the number of middle SNs
reachable from the drawer (<= 128, "Hub -> 128 other Hubs") indirect; no
more channels than 2 KB packets (``ceil(S / 2048)``).  As the tutorial
notes, the P7->Hub (W) bandwidth then bounds the time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .base import NetworkSpecError, SimTime, check_nonnegative, check_positive, register
from .mapping import Mapping, MappingError, register_mapping
from .topology import LinkId, TopologyModel

MIDDLES_CACHE_LIMIT = 1 << 16   # (SN, drawer, destination SN) middle lists kept
STRIPED = -1   # the "to" of a striped Hub hop's link id: the Hub's pool of links of a class

__all__ = ["BlueWaters", "percs_cost", "GridMapping2D", "CORES_PER_CHIP", "CHIPS_PER_QCM",
           "QCMS_PER_DRAWER", "DRAWERS_PER_SN", "MAX_SUPERNODES"]

CORES_PER_CHIP = 8        # "Processor = 8x Power7 cores"
CHIPS_PER_QCM = 4         # "Quad-Chip-Module (QCM) = 4x Processors"
QCMS_PER_DRAWER = 8       # "Drawer = 8x (QCM + Hubs)"
DRAWERS_PER_SN = 4        # "SuperNode = 4x Boards"
MAX_SUPERNODES = 513      # "System = up to 513x SuperNodes"
HUBS_PER_SN = QCMS_PER_DRAWER * DRAWERS_PER_SN            # 32
CORES_PER_QCM = CORES_PER_CHIP * CHIPS_PER_QCM            # 32
D_PER_HUB = 16            # "D (max 16): distant SN"


def percs_cost(nbytes: float, hops: Sequence[tuple[float, float, float, float]]) -> float:
    """Modeling tutorial, "Communication Pattern Cost": ``sum L_i + max(C_i*(S/N_i)/B_i)``.

    *hops* lists ``(latency L_i, bandwidth B_i, channels N_i, contention C_i)``
    per link class of the route; the MPI stack latency is not included.
    """
    if not hops:
        return 0.0
    return (sum(h[0] for h in hops)
            + max(c * (nbytes / n) / b for _, b, n, c in hops))


@register
class BlueWaters(TopologyModel):
    """Blue Waters / PERCS: ``T = latency + sum L_i + max((S / N_i) / B_i)`` (tutorial)."""

    name = "bluewaters"
    parameters = {
        "supernodes": "number of supernodes (1..513), 1024 cores each",
        "routing": "inter-SN routing: direct or indirect",
        "striping": "stripe messages over channels (true/false)",
        "packet": "striping packet size, bytes (2 KB)",
        "w_latency": "QCM<->Hub latency, seconds", "w_bandwidth": "QCM<->Hub bytes/s",
        "li_latency": "intra-drawer latency, seconds", "li_bandwidth": "LI bytes/s",
        "lr_latency": "intra-SN latency, seconds", "lr_bandwidth": "Lr bytes/s",
        "d_latency": "inter-SN latency, seconds", "d_bandwidth": "D bytes/s",
        **TopologyModel.common_parameters,
    }

    def __init__(self, supernodes: int = 1, routing: str = "direct", striping: bool = False,
                 packet: int = 2048,
                 w_latency: float = 0.05e-6, w_bandwidth: float = 15e9,
                 li_latency: float = 0.1e-6, li_bandwidth: float = 15e9,
                 lr_latency: float = 0.2e-6, lr_bandwidth: float = 4e9,
                 d_latency: float = 0.3e-6, d_bandwidth: float = 7e9,
                 latency: float = 0.5e-6, intra_latency: float = 0.5e-6,
                 intra_bandwidth: float = 15e9, cores: int = CORES_PER_QCM,
                 mapping: str | Mapping = "block") -> None:
        if not isinstance(supernodes, int) or not 1 <= supernodes <= MAX_SUPERNODES:
            raise NetworkSpecError(f"bluewaters: supernodes must be an int in 1..513, "
                                   f"got {supernodes!r}")
        if routing not in ("direct", "indirect"):
            raise NetworkSpecError(f"bluewaters: routing must be direct or indirect, "
                                   f"got {routing!r}")
        if not isinstance(striping, bool):
            raise NetworkSpecError(f"bluewaters: striping must be true or false, "
                                   f"got {striping!r}")
        check_nonnegative(self.name, w_latency=w_latency, li_latency=li_latency,
                          lr_latency=lr_latency, d_latency=d_latency)
        check_positive(self.name, w_bandwidth=w_bandwidth, li_bandwidth=li_bandwidth,
                       lr_bandwidth=lr_bandwidth, d_bandwidth=d_bandwidth, packet=packet)
        if cores > CORES_PER_QCM:
            raise NetworkSpecError(f"bluewaters: a QCM has {CORES_PER_QCM} cores, got {cores}")
        self.supernodes, self.routing, self.striping, self.packet = (
            supernodes, routing, striping, packet)
        self.w_latency, self.w_bandwidth = float(w_latency), float(w_bandwidth)
        self.li_latency, self.li_bandwidth = float(li_latency), float(li_bandwidth)
        self.lr_latency, self.lr_bandwidth = float(lr_latency), float(lr_bandwidth)
        self.d_latency, self.d_bandwidth = float(d_latency), float(d_bandwidth)
        self._class = {"W+": (self.w_latency, self.w_bandwidth),
                       "W-": (self.w_latency, self.w_bandwidth),
                       "LI": (self.li_latency, self.li_bandwidth),
                       "Lr": (self.lr_latency, self.lr_bandwidth),
                       "D": (self.d_latency, self.d_bandwidth)}
        self._init_common(latency, intra_latency, intra_bandwidth, cores, mapping)
        self._middles: dict[tuple[int, int, int], list[int]] = {}
        if striping and routing == "indirect":
            # the fluid layer (bsim/engine/fabric_routes.py) takes a message's parts from
            # ``contention_flows`` when the model has one: only striped indirect routing
            # splits a message, every other setting keeps its one cached route
            self.contention_flows = self.striped_flows

    # -- hierarchy --------------------------------------------------------------
    def num_nodes(self) -> int:
        return self.supernodes * HUBS_PER_SN

    @staticmethod
    def locate(node: int) -> tuple[int, int, int]:
        """``(supernode, drawer, qcm in drawer)`` of QCM/Hub *node*."""
        sn, hub = divmod(node, HUBS_PER_SN)
        drawer, qcm = divmod(hub, QCMS_PER_DRAWER)
        return sn, drawer, qcm

    def d_owner(self, s: int, t: int) -> int:
        """Global Hub of SN *s* where the D cable between SNs *s* and *t* ends."""
        j = (t - s - 1) % self.supernodes
        return s * HUBS_PER_SN + j % HUBS_PER_SN

    def middle_candidates(self, a: int, t: int) -> list[int]:
        """SNs (not *t*) reachable over a D cable from a Hub in node *a*'s drawer."""
        s, drawer, _ = self.locate(a)
        key = (s, drawer, t)
        out = self._middles.get(key)
        if out is None:
            out = [m for m in range(self.supernodes) if m not in (s, t) and
                   (self.d_owner(s, m) % HUBS_PER_SN) // QCMS_PER_DRAWER == drawer]
            if len(self._middles) < MIDDLES_CACHE_LIMIT:
                self._middles[key] = out
        return out

    def striped_flows(self, src: int, dst: int,
                      nbytes: int) -> tuple[tuple[tuple[LinkId, ...], float], ...]:
        """The parts of a message striped over the middle SNs (``routing=indirect``,
        ``striping=true``): ``((links, bytes), ...)`` for the fluid contention layer.

        The modeling tutorial ("Communication Cost with striping", "+X Dim") sends an
        indirect-routed inter-SN message ``1/N`` over each of the ``N`` middle SNs its
        drawer reaches, in 2 KB packets, so a D link carries ``C_i / N_i`` of the
        messages routed through it.  Here a message of ``S`` bytes is
        ``n = min(N, ceil(S / packet))`` equal parts over the routes via ``n``
        consecutive middles starting at the unstriped choice
        (``candidates[dst_node % N]``), as :func:`netmodels.bluewaters_striping.
        striped_link_loads` counts them (``n = N`` there).  Messages inside an SN, and
        between SNs with no middle, keep their one route.
        """
        a, b = self.node_of(src), self.node_of(dst)
        if a == b:
            return ()
        chips = (self.chip_of(src), self.chip_of(dst))
        sa, sb = a // HUBS_PER_SN, b // HUBS_PER_SN
        middle = self.middle_candidates(a, sb) if sa != sb else []
        if not middle:
            return ((self.chip_route(a, b, chips), float(nbytes)),)
        n = min(len(middle), max(1, math.ceil(nbytes / self.packet)))
        first = b % len(middle)
        return tuple((self.route_via(a, b, (sa, middle[(first + i) % len(middle)], sb), chips),
                      nbytes / n) for i in range(n))

    # -- routing ------------------------------------------------------------------
    def _hub_hop(self, x: int, y: int) -> list[LinkId]:
        """The Hub-to-Hub hop inside an SN: the LI or Lr link ``x -> y``; with striping,
        Hub *x*'s pool of LI or Lr links (``(kind, x, STRIPED)``, see :meth:`links`)."""
        if x == y:
            return []
        kind = "LI" if x // QCMS_PER_DRAWER == y // QCMS_PER_DRAWER else "Lr"
        return [(kind, x, STRIPED if self.striping else y)]

    def node_route(self, a: int, b: int) -> tuple[LinkId, ...]:
        sa, sb = a // HUBS_PER_SN, b // HUBS_PER_SN
        if sa == sb:
            return self.route_via(a, b, (sa,))
        middle = self.middle_candidates(a, sb) if self.routing == "indirect" else []
        return self.route_via(a, b, (sa, middle[b % len(middle)], sb) if middle else (sa, sb))

    def route_via(self, a: int, b: int, sns: Sequence[int],
                  chips: tuple[int, int] = (0, 0)) -> tuple[LinkId, ...]:
        """Links from node *a* to node *b* through the supernodes *sns* (first is *a*'s,
        last is *b*'s): ``(sa,)`` inside an SN, ``(sa, sb)`` direct, ``(sa, m, sb)`` via *m*;
        from chip ``chips[0]`` of *a* to chip ``chips[1]`` of *b*."""
        path: list[LinkId] = [("W+", a, chips[0])]
        here = a
        for s, t in zip(sns, sns[1:]):
            path += self._hub_hop(here, self.d_owner(s, t))
            path.append(("D", s, t))
            here = self.d_owner(t, s)              # landing Hub of the cable in SN t
        path += self._hub_hop(here, b)
        path.append(("W-", b, chips[1]))
        return tuple(path)

    def chip_of(self, rank: int) -> int:
        """P7 chip of *rank* in its QCM: ``core // 8`` (each chip has its own W link)."""
        self.node_of(rank)                       # prepares, or names a bad rank
        return self._mapping.cores[rank] // CORES_PER_CHIP

    def chip_route(self, a: int, b: int, chips: tuple[int, int]) -> tuple[LinkId, ...]:
        """:meth:`route_nodes` from chip ``chips[0]`` of node *a* to chip ``chips[1]`` of
        node *b* (the cached route's W links put on those chips)."""
        links = self.route_nodes(a, b)
        if not links or chips == (0, 0):
            return links
        return (("W+", a, chips[0]),) + links[1:-1] + (("W-", b, chips[1]),)

    def route(self, src: int, dst: int) -> tuple[LinkId, ...]:
        """Links crossed by the message of rank *src* to rank *dst*: :meth:`route_nodes`
        with the W links of the ranks' own chips."""
        return self.chip_route(self.node_of(src), self.node_of(dst),
                               (self.chip_of(src), self.chip_of(dst)))

    def _channels(self, kind: str, nbytes: float, a: int, b: int) -> float:
        if not self.striping:
            return 1.0
        if kind == "LI":
            n = QCMS_PER_DRAWER - 1
        elif kind == "Lr":
            n = HUBS_PER_SN - QCMS_PER_DRAWER
        elif kind == "D" and self.routing == "indirect":
            n = max(1, len(self.middle_candidates(a, b // HUBS_PER_SN)))
        else:
            n = 1
        return float(min(n, max(1, math.ceil(nbytes / self.packet))))

    def hop_terms(self, a: int, b: int, nbytes: float) -> list[tuple[float, float, float, float]]:
        """``(L_i, B_i, N_i, C_i = 1)`` per hop of the route from node *a* to node *b*."""
        # Blue Waters link ids are tuples whose first item is the link class
        return [(*self._class[link[0]], self._channels(link[0], nbytes, a, b), 1.0)  # type: ignore[index]
                for link in self.route_nodes(a, b)]

    def node_cost(self, a: int, b: int, nbytes: int) -> SimTime:
        return self.latency + percs_cost(nbytes, self.hop_terms(a, b, nbytes))

    def min_node_cost(self) -> SimTime:
        """``latency + 2 L_W + min(L_LI, L_Lr[, L_D])``: every route between two QCMs
        crosses W+ and W- and, inside an SN, one LI or Lr hop, between SNs at least one D
        (``W+ D W-`` when the source Hub owns the cable and it lands on the destination's
        Hub); the D term counts only with two SNs or more."""
        hops = [self.li_latency, self.lr_latency]
        if self.supernodes > 1:
            hops.append(self.d_latency)
        return self.latency + 2 * self.w_latency + min(hops)

    def links(self) -> dict[LinkId, tuple[float, float]]:
        """``{link: (bandwidth, latency)}`` for the fluid contention layer.

        Each QCM has four W links each way, one per P7 chip (tutorial: "W (x4)"), so the
        chips of a QCM inject side by side; a chip's cores share its W link.

        With striping a message crosses an SN's Hub-to-Hub hop over all of the first
        Hub's links of that class at once (``N_LI = 7``, ``N_Lr = 24``, as in the cost:
        ``max(S / (N_i B_i))``), so that hop is one pool per Hub and class of ``N_i B_i``:
        a lone message then takes no longer in the fluid layer than its cost says, and
        the messages a Hub sends or forwards share its pool.
        """
        out: dict[LinkId, tuple[float, float]] = {}
        for q in range(self.num_nodes()):
            for chip in range(CHIPS_PER_QCM):        # "W (x4): local P7 QCM"
                out[("W+", q, chip)] = (self.w_bandwidth, self.w_latency)
                out[("W-", q, chip)] = (self.w_bandwidth, self.w_latency)
            if self.striping:
                out[("LI", q, STRIPED)] = ((QCMS_PER_DRAWER - 1) * self.li_bandwidth,
                                          self.li_latency)
                out[("Lr", q, STRIPED)] = ((HUBS_PER_SN - QCMS_PER_DRAWER) * self.lr_bandwidth,
                                          self.lr_latency)
                continue
            sn = q // HUBS_PER_SN
            for r in range(sn * HUBS_PER_SN, (sn + 1) * HUBS_PER_SN):
                if r != q:
                    kind = "LI" if q // QCMS_PER_DRAWER == r // QCMS_PER_DRAWER else "Lr"
                    out[(kind, q, r)] = (self._class[kind][1], self._class[kind][0])
        for s in range(self.supernodes):
            for t in range(self.supernodes):
                if s != t:
                    out[("D", s, t)] = (self.d_bandwidth, self.d_latency)
        return out

    def gap(self, src: int, nbytes: int) -> SimTime:
        return nbytes / self.w_bandwidth


@register_mapping
class GridMapping2D(Mapping):
    """The tutorial's 2-D process-grid mapping onto Blue Waters (modeling tutorial, "2D Example").

    From a spec: ``mapping=grid2d:px=32;py=32[;chip=4x2;qcm=2x2;drawer=4x2;sn=1x4]``
    (``bsim run ... --network "bluewaters:supernodes=1,mapping=grid2d:px=32;py=32"``).

    A ``px x py`` grid (rank = x + px*y) is tiled hierarchically: ``chip``
    ranks per P7 chip (default 4x2), ``qcm`` chips per QCM (2x2, so 8x4
    ranks), ``drawer`` QCMs per drawer (4x2), ``sn`` drawers per SN (1x4,
    so 32x32 ranks per SN); SNs are numbered x fastest.  Nodes are QCMs
    numbered as in :class:`BlueWaters`.
    """

    name = "grid2d"

    def __init__(self, px: int = 32, py: int = 32, chip: tuple[int, int] = (4, 2),
                 qcm: tuple[int, int] = (2, 2), drawer: tuple[int, int] = (4, 2),
                 sn: tuple[int, int] = (1, 4)) -> None:
        super().__init__()
        for label, tile, size in (("chip", chip, CORES_PER_CHIP), ("qcm", qcm, CHIPS_PER_QCM),
                                  ("drawer", drawer, QCMS_PER_DRAWER),
                                  ("sn", sn, DRAWERS_PER_SN)):
            if tile[0] * tile[1] != size:
                raise MappingError(f"grid2d: {label} tile {tile} must hold {size}")
        self.px, self.py = px, py
        self.tiles = (chip, qcm, drawer, sn)
        span_x = chip[0] * qcm[0] * drawer[0] * sn[0]
        span_y = chip[1] * qcm[1] * drawer[1] * sn[1]
        if px % span_x or py % span_y:
            raise MappingError(f"grid2d: grid {px}x{py} is not a whole number of "
                               f"{span_x}x{span_y} supernodes")
        self.sn_cols = px // span_x

    @classmethod
    def from_items(cls, spec: str, items: dict[str, str], cores_per_node: int | None,
                   nodes: int | None) -> GridMapping2D:
        """``grid2d:px=X;py=Y[;chip=AxB;qcm=AxB;drawer=AxB;sn=AxB]``."""
        from .mapping import only_keys
        only_keys(spec, items, {"px", "py", "chip", "qcm", "drawer", "sn"})
        kw: dict[str, object] = {}
        try:
            for key in ("px", "py"):
                if key in items:
                    kw[key] = int(items[key])
            for key in ("chip", "qcm", "drawer", "sn"):
                if key in items:
                    a, b = items[key].lower().split("x")
                    kw[key] = (int(a), int(b))
        except ValueError:
            raise MappingError(f"mapping spec {spec!r}: px, py are integers and tiles AxB "
                               f"(e.g. chip=4x2)") from None
        return cls(**kw)  # type: ignore[arg-type]

    def _check(self, nranks: int) -> None:
        if nranks != self.px * self.py:
            raise MappingError(f"grid2d: grid {self.px}x{self.py} holds {self.px * self.py} "
                               f"ranks, run has {nranks}")

    def _place(self, rank: int) -> tuple[int, int]:
        (cx, cy), (qx, qy), (dx, dy), (sx, sy) = self.tiles
        y, x = divmod(rank, self.px)
        chip_x, chip_y = x // cx, y // cy
        qcm_x, qcm_y = chip_x // qx, chip_y // qy
        drw_x, drw_y = qcm_x // dx, qcm_y // dy
        sn_x, sn_y = drw_x // sx, drw_y // sy
        supernode = sn_x + self.sn_cols * sn_y
        drawer = drw_x % sx + sx * (drw_y % sy)
        qcm = qcm_x % dx + dx * (qcm_y % dy)
        node = (supernode * DRAWERS_PER_SN + drawer) * QCMS_PER_DRAWER + qcm
        chip = chip_x % qx + qx * (chip_y % qy)
        core = chip * CORES_PER_CHIP + x % cx + cx * (y % cy)
        return node, core

    def __repr__(self) -> str:
        return f"<GridMapping2D {self.px}x{self.py}>"
