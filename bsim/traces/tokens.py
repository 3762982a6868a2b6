"""A trace's ranks as one program: group ranks that made the same calls, and write each
call of a group once, with its varying values as rank arithmetic (:mod:`.patterns`).

Steps, for :mod:`.skeleton`:

1. each rank's actions are normalized: exactly one ``compute`` between two MPI calls
   (0 s where none was recorded), and requests named by their place among the rank's
   outstanding requests instead of their identity (a wait completes ``slots``);
2. ranks whose calls have the same operations and communicators in the same order form a
   group (an SPMD program has one; a root or a boundary rank that does more has its own);
3. at each position of a group's calls, the peers, roots, tags, sizes, colours and keys
   seen on its ranks become one token: an expression in the communicator's ``rank`` and
   ``size`` where one fits, else a table.  Compute positions become ``("compute",)``
   tokens, their recorded seconds kept per rank beside the tokens.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .model import Action, Trace
from .patterns import cart_dims, order_expression, partition_expression, peer_expression
from .rawlog import comm_keys

__all__ = ["Group", "group_ranks", "normalize"]

Token = tuple[Any, ...]


@dataclass
class Group:
    """Ranks that run the same calls: their tokens and each rank's compute series."""

    ranks: list[int]
    tokens: list[Token]
    compute: dict[int, list[float]]          # rank -> seconds of each compute token
    tables: dict[str, dict[int, Any]] = field(default_factory=dict)
    sizes: dict[int, str] = field(default_factory=dict)   # bytes -> parameter name
    irregular: list[str] = field(default_factory=list)


def normalize(acts: list[Action]) -> list[Action]:
    """One compute between MPI calls (and at both ends); requests as slots."""
    out: list[Action] = [("compute", 0.0)]
    outstanding: list[int] = []
    for a in acts:
        if a[0] == "compute":
            out[-1] = ("compute", out[-1][1] + a[1])
            continue
        if a[0] in ("isend", "issend", "irecv"):
            outstanding.append(a[5])
            a = a[:5]
        elif a[0] == "wait":
            slots = tuple(outstanding.index(q) for q in a[1] if q in outstanding)
            outstanding = [q for q in outstanding if q not in a[1]]
            a = ("wait", slots)
        out.append(a)
        out.append(("compute", 0.0))
    return out


def _shape(a: Action) -> tuple[Any, ...]:
    """What must agree for two ranks to share code at a position."""
    if a[0] in ("compute", "barrier"):
        return a[:1] if a[0] == "compute" else a[:2]
    if a[0] == "wait":
        return a
    return a[:2]


class _Abstractor:
    """Turns the values one position takes on a group's ranks into expressions."""

    def __init__(self, trace: Trace, spmd: bool) -> None:
        self.spmd = spmd
        self.keys = comm_keys(trace.ranks)
        self.size: dict[Any, int] = {}
        for mine in self.keys:
            for key in set(mine.values()):
                self.size[key] = self.size.get(key, 0) + 1
        self.crank: list[dict[int, int]] = []
        for r, acts in enumerate(trace.ranks):
            mine = {0: r, 1: 0}
            for a in acts:
                if a[0] == "split" and a[2] >= 0:
                    mine[a[2]] = a[4]
            self.crank.append(mine)

    def comm_size(self, rank: int, cid: int) -> int:
        return self.size[self.keys[rank][cid]]

    def value(self, g: Group, name: str, cid: int, values: dict[int, int],
              kind: str) -> str:
        """An expression for *values* (rank -> value) on communicator *cid*."""
        ranks = list(values)
        size = self.comm_size(ranks[0], cid)
        local: dict[int, int] = {}
        same = all(local.setdefault(self.crank[r][cid], v) == v for r, v in values.items())
        same = same and all(self.comm_size(r, cid) == size for r in ranks)
        expr = None
        if same:
            if kind in ("peer", "source"):
                expr = peer_expression(local, size, cart_dims(size), kind == "source")
            elif len(set(values.values())) == 1:
                expr = str(next(iter(values.values())))
        if expr is None and len(set(values.values())) == 1:
            expr = str(next(iter(values.values())))
        if expr is not None:
            return expr.replace("rank", "RANK").replace("size", "SIZE")
        table = f"T{len(g.tables)}"
        g.tables[table] = dict(values)
        g.irregular.append(f"{table}: {name} ({kind}) has no rank arithmetic")
        return f"{table}[rank]" if kind in ("peer", "source") else f"pick({table}, rank)"

    def nbytes(self, g: Group, values: dict[int, int], receive: bool = False) -> str:
        """A size parameter for *values* (one value: its named parameter).  A receive
        takes the largest recorded size: the sender's size is what moves, and a receive
        buffer may be larger than the message, so the replay's time is kept and no
        receive truncates at another rank count."""
        vals = set(values.values())
        if receive:
            vals = {max(vals)}
        if len(vals) == 1:
            n = vals.pop()
            return g.sizes.setdefault(n, f"B{n}")
        table = f"T{len(g.tables)}"
        g.tables[table] = dict(values)
        return f"pick({table}, rank)"

    def split(self, g: Group, pos: int, column: dict[int, Action]) -> Token:
        parent = next(iter(column.values()))[1]
        new = max(a[2] for a in column.values())   # -1 on a rank left out of it
        colours = {r: a[3] for r, a in column.items()}
        keys = {r: a[4] for r, a in column.items()}
        size = self.comm_size(next(iter(column)), parent)
        local_c = {self.crank[r][parent]: c for r, c in colours.items()}
        local_k = {self.crank[r][parent]: k for r, k in keys.items()}
        # one group: any labels that make the same parts and order; several: each group's
        # labels and keys must agree with the others', so the recorded ones (the new rank
        # 0's world rank; the caller's rank in the new communicator)
        colour = None
        if -1 not in colours.values():
            if not self.spmd and len(set(colours.values())) == 1:
                colour = str(next(iter(colours.values())))
            elif self.spmd:
                colour = partition_expression(local_c, size)
        key = None
        if colour is not None:
            if self.spmd:
                key = order_expression(local_k, local_c, size)
            elif len(set(keys.values())) == 1:
                key = str(next(iter(keys.values())))
        if colour is None or key is None:
            colour = self.value(g, f"split {pos} colour", parent, colours, "colour")
            key = self.value(g, f"split {pos} key", parent, keys, "key")
        else:
            colour = colour.replace("rank", "RANK")
            key = key.replace("rank", "RANK")
        if -1 in colours.values():   # a rank left out: MPI_UNDEFINED
            colour = f"undefined({colour})"
        return ("split", parent, new, colour, key)

    def token(self, g: Group, pos: int, column: dict[int, Action]) -> Token:
        """The token of one position (*column*: rank -> its action there)."""
        a0 = next(iter(column.values()))
        op, name = a0[0], f"call {pos} ({a0[0]})"
        if op in ("compute", "barrier", "wait"):
            return a0[:1] if op == "compute" else a0
        if op == "split":
            return self.split(g, pos, column)
        cid = a0[1]
        col = lambda i: {r: a[i] for r, a in column.items()}   # noqa: E731
        if op in ("send", "ssend", "recv", "isend", "issend", "irecv"):
            side = "source" if op in ("recv", "irecv") else "peer"
            return (op, cid, self.value(g, name, cid, col(2), side),
                    self.value(g, name, cid, col(3), "tag"),
                    self.nbytes(g, col(4), side == "source"))
        if op == "sendrecv":
            return (op, cid, self.value(g, name, cid, col(2), "peer"),
                    self.value(g, name, cid, col(3), "tag"), self.nbytes(g, col(4)),
                    self.value(g, name, cid, col(5), "source"),
                    self.value(g, name, cid, col(6), "tag"), self.nbytes(g, col(7), True))
        if op in ("bcast", "reduce", "gather", "scatter"):
            return (op, cid, self.nbytes(g, col(2)), self.value(g, name, cid, col(3), "root"))
        return (op, cid, self.nbytes(g, col(2)))


def group_ranks(trace: Trace) -> list[Group]:
    """The trace's ranks in groups of identical call shapes, with their tokens."""
    norm = [normalize(acts) for acts in trace.ranks]
    by_shape: dict[tuple[Any, ...], list[int]] = {}
    for r, acts in enumerate(norm):
        by_shape.setdefault(tuple(_shape(a) for a in acts), []).append(r)
    ab = _Abstractor(trace, len(by_shape) == 1)
    groups = []
    for ranks in sorted(by_shape.values()):
        g = Group(ranks, [], {r: [] for r in ranks})
        for pos in range(len(norm[ranks[0]])):
            column = {r: norm[r][pos] for r in ranks}
            if column[ranks[0]][0] == "compute":
                for r in ranks:
                    g.compute[r].append(column[r][1])
            g.tokens.append(ab.token(g, pos, column))
        groups.append(g)
    return groups
