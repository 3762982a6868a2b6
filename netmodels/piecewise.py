"""Flat models with size ranges and node structure: piecewise Tmsg(L), ranged LogGP, two-level.

All three are topology-free: any two ranks on different nodes cost the same.

* ``piecewise``: the tutorial's piecewise-linear ``Tmsg(L) = t0 + L*tB`` with
  one ``(t0, tB)`` per size range (modeling tutorial, "A Time-Based View of
  Communication").
* ``loggp_ranges``: LogGP whose ``L, o, g, G`` change with the message size
  (MILC paper, Sec. III-C, the Netgauge table: one row per size range).
* ``twolevel``: one flat model for ranks on one node and another between
  nodes; ranks are placed on nodes by a :mod:`netmodels.mapping` spec.  Under
  the fluid contention layer (``bsim run --contention fluid``) the ranks of a
  node share its NICs (``bsim/engine/fabric.py``, ``docs/networks.md``).

Lists inside one spec value are separated by ``/`` (``;`` is accepted too at
the top level): ``piecewise:breaks=32/1024,t0=5e-6/5e-6/10e-6,tb=0/15e-9/3.4e-9``.
Piece ``i`` covers sizes ``breaks[i-1] < L <= breaks[i]`` (the first starts at
0, the last is unbounded), so there is one more piece than breaks.  A single
value applies to every piece.

A ``twolevel`` spec nests two model specs; their keys are separated by ``;``
(as a mapping spec inside a network spec) and their lists by ``/``::

    twolevel:cores=16,intra=hockney:latency=5e-7;bandwidth=2e10,inter=loggp_ranges
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from typing import Any

from .base import NetworkModel, NetworkSpecError, Rank, SimTime, register
from .mapping import Mapping, MappingError, build_mapping

__all__ = ["Piecewise", "LogGPRanges", "TwoLevel", "parse_list"]

NIC_CAPACITY = 1.0
"""Capacity of a ``twolevel`` NIC link in the fluid layer: one second of transfer per second."""


def parse_list(model: str, key: str, value: Any, kind: type = float) -> list[Any]:
    """``"32/1024"`` / ``"1e-6;2e-6"`` / ``5e-6`` / ``[1, 2]`` -> list of *kind*.

    Raises :class:`NetworkSpecError` naming *model* and *key* for a value that
    does not parse or is negative or not finite.
    """
    parts: list[Any]
    if isinstance(value, str):
        parts = value.replace(";", "/").split("/")
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        parts = [value]
    elif isinstance(value, Sequence):
        parts = list(value)
    else:
        raise NetworkSpecError(f"{model}: {key} must be a list like 1/2/3, got {value!r}")
    out: list[Any] = []
    for part in parts:
        try:
            x = kind(float(part)) if kind is int else kind(part)
        except (TypeError, ValueError):
            raise NetworkSpecError(f"{model}: {key}: expected numbers separated by '/', "
                                   f"got {value!r}") from None
        if kind is int and float(part) != x:
            raise NetworkSpecError(f"{model}: {key}: expected whole numbers, got {value!r}")
        if not math.isfinite(x) or x < 0:
            raise NetworkSpecError(f"{model}: {key}: values must be finite and >= 0, "
                                   f"got {value!r}")
        out.append(x)
    if not out:
        raise NetworkSpecError(f"{model}: {key} is empty")
    return out


def _format_list(values: Sequence[float]) -> str:
    return "/".join(repr(v) if isinstance(v, float) else str(v) for v in values)


class _Ranged:
    """Mixin: size-range lookup over strictly increasing ``breaks``."""

    _breaks: list[int]

    def _init_breaks(self, model: str, breaks: Any) -> None:
        if breaks in ("", None):
            self._breaks = []
        else:
            self._breaks = parse_list(model, "breaks", breaks, int)
        if any(b >= c for b, c in zip(self._breaks, self._breaks[1:], strict=False)):
            raise NetworkSpecError(f"{model}: breaks must increase strictly, got {breaks!r}")
        self.breaks = _format_list(self._breaks)

    def _per_piece(self, model: str, key: str, value: Any) -> list[float]:
        values = parse_list(model, key, value)
        pieces = len(self._breaks) + 1
        if len(values) == 1:
            values = values * pieces
        if len(values) != pieces:
            raise NetworkSpecError(f"{model}: {key} needs {pieces} values (one per size range "
                                   f"of breaks={self.breaks or 'none'}) or one, got {value!r}")
        return values

    def piece(self, nbytes: int) -> int:
        """Index of the size range holding *nbytes*: ``breaks[i-1] < nbytes <= breaks[i]``."""
        return bisect_left(self._breaks, nbytes)

    def _lower_ends(self) -> list[int]:
        return [0] + self._breaks


@register
class Piecewise(_Ranged, NetworkModel):
    """Piecewise-linear ``Tmsg(L) = t0[i] + L * tb[i]`` for ``L`` in size range ``i``.

    Source: the tutorial (modeling tutorial, "A Time-Based View of Communication"):
    ``0 <= L <= 32``: 5 us; ``64 <= L <= 1024``: 5 us + 15 ns * L;
    ``L > 1024``: 10 us + 3.4 ns * L (the defaults; sizes 33..63, which the
    slide skips, take the middle piece).  Under ``loggp`` there are no CPU
    overheads, the NIC is busy ``L * tb[i]`` and the wire time is ``Tmsg(L)``.
    """

    name = "piecewise"
    parameters = {
        "breaks": "bytes: upper ends of all size ranges but the last, e.g. 32/1024",
        "t0": "seconds per message in each range (start-up time), e.g. 5e-6/5e-6/10e-6",
        "tb": "seconds per byte in each range, e.g. 0/15e-9/3.4e-9",
    }

    def __init__(self, breaks: Any = "32/1024", t0: Any = "5e-6/5e-6/10e-6",
                 tb: Any = "0/15e-9/3.4e-9") -> None:
        self._init_breaks(self.name, breaks)
        self._t0 = self._per_piece(self.name, "t0", t0)
        self._tb = self._per_piece(self.name, "tb", tb)
        self.t0 = _format_list(self._t0)
        self.tb = _format_list(self._tb)

    def cost(self, src: Rank, dst: Rank, nbytes: int) -> SimTime:
        if src == dst:
            return 0.0
        i = bisect_left(self._breaks, nbytes)
        return self._t0[i] + nbytes * self._tb[i]

    def wire(self, src: Rank, dst: Rank, nbytes: int) -> SimTime:
        return self.cost(src, dst, nbytes)

    def gap(self, src: Rank, nbytes: int) -> SimTime:
        return nbytes * self._tb[bisect_left(self._breaks, nbytes)]

    def min_cost(self) -> SimTime:
        pieces = zip(self._t0, self._tb, self._lower_ends(), strict=True)
        return min(t0 + lo * tb for t0, tb, lo in pieces)


@register
class LogGPRanges(_Ranged, NetworkModel):
    """LogGP with one ``(L, o, g, G)`` row per size range: ``2o + (s-1)G + L``.

    Source: the MILC paper, Sec. III-C (Netgauge LogGP table of the POWER5+ cluster;
    rows ``0 < S <= 32768`` and ``S > 32768``).  The defaults are its
    inter-node rows: ``L = 5.8 us``, ``o = 14 / 40 us``, ``g = 3.3 us``,
    ``G = 0.0013 / 0.0011 us/B``; the intra-node rows are
    ``L=2.7e-6,o=3.5e-6/33.5e-6,g=3e-6,G=6.8e-10/4.5e-10``.  Per message of
    ``s`` bytes in range ``i``: the sender and the receiver pay ``o[i]``, the
    NIC is busy ``max(g[i], (s-1)G[i])`` and the wire takes ``(s-1)G[i] + L[i]``.
    """

    name = "loggp_ranges"
    parameters = {
        "breaks": "bytes: upper ends of all size ranges but the last, e.g. 32768",
        "L": "wire latency per range, seconds",
        "o": "CPU overhead per send and per receive per range, seconds",
        "g": "minimum gap between injections per range, seconds",
        "G": "gap per byte per range, seconds/byte",
    }

    def __init__(self, breaks: Any = 32768, L: Any = 5.8e-6, o: Any = "14e-6/40e-6",
                 g: Any = 3.3e-6, G: Any = "1.3e-9/1.1e-9") -> None:
        self._init_breaks(self.name, breaks)
        self._L = self._per_piece(self.name, "L", L)
        self._o = self._per_piece(self.name, "o", o)
        self._g = self._per_piece(self.name, "g", g)
        self._G = self._per_piece(self.name, "G", G)
        self.L, self.o, self.g, self.G = (_format_list(v) for v in
                                          (self._L, self._o, self._g, self._G))

    def cost(self, src: Rank, dst: Rank, nbytes: int) -> SimTime:
        i = bisect_left(self._breaks, nbytes)
        if src == dst:
            return 2 * self._o[i]
        return 2 * self._o[i] + max(nbytes - 1, 0) * self._G[i] + self._L[i]

    def send_overhead(self, nbytes: int) -> SimTime:
        return self._o[bisect_left(self._breaks, nbytes)]

    def recv_overhead(self, nbytes: int) -> SimTime:
        return self._o[bisect_left(self._breaks, nbytes)]

    def gap(self, src: Rank, nbytes: int) -> SimTime:
        i = bisect_left(self._breaks, nbytes)
        return max(self._g[i], max(nbytes - 1, 0) * self._G[i])

    def wire(self, src: Rank, dst: Rank, nbytes: int) -> SimTime:
        if src == dst:
            return 0.0
        i = bisect_left(self._breaks, nbytes)
        return max(nbytes - 1, 0) * self._G[i] + self._L[i]

    def min_cost(self) -> SimTime:
        return min(2 * o + L for o, L in zip(self._o, self._L, strict=True))

    def min_wire(self) -> SimTime:
        return min(self._L)


POWER5_INTRA = "loggp_ranges:breaks=32768;L=2.7e-6;o=3.5e-6/33.5e-6;g=3e-6;G=6.8e-10/4.5e-10"
"""The MILC paper's intra-node LogGP rows of the POWER5+ cluster (Sec. III-C), as a nested spec."""


def _inner(which: str, spec: str | NetworkModel) -> NetworkModel:
    from .base import build_network
    if isinstance(spec, str):
        spec = spec.replace(";", ",")
    model = build_network(spec)
    if hasattr(model, "route") or hasattr(model, "contention_flows"):
        raise NetworkSpecError(f"twolevel: {which} must be a flat model (hockney, loggp, "
                               f"loggp_ranges, piecewise...), got {model.name!r}")
    return model


@register
class TwoLevel(NetworkModel):
    """Intra-node and inter-node parameters: ``intra`` on one node, ``inter`` between nodes.

    ``cost(src, dst, s)`` is ``intra.cost`` when the mapping puts both ranks
    on one node, else ``inter.cost`` (a rank to itself: ``intra``'s rule).
    Source: the MILC paper, Sec. III-C (separate intra- and inter-node LogGP rows;
    the defaults are the POWER5+ node: 16 cores, 2 NICs).  The tutorial
    (modeling tutorial, "Other Factors Affecting Communication Performance") lists
    intra- vs inter-node performance and NIC contention as separate effects.

    Under ``loggp``: each pair is charged its own model's overheads
    (``pair_send_overhead``, ``pair_recv_overhead``) and wire time, so eager and
    rendezvous messages take what the picked model alone gives, at both ends;
    the NIC gap is ``inter``'s.  (``send_overhead(nbytes)``, asked without a
    pair, is the smaller of the two.)

    NIC sharing (only with the fluid contention layer): a node has ``nics``
    NICs, rank ``r`` injects through NIC ``core_of(r) % nics``.  An inter-node
    message is a flow of its uncontended transfer time ``inter.wire(s) -
    inter.wire(0)`` through that NIC, whose capacity is one second of transfer
    per second: ``k`` messages injecting at once through one NIC each progress
    at ``1/k`` of their lone speed (the tutorial's "a node with 16 cores and a
    single 2 GB/s NIC may deliver < 128 MB/s per processor").
    """

    name = "twolevel"
    parameters = {
        "intra": "flat model spec between ranks of one node (keys joined by ';')",
        "inter": "flat model spec between nodes (keys joined by ';')",
        "cores": "cores (rank slots) per node",
        "nics": "NICs per node, shared by its ranks under --contention fluid",
        "mapping": "rank->node mapping spec: block, roundrobin:nodes=N, file:PATH, ...",
    }

    def __init__(self, intra: str | NetworkModel = POWER5_INTRA,
                 inter: str | NetworkModel = "loggp_ranges", cores: int = 16, nics: int = 2,
                 mapping: str | Mapping = "block") -> None:
        for key, value in (("cores", cores), ("nics", nics)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise NetworkSpecError(f"twolevel: {key} must be an int >= 1, got {value!r}")
        self._intra = _inner("intra", intra)
        self._inter = _inner("inter", inter)
        self.intra = self._intra.spec().replace(",", ";")
        self.inter = self._inter.spec().replace(",", ";")
        self.cores = cores
        self.nics = nics
        self._nics_given = nics != 2   # the default: a setting to warn of when inert
        try:
            self._mapping = build_mapping(mapping, cores_per_node=cores)
        except MappingError as exc:
            raise NetworkSpecError(f"twolevel: {exc}") from None
        self.mapping = mapping if isinstance(mapping, str) else repr(mapping)
        self._node: list[int] | None = None
        self._core: list[int] | None = None

    # -- placement ----------------------------------------------------------
    def prepare(self, nranks: int) -> None:
        """Bind the mapping to *nranks* ranks; refuse more than ``cores`` ranks on a node."""
        try:
            self._mapping.prepare(nranks)
        except MappingError as exc:
            raise NetworkSpecError(f"twolevel: {exc}") from None
        for node, count in self._mapping.ranks_per_node().items():
            if count > self.cores:
                raise NetworkSpecError(f"twolevel: mapping places {count} ranks on node {node} "
                                       f"but nodes have cores={self.cores}")
        self._node = self._mapping.nodes
        self._core = self._mapping.cores

    def placement(self) -> list[int] | None:
        return self._node

    def inert(self, contention: bool, protocol: str) -> list[str]:
        own = [] if contention or not self._nics_given else \
            [f"nics={self.nics} (NICs are shared only by --contention fluid's flows)"]
        return own + self._inter.inert(contention, protocol)

    def node_of(self, rank: Rank) -> int:
        """Node hosting *rank* (before :meth:`prepare`: the mapping's formula)."""
        if self._node is not None:
            return self._node[rank]
        try:
            return self._mapping._place(rank)[0]
        except (IndexError, MappingError):
            raise NetworkSpecError(f"twolevel: call prepare(nranks) before asking for rank "
                                   f"{rank}") from None

    def _pick(self, src: Rank, dst: Rank) -> NetworkModel:
        nodes = self._node
        if nodes is not None:   # hot path: prepared
            return self._intra if nodes[src] == nodes[dst] else self._inter
        return self._intra if self.node_of(src) == self.node_of(dst) else self._inter

    # -- NetworkModel -----------------------------------------------------------
    def cost(self, src: Rank, dst: Rank, nbytes: int) -> SimTime:
        return self._pick(src, dst).cost(src, dst, nbytes)

    def send_overhead(self, nbytes: int) -> SimTime:
        return min(self._intra.send_overhead(nbytes), self._inter.send_overhead(nbytes))

    def recv_overhead(self, nbytes: int) -> SimTime:
        return min(self._intra.recv_overhead(nbytes), self._inter.recv_overhead(nbytes))

    def pair_send_overhead(self, src: Rank, dst: Rank, nbytes: int) -> SimTime:
        return self._pick(src, dst).send_overhead(nbytes)

    def pair_recv_overhead(self, src: Rank, dst: Rank, nbytes: int) -> SimTime:
        return self._pick(src, dst).recv_overhead(nbytes)

    def gap(self, src: Rank, nbytes: int) -> SimTime:
        return self._inter.gap(src, nbytes)

    def wire(self, src: Rank, dst: Rank, nbytes: int) -> SimTime:
        return self._pick(src, dst).wire(src, dst, nbytes)

    def min_cost(self) -> SimTime:
        bounds = [self._inter.min_cost()]
        if self.cores > 1:
            bounds.append(self._intra.min_cost())
        return min(bounds)

    def min_wire(self) -> SimTime:
        """The inner models' bound (``wire`` is the picked model's)."""
        bounds = [self._inter.min_wire()]
        if self.cores > 1:
            bounds.append(self._intra.min_wire())
        return min(bounds)

    # -- NIC sharing (fluid contention layer) -----------------------------------
    def _nic(self, rank: Rank, way: str = "nic") -> tuple[str, int, int]:
        """Rank *rank*'s NIC, one direction: ``"nic"`` (injection) or ``"nic_in"``."""
        core = self._core[rank] if self._core is not None else self._mapping._place(rank)[1]
        return (way, self.node_of(rank), core % self.nics)

    def route(self, src: Rank, dst: Rank) -> tuple[tuple[str, int, int], ...]:
        """The NIC links of an inter-node message: the sender's injection, the receiver's
        reception (a NIC is full duplex); ``()`` on one node."""
        if self._pick(src, dst) is self._intra:
            return ()
        return (self._nic(src), self._nic(dst, "nic_in"))

    def links(self) -> dict[tuple[str, int, int], tuple[float, float]]:
        """Both directions of every NIC of the nodes in use: ``("nic", node, k)`` and
        ``("nic_in", node, k) -> (1.0, 0.0)`` (after prepare)."""
        if self._node is None:
            raise NetworkSpecError("twolevel: call prepare(nranks) before links()")
        return {(way, node, k): (NIC_CAPACITY, 0.0) for way in ("nic", "nic_in")
                for node in sorted(set(self._node)) for k in range(self.nics)}

    def contention_flows(self, src: Rank, dst: Rank,
                         nbytes: int) -> tuple[tuple[tuple[Any, ...], float], ...]:
        """``((links, size),)`` for the fluid layer: the two NICs and the lone transfer time."""
        if self._pick(src, dst) is self._intra:
            return ()
        inter = self._inter
        return ((self.route(src, dst), inter.wire(src, dst, nbytes) - inter.wire(src, dst, 0)),)
