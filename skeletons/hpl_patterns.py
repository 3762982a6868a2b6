"""HPL's block-cyclic bookkeeping and its communication patterns.

``numroc`` (ScaLAPACK's local extent), the flop counts of a panel and of the
whole run, HPL_pdmxswp's bi-directional exchange plan, and the panel
broadcasts (``1ring``, ``1ringM``, ``2ring``, ``2ringM``, ``blong``,
``blongM`` as point-to-point steps, or one ``MPI_Ibcast``) with the
spread-then-roll of the long row swap.  :class:`Transfer` and :class:`Ibcast`
progress a broadcast in pieces so the look-ahead can probe it between update
chunks.
"""

from __future__ import annotations

from typing import Any

import bsim

__all__ = ["numroc", "panel_flops", "global_flops", "bexchange_plan", "pieces",
           "spread_roll_steps", "bcast_steps", "Transfer", "Ibcast", "BUFFER",
           "BCASTS", "TAG_PIV", "TAG_BC", "TAG_SW", "TAG_BS"]

BCASTS = ("1ring", "1ringM", "2ring", "2ringM", "blong", "blongM", "ibcast")
TAG_PIV, TAG_BC, TAG_SW, TAG_BS = 11, 12, 13, 14
BUFFER: list[Any] = [bsim.buffer]   # bsim.Buffer inside a simulation (set by hpl.main)


# -- block-cyclic bookkeeping ------------------------------------------------------
def numroc(n: int, nb: int, iproc: int, nprocs: int) -> int:
    """Rows (or columns) of a length-*n* block-cyclic dimension owned by *iproc* (source 0)."""
    nblocks, rem = divmod(n, nb)
    num = (nblocks // nprocs) * nb
    extra = nblocks % nprocs
    if iproc < extra:
        num += nb
    elif iproc == extra:
        num += rem
    return num


def panel_flops(m: int, jb: int) -> float:
    """Flops of the LU of an ``m x jb`` panel (``m >= jb``): pivot search, scaling, updates.

    Per column ``i``: ``idamax`` over ``m - i`` entries, ``dscal`` of ``m - i - 1``,
    rank-1 update of ``(m - i - 1) x (jb - i - 1)`` (2 flops each), summed.
    """
    return float(sum((m - i) + (m - i - 1) * (1 + 2 * (jb - i - 1)) for i in range(jb)))


def global_flops(n: int, nb: int) -> dict[str, float]:
    """Useful flops of HPL's algorithm on order *n*: panel LUs, dtrsm, dgemm, back solve."""
    out = {"pfact": 0.0, "dtrsm": 0.0, "dgemm": 0.0, "backsolve": float(n * n)}
    for j in range(0, n, nb):
        jb = min(nb, n - j)
        rest = n + 1 - j - jb           # trailing columns incl. b
        out["pfact"] += panel_flops(n - j, jb)
        out["dtrsm"] += float(jb * (jb - 1) * rest)
        out["dgemm"] += 2.0 * (n - j - jb) * rest * jb
    return out


# -- the exchange and broadcast patterns -----------------------------------------
def bexchange_plan(me: int, size: int, root: int) -> list[tuple[int, int]]:
    """HPL's bi-directional exchange (leave-on-all) for *me* on *size* processes.

    Relative ranks ``d = me - root mod size``; ``ip2`` = largest power of two
    ``<= size``.  Ranks ``d >= ip2`` first send to ``d - ip2``, the ``ip2``
    others run ``log2 ip2`` butterfly rounds (partner ``d xor 2^k``), then
    ``d < size - ip2`` send the result back to ``d + ip2``.  Returns
    ``(dest, source)`` per step, ``-1`` for none.
    """
    d = (me - root) % size
    ip2 = 1 << (size.bit_length() - 1)
    extra = size - ip2
    ab = lambda r: (r + root) % size  # noqa: E731
    if d >= ip2:
        return [(ab(d - ip2), -1), (-1, ab(d - ip2))]
    plan = [(-1, ab(d + ip2))] if d < extra else []
    k = 1
    while k < ip2:
        plan.append((ab(d ^ k), ab(d ^ k)))
        k <<= 1
    if d < extra:
        plan.append((ab(d + ip2), -1))
    return plan


def scatter_tree(d: int, size: int) -> tuple[int, list[int]]:
    """Binomial tree over relative ranks: (parent or -1, children largest subtree first)."""
    if d == 0:
        low = 1 << (size - 1).bit_length() if size > 1 else 1
        parent = -1
    else:
        low = d & -d
        parent = d - low
    children = []
    k = low >> 1
    while k >= 1:
        if d + k < size:
            children.append(d + k)
        k >>= 1
    return parent, children


def pieces(total: int, parts: int) -> list[int]:
    """*total* elements split into *parts* nearly equal pieces (larger first)."""
    q, r = divmod(total, parts)
    return [q + (1 if i < r else 0) for i in range(parts)]


def spread_roll_steps(d: int, size: int, total: int, offset: int = 0
                       ) -> list[tuple[list[tuple[int, int]], tuple[int, int] | None]]:
    """Spread (binomial scatter of *size* pieces) then roll (ring allgather), relative ranks.

    Ranks are ``offset + 0 .. offset + size - 1`` (0 is the source).  Each step
    is ``(sends [(dest, count)], recv (source, count) or None)``.
    """
    piece = pieces(total, size)
    parent, children = scatter_tree(d, size)

    def subtree(r: int) -> int:
        low = (r & -r) if r else (1 << (size - 1).bit_length())
        return sum(piece[r:min(r + low, size)])

    steps: list[tuple[list[tuple[int, int]], tuple[int, int] | None]] = []
    if parent >= 0:
        steps.append(([], (offset + parent, subtree(d))))
    if children:
        steps.append(([(offset + c, subtree(c)) for c in children], None))
    nxt, prv = offset + (d + 1) % size, offset + (d - 1) % size
    for s in range(size - 1):   # send piece d - s, receive piece d - 1 - s
        steps.append(([(nxt, piece[(d - s) % size])], (prv, piece[(d - 1 - s) % size])))
    return steps


def bcast_steps(variant: str, d: int, size: int, count: int
                ) -> list[tuple[list[tuple[int, int]], tuple[int, int] | None]]:
    """Steps of panel broadcast *variant* for relative rank *d* (root 0) of *size*.

    ``1ring``: 0 -> 1 -> ... -> size-1.  ``1ringM``: 0 -> 1 and 0 -> 2 -> 3 ...
    ``2ring``: 0 -> 1 -> ... -> h and 0 -> h+1 -> ... -> size-1 (h = size // 2).
    ``2ringM``: 0 -> 1, then two rings over 2..size-1.  ``blong``: spread then
    roll of *count* over all ranks.  ``blongM``: 0 -> 1 whole, then spread and
    roll over 0, 2, 3, ...  Counts are doubles.
    """
    if size == 1:
        return []
    if variant in ("1ring", "1ringM", "2ring", "2ringM"):
        first = 2 if variant.endswith("M") and size > 2 else 1   # 1: the next panel's owner
        if variant.startswith("1"):
            heads = [first]
        else:
            h = first + (size - first + 1) // 2
            heads = [first, h] if h < size else [first]
        bounds = heads + [size]
        steps: list[Any] = []
        if d == 0:
            dests = ([1] if first == 2 else []) + heads
            return [([(x, count) for x in dests], None)]
        if d == 1 and first == 2:
            return [([], (0, count))]
        for a, b in zip(bounds, bounds[1:], strict=False):
            if a <= d < b:
                steps.append(([], (0 if d == a else d - 1, count)))
                if d + 1 < b:
                    steps.append(([(d + 1, count)], None))
        return steps
    if variant == "blong":
        return spread_roll_steps(d, size, count)
    if variant == "blongM":
        if size <= 2:
            return bcast_steps("1ring", d, size, count)
        if d == 1:
            return [([], (0, count))]
        rel = 0 if d == 0 else d - 1          # 0, 2, 3, ... -> 0, 1, 2, ...
        steps = spread_roll_steps(rel, size - 1, count)
        mapped = [([(0 if x == 0 else x + 1, c) for x, c in sends],
                   None if r is None else (0 if r[0] == 0 else r[0] + 1, r[1]))
                  for sends, r in steps]
        if d == 0:
            mapped.insert(0, ([(1, count)], None))
        return mapped
    raise ValueError(f"hpl: unknown bcast {variant!r}; valid: {', '.join(BCASTS[:-1])}")


class Ibcast:
    """``bcast="ibcast"``: the panel as one ``MPI_Ibcast`` on the process row.

    Posted when the panel's broadcast starts on this rank, completed (``Wait``)
    when the panel is needed; it progresses without probing, so an update is
    never cut into chunks for it.
    """

    __slots__ = ("req",)
    pollable = False
    steps = ()
    pos = 0

    def __init__(self, comm: Any, buf: Any, root: int, size: int) -> None:
        self.req = comm.Ibcast(buf, root) if size > 1 else None   # size: comm's

    def progress(self, blocking: bool, tag: int = TAG_BC) -> bool:
        if blocking and self.req is not None:
            self.req.Wait()
            self.req = None
        return self.req is None


class Transfer:
    """A multi-step point-to-point pattern that can be progressed by probing (HPL_bcast)."""

    __slots__ = ("comm", "steps", "pos", "rreq", "sreqs", "dtype")
    pollable = True

    def __init__(self, comm: Any, steps: list[Any], root: int, size: int, dtype: Any) -> None:
        self.comm = comm
        self.steps = [([((root + x) % size, c) for x, c in s],
                       None if r is None else ((root + r[0]) % size, r[1])) for s, r in steps]
        self.pos = 0
        self.rreq: Any = None
        self.sreqs: list[Any] = []
        self.dtype = dtype

    def progress(self, blocking: bool, tag: int = TAG_BC) -> bool:
        """Advance as far as possible (``Test`` when not *blocking*); True when done."""
        comm, steps = self.comm, self.steps
        while self.pos < len(steps):
            sends, recv = steps[self.pos]
            if self.rreq is None:
                for dest, count in sends:
                    self.sreqs.append(comm.Isend(BUFFER[0](count, self.dtype), dest=dest, tag=tag))
                if recv is None:
                    self.pos += 1
                    continue
                self.rreq = comm.Irecv(BUFFER[0](recv[1], self.dtype), source=recv[0], tag=tag)
            if blocking:
                self.rreq.Wait()
            elif not self.rreq.Test():
                return False
            self.rreq = None
            self.pos += 1
        if self.sreqs:
            from mpi4py import MPI
            MPI.Request.Waitall(self.sreqs)
            self.sreqs = []
        return True
