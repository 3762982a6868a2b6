"""What the compute-noise models share: the counter-based generator and where a rank runs.

* :func:`uniform` (SplitMix64 of an integer key): every random draw of the noise models
  (daemon phases, detour arrivals and lengths, network delays) is a pure function of its
  key, so results never depend on the order in which ranks ask.
* :class:`OnNodes`: the ``(node, core)`` of a rank, either the run's network placement
  (``layout=network``: the node its ``cores`` and ``mapping`` put each rank on, cores in
  rank order within a node) or the block layout (``node = rank // ranks_per_node``,
  ``core = rank % ranks_per_node``) when the network places no ranks.
  :func:`check_block_agrees` refuses a block layout (``ranks_per_node=R`` or
  ``layout=block``) that groups the ranks otherwise than the network does: a daemon
  must stop the ranks that share a node in the run, not others.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

__all__ = ["uniform", "OnNodes", "check_block_agrees"]

_M64 = (1 << 64) - 1


def _mix(x: int) -> int:
    """SplitMix64 finaliser: a bijective scramble of a 64-bit integer."""
    x = (x + 0x9E3779B97F4A7C15) & _M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


def uniform(*key: int) -> float:
    """A uniform float in ``(0, 1)`` determined by the integer *key* alone (counter-based)."""
    h = 0x2545F4914F6CDD1D
    for k in key:
        h = _mix(h ^ (k & _M64))
    return ((h >> 11) + 0.5) * (1.0 / (1 << 53))


def _exponential(mean: float, *key: int) -> float:
    """An exponential of mean *mean* drawn from *key* (inverse transform of :func:`uniform`)."""
    return -mean * math.log(uniform(*key))


def _check_cores(cores_per_node: Any) -> int:
    """``cores_per_node``: a number >= 1, as an int."""
    if isinstance(cores_per_node, bool) or not isinstance(cores_per_node, (int, float)) \
            or not cores_per_node >= 1:
        raise ValueError(f"noise: cores_per_node must be >= 1, got {cores_per_node!r}")
    return int(cores_per_node)


def _check_rpn(ranks_per_node: Any, cores_per_node: int) -> int:
    """``ranks_per_node``: an int in ``[1, cores_per_node]`` (default: ``cores_per_node``)."""
    if ranks_per_node is None:
        return cores_per_node
    if (isinstance(ranks_per_node, bool) or not isinstance(ranks_per_node, int)
            or not 1 <= ranks_per_node <= cores_per_node):
        raise ValueError(f"noise: ranks_per_node must be an int in 1..{cores_per_node} "
                         f"(cores_per_node), got {ranks_per_node!r}")
    return ranks_per_node


def _check_core(core: Any, cores_per_node: int) -> int | None:
    """``core=K``: an int in ``[0, cores_per_node)``; None (the default): the whole node."""
    if core is None or core == "all":
        return None
    if isinstance(core, bool) or not isinstance(core, int) or not 0 <= core < cores_per_node:
        raise ValueError(f"noise: core must be an int in 0..{cores_per_node - 1} (a core of "
                         f"the node) or 'all', got {core!r}")
    return core


class OnNodes:
    """Where a compute-noise model finds a rank: ``(node, core)``.

    Block layout (the default without a placement): ranks fill the first
    ``ranks_per_node`` cores of each node in rank order.  :meth:`place` takes the run's
    network placement instead (``layout=network``: the node its ``cores`` and ``mapping``
    put each rank on, cores in rank order within a node), so the daemons stop the ranks
    the network puts together.
    """

    ranks_per_node: int
    cores_per_node: int
    core: int | None = None
    where: list[tuple[int, int]] | None = None

    # the model's: when *work* seconds of computation started at *t* on *node* end
    end: Callable[[int, float, float], float]

    def stretch(self, rank: int, start: float, seconds: float) -> float:
        """Wall duration of *seconds* of work started at *start* on *rank*'s node (only
        ranks on the noisy ``core`` when the model names one)."""
        node, core = self.locate(rank)
        if self.core is not None and core != self.core:
            return seconds
        return max(self.end(node, start, seconds) - start, seconds)

    def place(self, nodes: list[int]) -> None:
        """Use *nodes* (the node of each rank) as the layout; ValueError when the network
        puts more ranks on a node than the noise's ``cores_per_node``."""
        used: dict[int, int] = {}
        where = []
        for node in nodes:
            core = used.get(node, 0)
            used[node] = core + 1
            where.append((node, core))
        node, most = max(used.items(), key=lambda item: item[1], default=(0, 0))
        if most > self.cores_per_node:
            raise ValueError(f"noise: cores_per_node={self.cores_per_node}, but the network "
                             f"puts {most} ranks on node {node}; the noise's nodes are the "
                             f"network's (leave cores_per_node out or give at least {most})")
        self.where = where

    def locate(self, rank: int) -> tuple[int, int]:
        """``(node, core)`` of *rank* (ranks spawned past the placement: block layout)."""
        where = self.where
        if where is not None and rank < len(where):
            return where[rank]
        return divmod(rank, self.ranks_per_node)

    def layout_spec(self) -> str:
        """The spec's layout options: ``ranks_per_node`` (block) or ``layout=network``."""
        if self.where is not None:
            return ",layout=network"
        return (f",ranks_per_node={self.ranks_per_node}"
                if self.ranks_per_node != self.cores_per_node else "")


def check_block_agrees(spec: str, ranks_per_node: int, asked: str, placement: list[int]
                       ) -> None:
    """Refuse a block layout of *ranks_per_node* that groups ranks otherwise than the
    network's *placement* (the node of each rank).

    Two layouts agree when every rank shares a node with the same ranks: the first rank
    of each rank's node is the same (node numbers may differ).  *asked* names what asked
    for the block layout (``ranks_per_node=3``, ``layout=block``).  Raises ValueError
    naming the first two ranks the layouts place differently.
    """
    first: dict[int, int] = {}
    for rank, node in enumerate(placement):
        on_net = first.setdefault(node, rank)
        on_block = rank - rank % ranks_per_node
        if on_net == on_block:
            continue
        one, two = ("the network", asked) if on_net < on_block else (asked, "the network")
        raise ValueError(f"noise spec {spec!r}: {one} puts ranks {min(on_net, on_block)} "
                         f"and {rank} on one node, {two} on two; the noise's nodes are the "
                         f"network's: leave {asked} out, or give the network that mapping")
