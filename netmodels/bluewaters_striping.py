"""Fractional link loads of Blue Waters' indirect routing with striping.

The modeling tutorial ("II: Novel Architectures: Blue Waters", slides
"Communication Cost with striping", "Communication Pattern Cost", "2D
Example", "+X Dim", "+Y Dim") prices a message as

    T_msg = sum_i L_i + max_i (C_i * (S / N_i) / B_i)

with ``C_i`` the number of messages sharing a channel of class ``i`` and
``N_i`` the channels the message is striped over.  Under indirect routing a
message from SN ``A`` to SN ``B`` can use every middle SN reachable from the
D links of its drawer (8 Hubs x 16 D = 128 at 513 SNs, see
:meth:`BlueWaters.middle_candidates`).  :func:`striped_link_loads` sends each
such message as ``N`` equal parts, ``1/N`` over each of its ``N`` middle SNs
(:meth:`BlueWaters.route_via`), and sums, per directed link, the parts
crossing it.  The result is ``C_i / N_i`` of the formula in units of whole
messages: a D link carrying the 8 messages of a drawer striped over 128
middle SNs reads ``8/128``, the tutorial's "C = 8/128 on D".

Intra-SN messages, direct routing and messages with no middle SN keep their
single route (weight 1), as in :func:`netmodels.topology.link_loads`; the
model's own ``striping`` flag (``N_LI = 7``, ``N_Lr = 24`` in its cost) is not
used here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from .base import Rank
from .bluewaters import HUBS_PER_SN, QCMS_PER_DRAWER, BlueWaters
from .topology import LinkId

__all__ = ["striped_link_loads", "striped_node_loads", "striped_step_loads",
           "node_pair_counts"]


def node_pair_counts(model: BlueWaters, pairs: Iterable[tuple[Rank, Rank]]) -> Counter[
        tuple[int, int, int, int]]:
    """Messages per (source node, destination node, source chip, destination chip) for
    rank pairs (same-node pairs dropped); the chips choose the W links."""
    counts: Counter[tuple[int, int, int, int]] = Counter()
    for src, dst in pairs:
        a, b = model.node_of(src), model.node_of(dst)
        if a != b:
            counts[a, b, model.chip_of(src), model.chip_of(dst)] += 1
    return counts


def _steps(route: tuple[LinkId, ...]) -> list[str]:
    """Step of each link of an inter-SN route (one D hop direct, two indirect)."""
    kinds = [link[0] for link in route]  # type: ignore[index]
    names = ["first", "middle", "last"] if kinds.count("D") == 2 else ["first", "last"]
    out, at = [], 0
    for kind in kinds:
        if kind == "D":
            out.append("D")
            at += 1
        else:
            out.append(names[at])
    return out


def striped_step_loads(model: BlueWaters, counts: Mapping[tuple[int, ...], float]
                       ) -> dict[str, dict[LinkId, float]]:
    """:func:`striped_node_loads` split by the step of the route that puts the load:
    ``"intra"`` (routes inside one SN), and for inter-SN routes ``"first"`` (W+ and the
    hop to the D exit in the source SN), ``"D"``, ``"middle"`` (the hop inside the
    middle SN) and ``"last"`` (the hops inside the destination SN, W- included).  Keys of
    *counts* are ``(a, b)`` (chip 0 at both ends) or ``(a, b, chip_a, chip_b)``."""
    steps: dict[str, dict[LinkId, float]] = {k: {} for k in
                                             ("intra", "first", "D", "middle", "last")}
    candidates: dict[tuple[int, int], list[int]] = {}
    for key, weight in counts.items():
        a, b = key[0], key[1]
        chips = (key[2], key[3]) if len(key) == 4 else (0, 0)
        if a == b or not weight:
            continue
        sa, sb = a // HUBS_PER_SN, b // HUBS_PER_SN
        if sa == sb:
            for link in model.chip_route(a, b, chips):
                steps["intra"][link] = steps["intra"].get(link, 0.0) + weight
            continue
        middles: list[int] = []
        if model.routing == "indirect":
            key = (a // QCMS_PER_DRAWER, sb)            # (global drawer of a, destination SN)
            if key not in candidates:
                candidates[key] = model.middle_candidates(a, sb)
            middles = candidates[key]
        routes = ([model.route_via(a, b, (sa, m, sb), chips) for m in middles] if middles
                  else [model.chip_route(a, b, chips)])
        share = weight / len(routes)
        for route in routes:
            for link, step in zip(route, _steps(route)):
                loads = steps[step]
                loads[link] = loads.get(link, 0.0) + share
    return steps


def striped_node_loads(model: BlueWaters,
                       counts: Mapping[tuple[int, ...], float]) -> dict[LinkId, float]:
    """Load per directed link when ``counts[a, b]`` messages go from node *a* to node *b*
    (``counts[a, b, chip_a, chip_b]``: between those chips).

    An inter-SN message under ``routing=indirect`` puts ``1/N`` on every link of
    each of its ``N`` routes (one per middle SN of :meth:`BlueWaters.middle_candidates`);
    any other message puts 1 on each link of :meth:`BlueWaters.route_nodes`.
    """
    total: dict[LinkId, float] = {}
    for loads in striped_step_loads(model, counts).values():
        for link, value in loads.items():
            total[link] = total.get(link, 0.0) + value
    return total


def striped_link_loads(model: BlueWaters,
                       pairs: Iterable[tuple[Rank, Rank]]) -> dict[LinkId, float]:
    """``C_i / N_i`` per link when every (src rank, dst rank) pair sends one message,
    each inter-SN message striped evenly over all its middle SNs (indirect routing).

    The striped form of :func:`netmodels.topology.link_loads`; see the module text
    for the tutorial's formula ``T_msg = sum L_i + max(C_i * (S / N_i) / B_i)``.
    """
    return striped_node_loads(model, node_pair_counts(model, pairs))
