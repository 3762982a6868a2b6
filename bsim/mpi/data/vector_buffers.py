# cython: annotation_typing=False
"""Vector buffer specifications: a buffer split in blocks, one per rank (the ``v`` and
``w`` forms of collectives: ``Gatherv``, ``Alltoallw``, ...), reduced to bytes.

A BufSpecV is ``buf``, ``[buf, counts]``, ``[buf, (counts, displs)]`` or ``[buf, counts,
displs]``, each optionally ending with a datatype (mpi4py's); a BufSpecW gives a datatype
per block.  The single-buffer forms are :mod:`bsim.mpi.data.buffers`'.
"""

from __future__ import annotations

import ctypes
import operator
from itertools import accumulate
from typing import TYPE_CHECKING, Any

import numpy as np

from ...constants import BOTTOM
from .buffer_specs import _count_in, _through, raw_buffer
from .buffers import _usage_error
from .datatypes import Datatype
from .placeholder import _BYTE, COUNT_MAX, Buffer, _as_datatype, _too_large
from .typemap import GatherView

__all__ = ["BufInfoV", "parse_bufspecv", "parse_bufspecw", "parse_vector_buffer"]

if TYPE_CHECKING:
    from ...engine.rank import VirtualRank


class BufInfoV:
    """A parsed vector spec: memory (or None), counts and displacements in elements.

    A placeholder split in equal blocks keeps only its total (``counts`` and
    ``displs`` None): nothing is moved, so no per-rank lists are built.  Compiled, an
    extension type (``vector_buffers.pxd``) whose ``block`` the collectives call in C.
    """

    __slots__ = ("mem", "counts", "displs", "datatype", "_nbytes", "_nblocks")

    def __init__(self, mem: memoryview | GatherView | None, counts: list[int] | None,
                 displs: list[int] | None, datatype: Datatype, nbytes: int = -1,
                 nblocks: int = 1) -> None:
        self.mem = mem
        self.counts = counts
        self.displs = displs
        self.datatype = datatype
        self._nbytes = nbytes
        self._nblocks = nblocks

    @property
    def nbytes(self) -> int:
        """Total bytes of all blocks."""
        if self._nbytes >= 0 or self.counts is None:   # an equal-block placeholder
            return self._nbytes
        return sum(self.counts) * self.datatype.size

    def block(self, i: int) -> tuple[int, int]:
        """Byte offset and byte length of block *i*."""
        counts, displs = self.counts, self.displs
        if counts is None or displs is None:   # equal-block placeholder
            per = self._nbytes // self._nblocks
            return i * per, per
        size = self.datatype.size
        return displs[i] * size, counts[i] * size


def parse_bufspecw(spec: Any, nblocks: int) -> BufInfoV:
    """Reduce a BufSpecW (``[buf, counts, displs, datatypes]``,
    ``[buf, (counts, displs), datatypes]`` or ``[buf, datatypes]`` for one element of
    each; displacements in **bytes**, one datatype per block) to a :class:`BufInfoV`
    over bytes, as mpi4py's ``message_vector_w`` reads it."""
    items = list(spec)
    if len(items) == 2:   # [buf, datatypes]: one element of each type at offset 0
        buf, counts, displs, types = items[0], None, None, items[1]
    elif len(items) == 3:
        buf, (counts, displs), types = items
    elif len(items) == 4:
        buf, counts, displs, types = items
    else:
        raise ValueError("Alltoallw buffers are [buf, counts, displs, datatypes], "
                         "[buf, (counts, displs), datatypes] or [buf, datatypes]")
    if buf is BOTTOM and (counts is None or displs is None):
        raise ValueError("an MPI.BOTTOM buffer needs counts and displacements")
    if counts is None and displs is None:
        counts, displs = [1] * nblocks, [0] * nblocks
    counts, displs = _ints(counts, nblocks, "counts"), _ints(displs, nblocks, "displs")
    dts = [_as_datatype(t) for t in types]
    if not len(counts) == len(displs) == len(dts) == nblocks:
        raise ValueError(f"need {nblocks} counts, displacements and datatypes")
    if any(c < 0 for c in counts) or any(d < 0 for d in displs):
        raise ValueError("counts and displacements must be >= 0")
    sizes = [c * dt.size for c, dt in zip(counts, dts)]
    if buf is BOTTOM and any(dt.layout.lb for dt in dts):
        return _absolute_blocks(sizes, displs, dts)
    mem, _, _ = raw_buffer(buf)
    if mem is not None and not all(dt.layout.contiguous for dt in dts):
        return _blocks_through(mem, counts, displs, dts)
    if mem is not None:
        end = max((d + n for d, n in zip(displs, sizes)), default=0)
        if end > mem.nbytes:
            raise ValueError(f"blocks reach byte {end} past the buffer's {mem.nbytes} bytes")
    # a byte-typed vector: block i is sizes[i] bytes at byte displs[i]
    return BufInfoV(mem, sizes, displs, _BYTE)


def _blocks_through(mem: memoryview, counts: list[int], displs: list[int],
                    dts: list[Datatype]) -> BufInfoV:
    """The w collectives' blocks over datatypes with gaps: block *i* is ``counts[i]``
    elements of ``dts[i]`` at byte ``displs[i]``, seen as their packed bytes one block
    after another (a byte-typed vector over a :class:`GatherView` of the buffer)."""
    parts, sizes, starts, at = [], [], [], 0
    for c, d, dt in zip(counts, displs, dts):
        view = _through(mem[d:], dt, c)
        parts.append(view._index + d)
        sizes.append(view.nbytes)
        starts.append(at)
        at += view.nbytes
    index = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    return BufInfoV(GatherView(mem, index), sizes, starts, _BYTE)


def _absolute_blocks(sizes: list[int], displs: list[int], dts: list[Datatype]) -> BufInfoV:
    """``MPI.BOTTOM`` with datatypes at absolute addresses (``MPI.Get_address`` of live
    buffers, e.g. ``Create_struct([n], [addr], [MPI.INT])``): block *i* is ``sizes[i]``
    bytes at host address ``displs[i] + lb_i``, as an MPI library reads them.  Each type
    must be one contiguous run after its lower bound; the blocks are viewed through one
    span of host memory from the lowest address to the highest."""
    starts = []
    for d, dt in zip(displs, dts):
        lay = dt.layout
        if lay.extent != lay.size or lay.blocks not in ((), ((lay.lb, lay.size),)):
            raise ValueError(f"{dt.name} has gaps: MPI.BOTTOM buffers in bsim's v and w "
                             f"collectives take one contiguous run per datatype")
        starts.append(d + lay.lb)
    used = [(a, n) for a, n in zip(starts, sizes) if n]
    if not used:
        return BufInfoV(None, sizes, [0] * len(sizes), _BYTE)
    base = min(a for a, _ in used)
    span = max(a + n for a, n in used) - base
    mem = memoryview((ctypes.c_char * span).from_address(base)).cast("B")
    return BufInfoV(mem, sizes, [a - base for a in starts], _BYTE)


def _ints(spec: Any, nblocks: int, what: str, stride: bool = False) -> list[int]:
    """Counts or displacements: a sequence of integers (numpy integers and 0-d integer
    arrays too; a float is a ``TypeError``), or one integer *n*: every block's count, or
    with *stride* the displacements ``0, n, 2n, ...`` (mpi4py's strided form)."""
    if isinstance(spec, (int, np.integer)) or (isinstance(spec, np.ndarray) and spec.ndim == 0):
        n = operator.index(spec)
        return [n * i for i in range(nblocks)] if stride else [n] * nblocks
    try:
        return [operator.index(x) for x in spec]
    except TypeError:
        raise TypeError(f"{what} must be integers, got {spec!r}") from None


def parse_bufspecv(spec: Any, nblocks: int, equal: bool = False) -> BufInfoV:
    """Reduce a BufSpecV (``buf``, ``[buf, counts]``, ``[buf, (counts, displs)]``,
    ``[buf, counts, displs]``, each optionally ending with a datatype; ``[buf, counts,
    displs, datatype]``) for *nblocks* ranks.

    Counts are one integer for all blocks or one per block, displacements one per block
    or one integer *d* for the strided ``0, d, 2d, ...``; a ``None`` anywhere is inferred
    (mpi4py): without counts the buffer is split in *nblocks* blocks (the first
    ``count % nblocks`` one element longer), displacements default to the running sum
    of counts, the datatype to the buffer's own.  With *equal* (the block forms:
    ``Gather``, ``Alltoall``, ...) a buffer without counts must split evenly, as in
    mpi4py's ``message_block``.
    """
    if spec.__class__ is Buffer:   # fast path: a placeholder in equal blocks
        return _equal_blocks(spec, nblocks)
    items = list(spec) if isinstance(spec, (list, tuple)) else [spec]
    if (len(items) == 3 and items[0] is None and isinstance(items[1], (int, np.integer))
            and isinstance(items[2], (Datatype, str))):   # [None, count, datatype]
        dt = _as_datatype(items[2])
        if items[1] < 0:
            raise ValueError(f"need counts >= 0, got {items[1]}")
        if items[1] > COUNT_MAX or items[1] * dt.size > COUNT_MAX:
            raise ValueError(_too_large(int(items[1]), dt))
        return BufInfoV(None, None, None, dt, int(items[1]) * nblocks * dt.size, nblocks)
    counts_spec: Any = None
    displs_spec: Any = None
    typespec: Any = None   # None: the buffer's own type
    if isinstance(spec, (list, tuple)):
        if not 1 <= len(items) <= 4:
            raise ValueError(f"vector buffer spec must have 1 to 4 items, got {len(items)}")
        if len(items) == 2:
            if items[1] is None or isinstance(items[1], (Datatype, str)):
                typespec = items[1]
            else:
                counts_spec = items[1]
        elif len(items) == 3 and isinstance(items[2], (list, tuple, np.ndarray)):
            counts_spec, displs_spec = items[1], items[2]   # [buf, counts, displs]
        elif len(items) == 3:
            counts_spec, typespec = items[1], items[2]
        elif len(items) == 4:
            counts_spec, displs_spec, typespec = items[1], items[2], items[3]
        if len(items) < 4 and isinstance(counts_spec, tuple) and len(counts_spec) == 2:
            counts_spec, displs_spec = counts_spec   # [buf, (counts, displs), datatype]
    mem, count, dt = raw_buffer(items[0], typespec is None)
    if typespec is not None:
        dt = _as_datatype(typespec)
        if mem is not None and counts_spec is None:   # mpi4py infers it
            count = _count_in(mem, dt)
    counts: list[int] | None = None
    displs: list[int] | None = None
    if counts_spec is not None:
        counts = _ints(counts_spec, nblocks, "counts")
    if displs_spec is not None:
        displs = _ints(displs_spec, nblocks, "displacements", stride=True)
    if counts is None and equal and count % nblocks:
        raise ValueError(f"cannot infer the count: {count} elements are not a multiple of "
                         f"the {nblocks} blocks")
    if counts is None:   # mpi4py: the first count % nblocks blocks get one more element
        counts = [count // nblocks + (count % nblocks > i) for i in range(nblocks)]
    counts = [int(c) for c in counts]
    if len(counts) != nblocks or any(c < 0 for c in counts):
        raise ValueError(f"need {nblocks} counts >= 0, got {counts}")
    if counts and max(counts) * max(dt.size, 1) > COUNT_MAX:
        raise ValueError(_too_large(max(counts), dt))
    if displs is None:   # the running sum of the counts
        displs = [0, *accumulate(counts[:-1])] if counts else []
    displs = [int(d) for d in displs]
    if len(displs) != nblocks:
        raise ValueError(f"need {nblocks} displacements, got {displs}")
    if mem is not None and not dt.layout.contiguous:
        if any(d < 0 for d in displs):
            raise ValueError(f"need displacements >= 0, got {displs}")
        # elements 0..n-1 of the type, seen as their packed bytes: block i is then
        # counts[i] * size bytes at displs[i] * size, as for a contiguous type
        used = max((d + c for d, c in zip(displs, counts) if c), default=0)
        return BufInfoV(_through(mem, dt, used), counts, displs, dt)
    if mem is not None:
        end = max((d + c) * dt.size for d, c in zip(displs, counts)) if counts else 0
        if end > mem.nbytes:
            raise ValueError(f"counts/displacements reach byte {end} past the buffer's "
                             f"{mem.nbytes} bytes")
    return BufInfoV(mem, counts, displs, dt)


def _equal_blocks(placeholder: Buffer, nblocks: int) -> BufInfoV:
    """A placeholder split in *nblocks* equal blocks (compiled, its fields read in C)."""
    if placeholder.count % nblocks:
        raise ValueError(f"buffer of {placeholder.count} elements does not split into "
                         f"{nblocks} equal blocks")
    return BufInfoV(None, None, None, placeholder.datatype, placeholder.nbytes, nblocks)


def parse_vector_buffer(vr: VirtualRank, spec: Any, nblocks: int, call: str,
                        equal: bool = False) -> BufInfoV:
    """:func:`parse_bufspecv` for an MPI call (errors name the rank and the call)."""
    try:
        if spec.__class__ is Buffer:   # (the usual placeholder: in C when compiled)
            return _equal_blocks(spec, nblocks)
        return parse_bufspecv(spec, nblocks, equal)
    except (TypeError, ValueError, BufferError, KeyError) as exc:
        why = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        raise _usage_error(exc)(f"rank {vr.rank}: {call}: bad vector buffer: {why}") from None
