"""NodeVolume layouts of 4-D process grids and their ISP and SSN metrics (layout paper).

Notation of the layout paper (He et al., ScalA'11, Sec. 3.1), all 4-tuples over the
directions x, y, z, t:

* ``L``: lattice size in sites; ``S``: subvolume size in sites (one per rank);
* ``N``: NodeVolume size, in subvolumes (ranks) per node in each direction;
* ``C``: NodeCut, number of NodeVolumes (nodes) in each direction;
* ``Q``: the process grid, ``Q_i = N_i * C_i`` subvolumes in direction i.

(Beware: the layout paper calls the *process grid* ``Q``; the node shape is ``N``.)

Metrics (layout paper, Sec. 3.2 and 3.3)::

    ISP = sum_i k_i * c_i * prod_{j != i} q_j,   k_i = 1 if c_i > 1 else 0
    nvs = N * S  (element-wise: NodeVolume size in sites)
    SSN = sum_i prod_{j != i} nvs_j

ISP counts the pairs of neighbouring subvolumes that sit on different nodes
(periodic lattice: ``c_i`` node boundaries per ring, each crossed by
``prod_{j != i} q_j`` pairs).  The layout paper's worked example ``Q=(4,4,2,1),
C=(1,1,2,2)`` gives ``4*4*2*1 + 4*4*2*2 = 32 + 64 = 96`` (its text writes
``16x2 + 32x2``; the example has ``q_t < c_t`` and so is not itself a
realisable layout, which is why :func:`isp` checks nothing).  The extracted
Eq. (2) repeats its last term; a 4-D box has four face orientations and we sum
four terms.  The layout paper's cost model is ``alpha*ISP + (1-alpha)*SSN``
(:func:`layout_cost`).

Ranks are numbered over the process grid with x fastest (MILC's
``node_number`` convention): ``rank = x + qx*(y + qy*(z + qz*t))``; nodes are
numbered the same way over the NodeCut grid, and cores within a node over the
NodeVolume.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

from .mapping import Mapping, MappingError, only_keys, register_mapping

__all__ = [
    "parse_shape", "isp", "ssn", "layout_cost", "node_shapes", "NodeVolumeMapping",
    "count_internode_pairs",
]

Shape = tuple[int, ...]


def parse_shape(text: str | Sequence[int]) -> Shape:
    """``"8x8x4x4"`` (or a sequence of ints) -> ``(8, 8, 4, 4)``; every entry >= 1."""
    if isinstance(text, str):
        try:
            shape = tuple(int(p) for p in text.lower().split("x"))
        except ValueError:
            raise MappingError(f"shape {text!r}: expected ints joined by 'x', "
                               f"like 8x8x4x4") from None
    else:
        shape = tuple(int(p) for p in text)
    if not shape or any(p < 1 for p in shape):
        raise MappingError(f"shape {text!r}: every extent must be >= 1")
    return shape


def _prod_except(values: Sequence[int], i: int) -> int:
    return math.prod(v for j, v in enumerate(values) if j != i)


def isp(q: Sequence[int], c: Sequence[int]) -> int:
    """Inter-node subvolume communication paths (layout paper, Sec. 3.2).

    *q* is the process grid (the paper's ``Q``), *c* the NodeCut (``C``).
    ``ISP = sum_i [c_i > 1] * c_i * prod_{j != i} q_j``.
    """
    if len(q) != len(c):
        raise ValueError(f"isp: Q {tuple(q)} and C {tuple(c)} differ in dimension")
    return sum(c[i] * _prod_except(q, i) for i in range(len(q)) if c[i] > 1)


def ssn(n: Sequence[int], s: Sequence[int]) -> int:
    """Sites on the surfaces of a NodeVolume (layout paper, Eq. 2).

    *n* is the NodeVolume in subvolumes (``N``), *s* the subvolume in sites
    (``S``); ``nvs = N*S`` and ``SSN = sum_i prod_{j != i} nvs_j``.
    """
    if len(n) != len(s):
        raise ValueError(f"ssn: N {tuple(n)} and S {tuple(s)} differ in dimension")
    nvs = [a * b for a, b in zip(n, s)]
    return sum(_prod_except(nvs, i) for i in range(len(nvs)))


def layout_cost(isp_value: float, ssn_value: float, alpha: float) -> float:
    """The layout paper Sec. 3.4: ``cost = alpha*ISP + (1 - alpha)*SSN``, ``0 <= alpha <= 1``."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"layout_cost: alpha must be in [0, 1], got {alpha!r}")
    return alpha * isp_value + (1.0 - alpha) * ssn_value


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def node_shapes(grid: Sequence[int], cores_per_node: int) -> Iterator[Shape]:
    """Every NodeVolume ``N`` with ``prod(N) == cores_per_node`` and ``N_i | grid_i``.

    Yielded in lexicographic order of ``N``.  ``grid`` is the process grid ``Q``.
    """
    grid = tuple(grid)

    def rec(i: int, left: int) -> Iterator[Shape]:
        if i == len(grid):
            if left == 1:
                yield ()
            return
        for d in _divisors(grid[i]):
            if left % d == 0:
                for rest in rec(i + 1, left // d):
                    yield (d, *rest)

    yield from rec(0, cores_per_node)


@register_mapping
class NodeVolumeMapping(Mapping):
    """Rank -> node induced by a NodeVolume layout (layout paper, Sec. 3.1).

    Rank ``r`` has grid coordinates ``x`` (x fastest); its node is the NodeCut
    coordinate ``x // N`` numbered x fastest over ``C = Q / N``, its core the
    coordinate ``x % N`` numbered x fastest over ``N``.
    """

    name = "nodevolume"

    @classmethod
    def from_items(cls, spec: str, items: dict[str, str], cores_per_node: int | None,
                   nodes: int | None) -> NodeVolumeMapping:
        """``nodevolume:grid=AxBxCxD;node=AxBxCxD``."""
        only_keys(spec, items, {"grid", "node"})
        if set(items) != {"grid", "node"}:
            raise MappingError(f"mapping spec {spec!r}: expected nodevolume:grid=AxBxCxD;node=...")
        return cls(parse_shape(items["grid"]), parse_shape(items["node"]))

    def __init__(self, grid: Sequence[int], node: Sequence[int]) -> None:
        super().__init__()
        self.grid = tuple(grid)
        self.node = tuple(node)
        if len(self.grid) != len(self.node):
            raise MappingError(f"nodevolume: grid {self.grid} and node {self.node} "
                               f"differ in dimension")
        bad = [i for i, (q, n) in enumerate(zip(self.grid, self.node)) if n < 1 or q % n]
        if bad:
            raise MappingError(f"nodevolume: node shape {self.node} does not divide "
                               f"grid {self.grid} in dimension(s) {bad}")
        self.cut = tuple(q // n for q, n in zip(self.grid, self.node))
        self.cores_per_node = math.prod(self.node)

    def _check(self, nranks: int) -> None:
        if nranks != math.prod(self.grid):
            raise MappingError(f"nodevolume: grid {self.grid} holds {math.prod(self.grid)} "
                               f"ranks, run has {nranks}")

    def coords(self, rank: int) -> Shape:
        """Process-grid coordinates of *rank* (x fastest)."""
        out = []
        for q in self.grid:
            rank, x = divmod(rank, q)
            out.append(x)
        return tuple(out)

    def _place(self, rank: int) -> tuple[int, int]:
        node = core = 0
        node_stride = core_stride = 1
        for x, n, c in zip(self.coords(rank), self.node, self.cut):
            node += (x // n) * node_stride
            core += (x % n) * core_stride
            node_stride *= c
            core_stride *= n
        return node, core

    def isp(self) -> int:
        """ISP of this layout (:func:`isp` with ``Q = grid``, ``C = cut``)."""
        return isp(self.grid, self.cut)

    def ssn(self, subvolume: Sequence[int]) -> int:
        """SSN of this layout for a subvolume of *subvolume* sites (:func:`ssn`)."""
        return ssn(self.node, subvolume)

    def __repr__(self) -> str:
        return (f"<NodeVolumeMapping grid={'x'.join(map(str, self.grid))} "
                f"node={'x'.join(map(str, self.node))}>")


def count_internode_pairs(mapping: NodeVolumeMapping) -> int:
    """Brute-force ISP: count (rank, +1 neighbour in each direction, periodic) on another node.

    A check of :func:`isp` that walks the whole grid; not for large grids.
    """
    if mapping.nranks is None:
        mapping.prepare(math.prod(mapping.grid))
    total = 0
    strides = [math.prod(mapping.grid[:i]) for i in range(len(mapping.grid))]
    for rank in range(mapping.nranks or 0):
        xs = mapping.coords(rank)
        for i, q in enumerate(mapping.grid):
            if q == 1:
                continue
            nb = rank + (((xs[i] + 1) % q) - xs[i]) * strides[i]
            if mapping.nodes[nb] != mapping.nodes[rank]:
                total += 1
    return total
