"""Mappings of world ranks to (node, core): block, round-robin, explicit list.

A mapping answers two questions per rank: which node hosts it (``node_of``)
and which core of that node it runs on (``core_of``).  ``prepare(nranks)``
binds a mapping to a run of *nranks* ranks, checks that it can place them and
precomputes both answers as lists, so that network models can look them up on
the per-message hot path (``mapping.nodes[rank]``).

==================  =======================  =========================
mapping             node_of(rank)            core_of(rank)
==================  =======================  =========================
block(c)            rank // c                rank % c
roundrobin(n)       rank % n                 rank // n
explicit(list)      list[rank]               ranks before it on that node
==================  =======================  =========================

Spec strings (:func:`build_mapping`): ``block``, ``block:cores=8``,
``roundrobin``, ``roundrobin:nodes=4``, ``file:PATH`` (one node id per line)
and ``nodevolume:grid=8x8x4x4;node=4x4x2x1`` (layout paper layouts, see
:mod:`netmodels.layouts`).  Keys of one mapping spec are separated by ``;`` so
that a mapping can sit inside a network spec, whose keys are separated by ``,``
(``torus:dims=4x4x4,cores=8,mapping=roundrobin:nodes=64``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path

from .input_files import note_input
from .registry import Registry
from .spec import SpecError, split_spec

__all__ = [
    "MappingError", "Mapping", "BlockMapping", "RoundRobinMapping", "ExplicitMapping",
    "build_mapping",
]


class MappingError(SpecError):
    """A mapping cannot place the ranks it was asked to place, or its spec is invalid."""


class Mapping(ABC):
    """Base class: rank -> (node, core), precomputed by :meth:`prepare`."""

    name = ""

    def __init__(self) -> None:
        self.nranks: int | None = None
        self.nodes: list[int] = []   # node of each rank, after prepare()
        self.cores: list[int] = []   # core of each rank, after prepare()

    @classmethod
    def from_items(cls, spec: str, items: dict[str, str], cores_per_node: int | None,
                   nodes: int | None) -> Mapping:
        """Build from the ``KEY=VALUE`` items of *spec* and the machine's defaults."""
        raise MappingError(f"mapping spec {spec!r}: {cls.name} mappings are not built from "
                           f"a spec")

    @abstractmethod
    def _place(self, rank: int) -> tuple[int, int]:
        """(node, core) of *rank*, for 0 <= rank < nranks."""

    def prepare(self, nranks: int) -> None:
        """Bind the mapping to *nranks* ranks; raise :class:`MappingError` if impossible."""
        if not isinstance(nranks, int) or nranks < 1:
            raise MappingError(f"{self!r}: number of ranks must be an int >= 1, got {nranks!r}")
        self._check(nranks)
        placed = [self._place(r) for r in range(nranks)]
        self.nodes = [p[0] for p in placed]
        self.cores = [p[1] for p in placed]
        self.nranks = nranks

    def _check(self, nranks: int) -> None:
        """Raise :class:`MappingError` if *nranks* ranks cannot be placed (default: fine)."""

    def _checked(self, rank: int) -> int:
        if self.nranks is None:
            raise MappingError(f"{self!r}: call prepare(nranks) before asking for rank {rank}")
        if not isinstance(rank, int) or not 0 <= rank < self.nranks:
            raise MappingError(f"{self!r}: rank {rank!r} out of range [0, {self.nranks})")
        return rank

    def node_of(self, rank: int) -> int:
        """Node that hosts *rank*."""
        return self.nodes[self._checked(rank)]

    def core_of(self, rank: int) -> int:
        """Core of its node that *rank* runs on."""
        return self.cores[self._checked(rank)]

    def node_count(self) -> int:
        """Number of nodes used: largest node id + 1 (after prepare)."""
        return max(self.nodes) + 1 if self.nodes else 0

    def ranks_per_node(self) -> dict[int, int]:
        """Node id -> number of ranks placed on it (after prepare)."""
        counts: dict[int, int] = {}
        for node in self.nodes:
            counts[node] = counts.get(node, 0) + 1
        return counts


MAPPINGS: Registry[type[Mapping]] = Registry("mapping", MappingError)
"""Mappings buildable from a spec: each class's ``from_items`` reads its keys."""
ALIASES = {"round-robin": "roundrobin", "cyclic": "roundrobin"}


def register_mapping(cls: type[Mapping]) -> type[Mapping]:
    """Class decorator: make *cls* buildable by its ``name`` from a mapping spec."""
    return MAPPINGS.register(cls)


@register_mapping
class BlockMapping(Mapping):
    """Fill each node's cores before the next node: ``node = rank // cores_per_node``."""

    name = "block"

    def __init__(self, cores_per_node: int) -> None:
        super().__init__()
        if not isinstance(cores_per_node, int) or cores_per_node < 1:
            raise MappingError(f"block mapping: cores_per_node must be an int >= 1, "
                               f"got {cores_per_node!r}")
        self.cores_per_node = cores_per_node

    @classmethod
    def from_items(cls, spec: str, items: dict[str, str], cores_per_node: int | None,
                   nodes: int | None) -> BlockMapping:
        """``block[:cores=N]`` (default: the machine's cores per node)."""
        only_keys(spec, items, {"cores"})
        cores = _int_arg(spec, "cores", items["cores"]) if "cores" in items else cores_per_node
        if cores is None:
            raise MappingError(f"mapping spec {spec!r}: give cores=N (the machine does not say)")
        return cls(cores)

    def _place(self, rank: int) -> tuple[int, int]:
        return divmod(rank, self.cores_per_node)

    def __repr__(self) -> str:
        return f"<BlockMapping cores_per_node={self.cores_per_node}>"


@register_mapping
class RoundRobinMapping(Mapping):
    """Deal ranks to nodes like cards: ``node = rank % nodes``, ``core = rank // nodes``."""

    name = "roundrobin"

    def __init__(self, nodes: int) -> None:
        super().__init__()
        if not isinstance(nodes, int) or nodes < 1:
            raise MappingError(f"roundrobin mapping: nodes must be an int >= 1, got {nodes!r}")
        self.node_total = nodes

    @classmethod
    def from_items(cls, spec: str, items: dict[str, str], cores_per_node: int | None,
                   nodes: int | None) -> RoundRobinMapping:
        """``roundrobin[:nodes=N]`` (default: the machine's node count)."""
        only_keys(spec, items, {"nodes"})
        count = _int_arg(spec, "nodes", items["nodes"]) if "nodes" in items else nodes
        if count is None:
            raise MappingError(f"mapping spec {spec!r}: give nodes=N (the machine does not say)")
        return cls(count)

    def _place(self, rank: int) -> tuple[int, int]:
        core, node = divmod(rank, self.node_total)
        return node, core

    def __repr__(self) -> str:
        return f"<RoundRobinMapping nodes={self.node_total}>"


class ExplicitMapping(Mapping):
    """Rank ``r`` runs on node ``node_list[r]``; cores are numbered in rank order per node.

    The list may be longer than the run (extra entries are ignored) but not
    shorter.  Node ids must be ints >= 0.
    """

    name = "explicit"

    def __init__(self, node_list: Sequence[int]) -> None:
        super().__init__()
        nodes = list(node_list)
        for i, node in enumerate(nodes):
            if isinstance(node, bool) or not isinstance(node, int) or node < 0:
                raise MappingError(f"explicit mapping: node of rank {i} must be an int >= 0, "
                                   f"got {node!r}")
        self.node_list = nodes

    @classmethod
    def from_file(cls, path: str | Path) -> ExplicitMapping:
        """Read one node id per line; blank lines and ``#`` comments are skipped."""
        with open(path, encoding="utf-8") as fh:
            content = fh.read()
        note_input("mapping", path, content)
        nodes: list[int] = []
        for lineno, line in enumerate(content.splitlines(), 1):
            text = line.split("#", 1)[0].strip()
            if not text:
                continue
            try:
                nodes.append(int(text))
            except ValueError:
                raise MappingError(f"{path}:{lineno}: expected a node id, got {text!r}") \
                    from None
        if not nodes:
            raise MappingError(f"{path}: no node ids found")
        return cls(nodes)

    def _check(self, nranks: int) -> None:
        if nranks > len(self.node_list):
            raise MappingError(f"explicit mapping lists {len(self.node_list)} ranks, "
                               f"cannot place {nranks}")

    def prepare(self, nranks: int) -> None:
        super().prepare(nranks)
        seen: dict[int, int] = {}
        for rank, node in enumerate(self.nodes):   # core = order of arrival on the node
            self.cores[rank] = seen.get(node, 0)
            seen[node] = self.cores[rank] + 1

    def _place(self, rank: int) -> tuple[int, int]:
        return self.node_list[rank], 0   # core fixed up in prepare()

    def __repr__(self) -> str:
        return f"<ExplicitMapping ranks={len(self.node_list)}>"


def _int_arg(spec: str, key: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise MappingError(f"mapping spec {spec!r}: {key} must be an int, got {value!r}") from None


def build_mapping(spec: str | Mapping, cores_per_node: int | None = None,
                  nodes: int | None = None) -> Mapping:
    """Build a mapping from a spec string (or return a :class:`Mapping` unchanged).

    *cores_per_node* and *nodes* are the machine's, used when the spec does not
    give them (``block`` alone means ``block:cores=<cores_per_node>``).
    ``file:PATH`` reads an explicit list.  Raises :class:`MappingError` for
    unknown names, keys or values.
    """
    if isinstance(spec, Mapping):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise MappingError(f"mapping must be a spec string or a Mapping, got {spec!r}")
    if spec.strip().lower().startswith("file:"):   # a path may hold any character
        path = spec.strip()[5:].strip()
        if not path:
            raise MappingError(f"mapping spec {spec!r}: expected file:PATH")
        return ExplicitMapping.from_file(path)
    name, items = split_spec(spec, "mapping spec", MappingError, separators=",;")
    cls = MAPPINGS.lookup(ALIASES.get(name, name))
    return cls.from_items(spec, items, cores_per_node, nodes)


def only_keys(spec: str, kwargs: dict[str, str], allowed: set[str]) -> None:
    """Raise :class:`MappingError` naming the keys of *spec* that are not *allowed*."""
    unknown = sorted(set(kwargs) - allowed)
    if unknown:
        raise MappingError(f"mapping spec {spec!r}: unknown key(s) {', '.join(unknown)}; "
                           f"valid: {', '.join(sorted(allowed))}")
