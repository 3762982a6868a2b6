"""Memory layout of derived datatypes, and reading / writing data through it.

A datatype's *typemap* (MPI 4.0, section 5.1) is a list of ``(type, displacement)``
pairs; bsim keeps only what moving bytes needs: the byte ``blocks`` ``(offset,
length)`` of one element, in typemap order, with its lower bound ``lb`` and
``extent``.  Element ``i`` of a buffer starts at ``i * extent``; a message carries
the blocks of each element one after the other (the packed form, section 5.1.11).

The constructors follow section 5.1.2: copy ``k`` of block ``j`` of the old type sits
at ``displ_j + k * extent(old)``; ``lb = min(displ_j + lb(old))``,
``ub = max(displ_j + (blocklength_j - 1) * extent(old) + ub(old))`` over non-empty
blocks, ``extent = ub - lb``; the true bounds come from the bytes actually covered.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["Layout", "contiguous_layout", "combine", "GatherView", "packed_index"]

Block = tuple[int, int]
MAX_BLOCKS = 10_000_000
"""Layouts with more separate byte blocks than this are refused (memory)."""


class Layout:
    """Byte blocks of one element plus its bounds (``lb``, ``extent``)."""

    __slots__ = ("blocks", "lb", "extent", "size", "align", "contiguous")

    def __init__(self, blocks: Sequence[Block], lb: int, extent: int, align: int = 1) -> None:
        merged: list[Block] = []
        for off, n in blocks:
            if n <= 0:
                continue
            if merged and merged[-1][0] + merged[-1][1] == off:
                merged[-1] = (merged[-1][0], merged[-1][1] + n)
            else:
                merged.append((off, n))
        self.blocks: tuple[Block, ...] = tuple(merged)
        self.lb, self.extent = int(lb), int(extent)
        self.size = sum(n for _, n in merged)
        self.align = align
        # an element is its size bytes at offset 0 and elements abut (read per message)
        self.contiguous = (self.lb == 0 and self.extent == self.size
                           and (not self.blocks or self.blocks == ((0, self.size),)))

    @property
    def true_lb(self) -> int:
        return min((off for off, _ in self.blocks), default=0)

    @property
    def true_ub(self) -> int:
        return max((off + n for off, n in self.blocks), default=0)


def contiguous_layout(size: int, align: int = 1) -> Layout:
    """A predefined type: *size* bytes at offset 0."""
    return Layout([(0, size)], 0, size, align)


def combine(entries: Sequence[tuple[Layout, int, int]], pad: bool = False) -> Layout:
    """The layout of ``(old layout, byte displacement, blocklength)`` entries in order.

    With *pad* (``Create_struct``) the extent is rounded up to the largest alignment
    of the entries' types, the standard's ``epsilon`` (MPI 4.0, section 5.1.6), so an
    array of structs steps as a C array of the struct does.
    """
    blocks: list[Block] = []
    lbs, ubs = [], []
    align = max((old.align for old, _, _ in entries), default=1)
    for old, displ, count in entries:
        if count <= 0:
            continue
        if old.blocks == ((0, old.extent),):   # dense element: the copies are one block
            blocks.append((displ, count * old.extent))
        else:
            if count * len(old.blocks) > MAX_BLOCKS:
                raise ValueError(f"a datatype of more than {MAX_BLOCKS:,} separate blocks "
                                 f"is not simulated")
            for k in range(count):
                base = displ + k * old.extent
                blocks.extend((base + off, n) for off, n in old.blocks)
        lbs.append(displ + old.lb)
        ubs.append(displ + (count - 1) * old.extent + old.lb + old.extent)
    if not lbs:
        return Layout([], 0, 0, align)
    lb, ub = min(lbs), max(ubs)
    extent = ub - lb
    if pad and extent % align:
        extent += align - extent % align
    return Layout(blocks, lb, extent, align)


def packed_index(layout: Layout, count: int) -> np.ndarray:
    """Byte offsets, in packed order, of *count* elements of *layout* (element i at
    ``i * extent``)."""
    one = (np.concatenate([np.arange(off, off + n, dtype=np.int64) for off, n in layout.blocks])
           if layout.blocks else np.zeros(0, dtype=np.int64))
    if count <= 0 or one.size == 0:
        return np.zeros(0, dtype=np.int64)
    return (np.arange(count, dtype=np.int64)[:, None] * layout.extent + one[None, :]).ravel()


class GatherView:
    """A receive or send buffer seen through a derived datatype, as its packed bytes.

    Behaves as the byte ``memoryview`` the simulator moves data with: ``bytes(view)``,
    ``view[a:b]`` (bytes), ``view[a:b] = data`` (scattered into the user's memory),
    ``nbytes``, ``readonly``, ``len``.
    """

    __slots__ = ("_mem", "_index", "readonly")

    def __init__(self, mem: memoryview, index: np.ndarray) -> None:
        self._mem = mem
        self._index = index
        self.readonly = mem.readonly

    @property
    def nbytes(self) -> int:
        return int(self._index.size)

    def __len__(self) -> int:
        return int(self._index.size)

    def _array(self) -> np.ndarray:
        return np.frombuffer(self._mem, dtype=np.uint8)

    def __bytes__(self) -> bytes:
        return self._array()[self._index].tobytes()

    def tobytes(self) -> bytes:
        return bytes(self)

    def __getitem__(self, key: slice) -> bytes:
        return self._array()[self._index[key]].tobytes()

    def __setitem__(self, key: slice, data: Any) -> None:
        raw = np.frombuffer(bytes(data), dtype=np.uint8)
        where = self._index[key]
        self._array()[where[:raw.size]] = raw[:where.size]
