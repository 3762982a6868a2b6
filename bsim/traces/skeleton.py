"""``bsim skeleton``: a recorded run as an editable, runnable Python skeleton.

From the groups and tokens of :mod:`.tokens`, repeated call sequences are folded into
``for`` loops (:func:`fold`: at each position the repeat that covers the most calls,
smallest period first, bodies folded again), each compute position of the folded code
becomes a named block (``COMPUTE["L1.c2"]``: the mean of its recorded intervals, with
their spread, minimum, maximum and count in a comment), each message size a named
parameter (``B1024 = 1024``, bytes), and each peer, root, colour and key the rank
arithmetic :mod:`.patterns` found.

The per-rank, per-iteration compute series go to ``FILE.compute.json`` beside the
skeleton: at the recorded rank count the skeleton charges them (so it reproduces the
replay of the trace), at any other count, or with ``recorded=False``, the means.  Tables
stand where no arithmetic fits (``T0[rank]`` for a peer, which does not extend to other
rank counts, and the skeleton's docstring lists; ``pick(T0, rank)`` for a size, tag,
colour or key, the recorded values in turn at other counts).

Tiles: when the recorded ranks run different code (several groups) or a peer is a table,
no rank arithmetic extends one rank's code to another's (a binomial-tree reduce of
point-to-point messages gives every rank of a small trace its own calls), so the skeleton
runs at ``k x P`` ranks (``P`` recorded) as ``k`` copies: world rank ``w`` plays recorded
rank ``w % P``, its world peers are the recorded ones plus ``w - w % P``, its splits of
``MPI_COMM_WORLD`` get colours of its own tile, its world collectives span all ranks.
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path
from typing import Any

from .model import Trace
from .tokens import Group, group_ranks

__all__ = ["fold", "write_skeleton", "Loop", "MAX_PERIOD"]

MAX_PERIOD = 400   # the longest loop body looked for (calls and compute blocks)
_NONBLOCKING = {"isend": "Isend", "issend": "Issend", "irecv": "Irecv"}
_TABLE = re.compile(r"\bT\d+\b")


class Loop:
    """``count`` repetitions of ``body`` (tokens and loops)."""

    __slots__ = ("count", "body")

    def __init__(self, count: int, body: list[Any]) -> None:
        self.count, self.body = count, body

    def __repr__(self) -> str:
        return f"Loop({self.count}, {self.body!r})"


def _same(t: list[Any], a: int, b: int, p: int) -> bool:
    """``t[a:a+p] == t[b:b+p]``, stopping at the first difference (no slices copied)."""
    for k in range(p):
        if t[a + k] != t[b + k]:
            return False
    return True


def fold(tokens: list[Any]) -> list[Any]:
    """*tokens* with consecutive repeats as :class:`Loop` s (nested)."""
    ids: dict[Any, int] = {}
    t = [ids.setdefault(x, len(ids)) for x in tokens]   # small ints compare fastest
    return _fold(tokens, t, 0, len(t))


def _fold(tokens: list[Any], t: list[int], lo: int, hi: int) -> list[Any]:
    out: list[Any] = []
    i = lo
    while i < hi:
        best, best_gain = None, 0
        for p in range(1, min(MAX_PERIOD, (hi - i) // 2) + 1):
            if t[i] != t[i + p] or not _same(t, i, i + p, p):
                continue
            k = 2
            while i + (k + 1) * p <= hi and _same(t, i, i + k * p, p):
                k += 1
            if p * (k - 1) > best_gain:
                best, best_gain = (p, k), p * (k - 1)
        if best is None:
            out.append(tokens[i])
            i += 1
        else:
            p, k = best
            out.append(Loop(k, _fold(tokens, t, i, i + p)))
            i += p * k
    return out


class _Writer:
    """Python source of one group's folded code; each compute token of the tree is named
    (``("compute", NAME)``, in place) as it is written."""

    def __init__(self, group: Group, gid: int, tiled: bool = False) -> None:
        self.g, self.gid, self.tiled = group, gid, tiled
        self.lines: list[str] = []
        self.loops = 0

    def emit(self, body: list[Any], depth: int, path: str) -> None:
        pad = "    " * depth
        c = 0
        for i, item in enumerate(body):
            if isinstance(item, Loop):
                self.loops += 1
                self.lines.append(f"{pad}for _ in range({item.count}):")
                self.emit(item.body, depth + 1, f"{path}L{self.loops}.")
            elif item[0] == "compute":
                body[i] = ("compute", f"g{self.gid}.{path}c{c}")
                c += 1
                self.lines.append(f"{pad}compute({body[i][1]!r})")
            else:
                self.lines.append(pad + self.call(item))


    def call(self, t: tuple[Any, ...]) -> str:
        op = t[0]
        if op == "wait":
            return f"wait(pending, {list(t[1])!r})"
        cid = t[1]
        cm = f"c{cid}"

        tiled = self.tiled and cid == 0

        def e(x: str) -> str:
            if tiled:   # the recorded world: its rank (the role) and size
                return x.replace("RANK", "rank").replace("SIZE", "RECORDED_RANKS")
            return x.replace("RANK", f"r{cid}").replace("SIZE", f"n{cid}")

        def peer(x: str) -> str:
            """A world peer of a tiled skeleton: the recorded one, in this rank's tile."""
            if not tiled:
                return e(x)
            if x == "-1":    # MPI_PROC_NULL
                return x
            if x == "0":
                return "tile"
            return f"tile + {e(x)}" if "[" not in x else f"intile(tile, {e(x)})"

        if op in ("send", "ssend", "recv"):
            return f"{cm}.{op.capitalize()}(buf({t[4]}), {peer(t[2])}, {e(t[3])})"
        if op in ("isend", "issend", "irecv"):
            return (f"pending.append({cm}.{_NONBLOCKING[op]}"
                    f"(buf({t[4]}), {peer(t[2])}, {e(t[3])}))")
        if op == "sendrecv":
            return (f"{cm}.Sendrecv(buf({t[4]}), {peer(t[2])}, {e(t[3])}, buf({t[7]}), "
                    f"{peer(t[5])}, {e(t[6])})")
        if op == "barrier":
            return f"{cm}.Barrier()"
        if op == "bcast":
            return f"{cm}.Bcast(buf({t[2]}), {e(t[3])})"
        if op == "reduce":
            return f"{cm}.Reduce(buf({t[2]}), buf({t[2]}), MPI.SUM, {e(t[3])})"
        if op in ("allreduce", "scan", "exscan"):
            return f"{cm}.{op.capitalize()}(buf({t[2]}), buf({t[2]}), MPI.SUM)"
        if op == "gather":
            return f"{cm}.Gather(buf({t[2]}), buf({t[2]} * n{cid}), {e(t[3])})"
        if op == "scatter":
            return f"{cm}.Scatter(buf({t[2]} * n{cid}), buf({t[2]}), {e(t[3])})"
        if op == "allgather":
            return f"{cm}.Allgather(buf({t[2]}), buf({t[2]} * n{cid}))"
        if op == "alltoall":
            return f"{cm}.Alltoall(buf({t[2]} * n{cid}), buf({t[2]} * n{cid}))"
        if op == "reduce_scatter":
            return f"{cm}.Reduce_scatter_block(buf({t[2]} * n{cid}), buf({t[2]}), MPI.SUM)"
        if op == "split":
            colour = f"tiled({e(t[3])})" if tiled else e(t[3])
            if t[2] < 0:    # every rank here is left out of the communicator
                return f"c{t[1]}.Split({colour}, {e(t[4])})"
            made = f"c{t[2]} = c{t[1]}.Split({colour}, {e(t[4])}); "
            if "undefined(" in t[3]:
                return made + f"r{t[2]}, n{t[2]} = sizes(c{t[2]})"
            return made + f"r{t[2]}, n{t[2]} = c{t[2]}.Get_rank(), c{t[2]}.Get_size()"
        raise ValueError(f"skeleton: no code for {op!r}")



def _expand(body: list[Any]) -> Any:
    """The compute block names of the folded *body*, in the order they run."""
    for item in body:
        if isinstance(item, Loop):
            for _ in range(item.count):
                yield from _expand(item.body)
        elif item[0] == "compute":
            yield item[1]


_HEAD = '''"""Skeleton of a recorded run ({source}), {nranks} ranks; written by bsim skeleton.

Edit it: COMPUTE holds each compute block's mean seconds (its spread in the comment),
the B* constants the message sizes in bytes.  At {nranks} ranks the recorded compute
series in {series} are charged (recorded=False: the means); at other rank counts,
the means.  Run: bsim run {script} -n {nranks}   (or -n {bigger}, ...)
{irregular}"""

import json
from pathlib import Path

import bsim
from mpi4py import MPI

RECORDED_RANKS = {nranks}
SERIES = Path(__file__).with_name({series!r})


def cart_px(size):
    """PX of the most square PX x PY grid (PX <= PY)."""
    return max(d for d in range(1, int(size ** 0.5) + 1) if size % d == 0)


def cart(rank, size, dx, dy):
    """The rank at (x + dx, y + dy) on the periodic row-major PX x PY grid."""
    px = cart_px(size)
    py = size // px
    return (rank % px + dx) % px + ((rank // px + dy) % py) * px


def pick(table, rank):
    """*rank*'s recorded value; at other rank counts the recorded values in turn."""
    return table[rank] if rank in table else list(table.values())[rank % len(table)]


def intile(tile, peer):
    """A recorded world peer in this rank's tile (MPI_PROC_NULL, -1, kept)."""
    return peer if peer < 0 else tile + peer


def undefined(colour):
    """A recorded colour; -1 (the rank was left out) is MPI_UNDEFINED."""
    return MPI.UNDEFINED if colour == -1 else colour


def sizes(comm):
    """(rank, size) in *comm*; (-1, 0) for MPI_COMM_NULL."""
    return (-1, 0) if comm == MPI.COMM_NULL else (comm.Get_rank(), comm.Get_size())


def wait(pending, slots):
    """Complete the outstanding requests at *slots* (all of them: MPI_Waitall)."""
    MPI.Request.Waitall([pending[i] for i in slots])
    for i in sorted(slots, reverse=True):
        del pending[i]


def recorded_series(rank):
    """This rank's recorded compute series, block by block (None when absent)."""
    if not SERIES.exists():
        return None
    data = json.loads(SERIES.read_text())["series"][str(rank)]
    return {{name: iter(values) for name, values in data.items()}}

'''


def _predicate(g: Group, nranks: int) -> str:
    """The branch test of a group's recorded ranks (``rank``: the recorded rank a rank
    plays in its tile, so literal recorded ranks)."""
    lo, hi = g.ranks[0], g.ranks[-1]
    if g.ranks == list(range(lo, hi + 1)) and hi == nranks - 1 and lo > 0:
        return f"rank >= {lo}"
    return f"rank == {lo}" if len(g.ranks) == 1 else f"rank in {set(g.ranks)!r}"


_TILED = """
Its recorded ranks run different code (each branch below: the calls of the recorded
ranks it names{tables}), and no rank arithmetic extends one rank's code to another's.
So at {nranks} x k ranks it runs k copies of the recorded run side by side: world rank
w plays recorded rank w % {nranks} in the tile of ranks w - w % {nranks} and up; its
point-to-point messages stay in its tile, its communicators split from MPI_COMM_WORLD
are its tile's, and the MPI_COMM_WORLD collectives span all ranks.  Other counts are
refused.
"""


def _colours(trace: Trace) -> int:
    """More than every colour a split of MPI_COMM_WORLD can get in a tiled skeleton: the
    recorded ones (world ranks) and rank arithmetic over the recorded ranks."""
    seen = [a[3] for acts in trace.ranks for a in acts if a[0] == "split" and a[1] == 0]
    return max([trace.nranks, *(c + 1 for c in seen)])


def write_skeleton(trace: Trace, out: str | Path) -> dict[str, Any]:
    """Write the skeleton of *trace* to *out* (and its compute series beside it); return
    counts: ``loops``, ``blocks``, ``statements``, ``groups``, ``irregular``."""
    path = Path(out)
    groups = group_ranks(trace)
    series: dict[int, dict[str, list[float]]] = {}
    pooled: dict[str, list[float]] = {}
    bodies, tables, sizes, irregular, loops = [], {}, {}, [], 0
    # the branch every other rank takes: the largest group, not rank 0's on a tie (rank 0
    # is the one that is usually special)
    biggest = max(range(len(groups)), key=lambda i: (len(groups[i].ranks),
                                                     0 not in groups[i].ranks))
    # ranks that run different code, or peers no arithmetic fits: copies of the run
    tiled = len(groups) > 1 or any("(peer)" in x or "(source)" in x
                                   for g in groups for x in g.irregular)
    for gid, g in enumerate(groups):
        tree = fold(g.tokens)
        w = _Writer(g, gid, tiled)
        w.emit(tree, 2, "")
        loops += w.loops
        names = list(_expand(tree))
        for r in g.ranks:
            mine = series.setdefault(r, {})
            for name, v in zip(names, g.compute[r], strict=True):
                mine.setdefault(name, []).append(v)
                pooled.setdefault(name, []).append(v)
        tables.update({f"{t}_{gid}": v for t, v in g.tables.items()})
        sizes.update({v: n for n, v in g.sizes.items()})
        irregular += [f"group {gid}: {x}" for x in g.irregular]
        code = list(w.lines)
        if g.tables:   # one pass: a table per call of a long trace made this quadratic
            code = [_TABLE.sub(rf"\g<0>_{gid}", ln) for ln in code]
        bodies.append((gid, g, code or ["        pass"]))
    lines = [_HEAD.format(source=trace.source or "trace", nranks=trace.nranks,
                          series=path.stem + ".compute.json", script=path.name,
                          bigger=4 * trace.nranks,
                          irregular=(_TILED.format(nranks=trace.nranks, tables=(
                              "; tables, listed below, where no arithmetic fits"
                              if irregular else "")) if tiled else "") + (
                              ("\nNot regular (tables; a peer table holds only the "
                               "recorded ranks):\n" + "\n".join(irregular) + "\n")
                              if irregular else ""))]
    if tiled:
        lines.append(f"COLOURS = {_colours(trace)}   # colours of a world split per tile")
    lines.append("# compute blocks: mean seconds of the recorded intervals")
    lines.append("COMPUTE = {")
    for name, vals in pooled.items():
        sd = statistics.pstdev(vals) if len(vals) > 1 else 0.0
        lines.append(f"    {name!r}: {statistics.fmean(vals)!r},   # sd {sd:.3g}, min "
                     f"{min(vals):.3g}, max {max(vals):.3g}, n {len(vals)}")
    lines.append("}")
    lines.append("# message sizes (bytes), as observed")
    lines += [f"{name} = {n}" for name, n in sorted(sizes.items(), key=lambda x: x[1])]
    lines += [f"{t} = {v!r}" for t, v in tables.items()]
    lines += ["", "", "def main(recorded=True):",
              '    """The recorded run\'s calls; *recorded*: charge the recorded compute '
              'series at the recorded rank count."""',
              "    c0, c1 = MPI.COMM_WORLD, MPI.COMM_SELF",
              "    rank, size = c0.Get_rank(), c0.Get_size()",
              "    r0, n0, r1, n1 = rank, size, 0, 1"]
    if tiled:
        lines += ["    if size % RECORDED_RANKS:",
                  "        raise ValueError(f'{__file__}: the recorded ranks run different "
                  "code: run it at a multiple of {RECORDED_RANKS} ranks (copies of the "
                  "recorded run), not {size}')",
                  "    copy, rank = divmod(rank, RECORDED_RANKS)   # its tile; the recorded "
                  "rank it plays",
                  "    tile = copy * RECORDED_RANKS   # the tile's first world rank",
                  "",
                  "    def tiled(colour):",
                  "        \"\"\"A colour of a split of MPI_COMM_WORLD in this rank's tile "
                  "(MPI_UNDEFINED kept).\"\"\"",
                  "        return colour if colour < 0 else colour + copy * COLOURS",
                  ""]
    lines += [
              "    series = recorded_series(rank) if recorded and size == RECORDED_RANKS "
              "else None",
              "",
              "    def compute(name):",
              "        bsim.add_time(next(series[name]) if series else COMPUTE[name])",
              "",
              "    buf = bsim.buffer",
              "    pending = []"]
    if len(groups) == 1:
        lines += [ln[4:] for ln in bodies[0][2]]
    else:
        order = [b for b in bodies if b[0] != biggest] + [bodies[biggest]]
        for k, (_gid, g, code) in enumerate(order):
            if k == len(order) - 1:
                lines.append("    else:")
            else:
                lines.append(f"    {'if' if k == 0 else 'elif'} {_predicate(g, trace.nranks)}:")
            lines += code
    lines += ["    if pending:", "        MPI.Request.Waitall(pending)", "", "",
              'if __name__ == "__main__":', "    main()", ""]
    path.write_text("\n".join(lines))
    path.with_name(path.stem + ".compute.json").write_text(json.dumps(
        {"ranks": trace.nranks, "series": {str(r): v for r, v in series.items()}}))
    return {"loops": loops, "blocks": len(pooled), "groups": len(groups),
            "statements": sum(len(b[2]) for b in bodies), "irregular": irregular,
            "tiled": tiled}
