"""Rank arithmetic for a skeleton: one expression that gives, for every rank of a group,
the value a recorded action had (a peer, a root, a split's colour or key).

A value seen at one position of the code on ranks ``r`` of a communicator of size ``P``
is written, in this order of preference, as a constant (``0``, ``size - 1``, ``3``); a
ring shift ``(rank + d) % size``; a Cartesian shift to a grid neighbour,
``cart(rank, size, dx, dy)`` with ``|dx|, |dy| <= 1`` on the periodic row-major
``PX x (size // PX)`` grid, ``PX`` the most square (``MPI_Cart_shift``'s neighbours); a
butterfly ``rank ^ k`` (recursive doubling); a longer Cartesian shift; a tree link
``(rank - 1) // 2`` or ``2 * rank + 1 + j``; or, when nothing regular fits, a table
indexed by rank (which does not extend to other rank counts; the skeleton says so).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

__all__ = ["peer_expression", "partition_expression", "order_expression", "cart_dims"]


def cart_dims(size: int) -> int:
    """``PX`` of the most square ``PX x PY`` grid of *size* ranks, ``PX <= PY`` (as
    ``MPI_Dims_create(size, 2)`` gives ``(PY, PX)``)."""
    px = 1
    d = 1
    while d * d <= size:
        if size % d == 0:
            px = d
        d += 1
    return px


def peer_expression(values: Mapping[int, int], size: int, px: int,
                    receive: bool = False) -> str | None:
    """An expression in ``rank`` and ``size`` giving ``values[r]`` for every rank ``r``
    listed, or None.

    A shift by exactly half a ring (``d == size - d``, as any shift on 2 ranks) is
    ambiguous: it is written ``+d`` for a send and ``-d`` for a *receive*, so that at
    larger rank counts every receive still faces the send that feeds it."""
    vals = set(values.values())
    if len(vals) == 1:
        (c,) = vals
        if c == 0:
            return "0"
        return "size - 1" if c == size - 1 and size > 2 else str(c)
    if size <= 0:
        return None
    shifts = {(q - r) % size for r, q in values.items()}
    if len(shifts) == 1:
        (d,) = shifts
        if d < size - d or (d == size - d and not receive):
            return f"(rank + {d}) % size"
        return f"(rank - {size - d}) % size"
    cart = _cart(values, size, px, receive)
    if cart is not None and all(abs(v) <= 1 for v in cart):   # a neighbour on the grid
        return f"cart(rank, size, {cart[0]}, {cart[1]})"
    xors = {q ^ r for r, q in values.items()}
    if len(xors) == 1:
        return f"rank ^ {xors.pop()}"
    if cart is not None:
        return f"cart(rank, size, {cart[0]}, {cart[1]})"
    if all(q == (r - 1) // 2 for r, q in values.items()):
        return "(rank - 1) // 2"
    for j in (0, 1):
        if all(q == 2 * r + 1 + j for r, q in values.items()):
            return f"2 * rank + {1 + j}"
    return None


def partition_expression(values: Mapping[int, int], size: int) -> str | None:
    """A colour expression that splits the ranks into the same parts as *values* (the
    recorded colours), or None."""
    def parts(f: Callable[[int], int]) -> bool:
        seen: dict[int, int] = {}
        back: dict[int, int] = {}
        for r, c in values.items():
            v = f(r)
            if seen.setdefault(v, c) != c or back.setdefault(c, v) != v:
                return False
        return True
    if len(set(values.values())) == 1:
        return "0"
    for m in range(2, size + 1):
        if size % m:
            continue
        if parts(lambda r, m=m: r % m):
            return f"rank % {m}"
        if parts(lambda r, m=m: r // m):
            return f"rank // {m}"
    return None


def order_expression(values: Mapping[int, int], colours: Mapping[int, int],
                     size: int) -> str | None:
    """A key expression that orders each part as *values* (the recorded ranks in the new
    communicator) do, or None."""
    def orders(f: Callable[[int], int]) -> bool:
        groups: dict[int, list[tuple[int, int]]] = {}
        for r, k in values.items():
            groups.setdefault(colours[r], []).append((f(r), k))
        return all([k for _, k in sorted(g)] == sorted(k for _, k in g)
                   for g in groups.values())
    if orders(lambda r: r):
        return "rank"
    for m in range(2, size + 1):
        if size % m == 0 and orders(lambda r, m=m: r % m):
            return f"rank % {m}"
    return None


def _cart(values: Mapping[int, int], size: int, px: int,
          receive: bool) -> tuple[int, int] | None:
    """The one (dx, dy) shift on the periodic ``px x (size // px)`` grid that maps every
    rank to its value, or None."""
    if not (1 < px < size and size % px == 0):
        return None
    py = size // px
    dx = {((q % px) - (r % px)) % px for r, q in values.items()}
    dy = {((q // px) - (r // px)) % py for r, q in values.items()}
    if len(dx) != 1 or len(dy) != 1:
        return None
    x, y = dx.pop(), dy.pop()
    x = x if x < px - x or (x == px - x and not receive) else x - px
    y = y if y < py - y or (y == py - y and not receive) else y - py
    return x, y
