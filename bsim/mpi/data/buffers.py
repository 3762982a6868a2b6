"""Buffer specifications: what an uppercase MPI call is given, reduced to bytes.

The simulator needs only the message size.  A spec is any of (mpi4py's BufSpec):

* a buffer: numpy array, ``bytes``/``bytearray``/``memoryview``/``array.array``;
* a placeholder ``bsim.Buffer(nbytes)`` that allocates nothing (as the BSIM paper's MPI stubs do);
* ``[buf, count]``, ``[buf, datatype]``, ``[buf, count, datatype]`` where *buf*
  may be ``None`` (a placeholder of ``count`` elements) and *datatype* an
  ``MPI`` datatype or a typecode string (``"d"``).

When both ends of a message pass real buffers, the bytes are copied, so
unmodified mpi4py programs compute correct values.
"""

from __future__ import annotations

import ctypes
import operator
from itertools import accumulate
from typing import TYPE_CHECKING, Any

import numpy as np

from ...constants import BOTTOM
from ...engine.rank import current_or_none
from ...errors import MPIUsageError, MPIUsageTypeError
from .datatypes import PREDEFINED, Datatype, from_numpy, from_typecode
from .foreign import foreign_array
from .typemap import GatherView, packed_index

__all__ = ["Buffer", "buffer", "BufInfo", "parse_bufspec", "parse_buffer", "parse_vector_buffer",
           "buffer_address", "in_simulation"]

if TYPE_CHECKING:
    from ...engine.rank import VirtualRank

_BYTE = PREDEFINED["BYTE"]
COUNT_MAX = 2 ** 63 - 1   # MPI_Count, a signed 64-bit int: the largest count or byte size


def _too_large(count: int, dt: Datatype) -> str:
    """Why *count* elements of *dt* are out of ``MPI_Count``'s range (count or bytes)."""
    if count > COUNT_MAX:
        return f"count {count} exceeds MPI's largest count 2**63-1 (MPI_Count)"
    return (f"count {count} x {dt.label} = {count * dt.size} bytes exceeds MPI's largest "
            f"size 2**63-1 (MPI_Count)")


class BufInfo:
    """A parsed buffer spec: size in bytes, element count, datatype, memory or None."""

    __slots__ = ("nbytes", "count", "datatype", "mem")

    def __init__(self, nbytes: int, count: int, datatype: Datatype,
                 mem: memoryview | GatherView | None):
        self.nbytes = nbytes
        self.count = count
        self.datatype = datatype
        self.mem = mem

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle the spec without its memory (shipped with collective arrivals)."""
        return (BufInfo, (self.nbytes, self.count, self.datatype, None))


class Buffer(BufInfo):
    """A sized placeholder buffer: carries ``nbytes`` and no data.

    ``Buffer(nbytes)`` or ``Buffer(count, datatype)``.  Use it in skeletons
    where the real code would pass a large array: no memory is allocated.
    It is its own parsed spec, so passing one to a call costs nothing extra.
    """

    __slots__ = ()

    def __init__(self, count: int, datatype: Datatype | str | None = None) -> None:
        dt = _BYTE if datatype is None else _as_datatype(datatype)
        if not isinstance(count, (int, np.integer)) or count < 0:
            raise ValueError(f"Buffer: count must be an int >= 0, got {count!r}")
        self.count = int(count)
        self.datatype = dt
        self.nbytes = self.count * dt.size
        if self.nbytes > COUNT_MAX or self.count > COUNT_MAX:
            raise ValueError(f"Buffer: {_too_large(self.count, dt)}")
        self.mem = None

    def __len__(self) -> int:
        return self.nbytes

    def __repr__(self) -> str:
        return f"<Buffer {self.count} x {self.datatype.label} = {self.nbytes} bytes>"


def in_simulation() -> bool:
    """True when called from inside a virtual rank of a running simulation."""
    return current_or_none() is not None


def buffer(count: int, datatype: Any = None) -> Any:
    """A buffer of *count* elements: a placeholder inside a simulation, real outside.

    Skeletons that must also run under real ``mpiexec`` use this: in bsim it
    returns a :class:`Buffer` (no memory); under real MPI it returns a
    zero-filled numpy array of the datatype.  *datatype* is a bsim or mpi4py
    datatype, a typecode string, or None (bytes).
    """
    if in_simulation():
        return Buffer(count, datatype)
    typechar = getattr(datatype, "typechar", None)   # a real mpi4py datatype
    if typechar is not None and not isinstance(datatype, Datatype):
        return np.zeros(count, dtype=np.dtype(typechar))
    dt = _BYTE if datatype is None else _as_datatype(datatype)
    np_dtype = dt.dtype if dt.dtype is not None else np.dtype(("u1", dt.size))
    return np.zeros(count, dtype=np_dtype)


def _as_datatype(datatype: Any) -> Datatype:
    if isinstance(datatype, Datatype):
        if not datatype:
            raise ValueError("MPI.DATATYPE_NULL is not a datatype of data")
        if not datatype.committed:   # as MPICH: "Datatype has not been committed"
            raise ValueError(f"datatype {datatype._rec.label} is not committed: call its "
                             f"Commit() before passing data with it")
        return datatype
    if isinstance(datatype, str):
        try:
            if not datatype.isprintable():   # numpy reads "\0" as bool; mpi4py refuses it
                raise ValueError(f"unknown datatype typecode {datatype!r}")
            return from_typecode(datatype)
        except ValueError as exc:
            raise KeyError(str(exc)) from None   # mpi4py: an unknown typecode is a KeyError
    raise TypeError(f"expected an MPI datatype or a typecode string, got {datatype!r}")


def _raw(buf: Any, typed: bool = True) -> tuple[memoryview | None, int, Datatype]:
    """(byte view or None, element count, datatype) of a bare buffer object.

    *typed*: the datatype comes from the buffer itself (no datatype in the spec), so a numpy
    array of non-native byte order is refused (``BufferError``); one of objects always.
    """
    if buf is None or buf is BOTTOM:   # None or MPI.BOTTOM: no data
        return None, 0, _BYTE
    if isinstance(buf, Buffer):
        return None, buf.count, buf.datatype
    if isinstance(buf, np.ndarray):
        if not (buf.flags.c_contiguous or buf.flags.f_contiguous):
            raise BufferError("buffer is not contiguous")
        if typed and not buf.dtype.isnative:
            raise BufferError(f"buffer of non-native byte order ({buf.dtype.str}): give "
                              f"the datatype explicitly")
        if buf.dtype.hasobject or (typed and buf.dtype.fields is not None):   # as mpi4py
            hint = "use comm.send for objects" if buf.dtype.hasobject else "give [buf, datatype]"
            raise KeyError(f"cannot map {buf.data.format!r} to MPI datatype ({hint})")
        view = buf.reshape(-1, order="A").data   # the memory in its own order
        dt = from_numpy(buf.dtype) if typed or buf.dtype.isnative else _BYTE
        return view.cast("B") if buf.nbytes else None, buf.size, dt
    try:
        view = memoryview(buf)
    except TypeError:
        array = foreign_array(buf)
        if array is None:
            raise TypeError(f"expected a buffer, a bsim.Buffer or a [buf, count, datatype] "
                            f"spec, got {type(buf).__name__}") from None
        return _raw(array, typed)
    fmt = view.format
    dt = from_typecode(fmt)   # as mpi4py: "B" is UNSIGNED_CHAR, "b" SIGNED_CHAR, "c" CHAR
    count = view.nbytes // max(dt.size, 1)
    return (view.cast("B") if view.nbytes else None), count, dt


def _count_in(mem: memoryview, dt: Datatype) -> int:
    """How many elements of *dt* a buffer of ``mem.nbytes`` holds, counted by extent as
    mpi4py counts ``[buf, datatype]``: a length that is not a multiple of the extent is a
    ``ValueError`` (mpi4py's words), pair types such as ``DOUBLE_INT`` (12 bytes of data,
    extent 16) and types with gaps included."""
    lay = dt.layout
    step = lay.extent if lay.extent > 0 else max(dt.size, 1)
    if mem.nbytes % step:
        raise ValueError(f"message: cannot infer count, buffer length {mem.nbytes} is not a "
                         f"multiple of datatype extent {step} (lb:{lay.lb}, "
                         f"ub:{lay.lb + lay.extent})")
    return mem.nbytes // step


def _through(mem: memoryview, dt: Datatype, count: int) -> GatherView:
    """*count* elements of the derived type *dt* in *mem*, as their packed bytes."""
    lay = dt.layout
    if count and lay.blocks:
        last = (count - 1) * lay.extent
        low, high = min(lay.true_lb, last + lay.true_lb), max(lay.true_ub, last + lay.true_ub)
        if low < 0:
            raise ValueError(f"{count} x {dt.label} starts {-low} bytes before the buffer "
                             f"(negative displacement or lower bound)")
        if high > mem.nbytes:
            raise ValueError(f"count {count} x {dt.label} spans {high} bytes, more than the "
                             f"buffer's {mem.nbytes} bytes")
    return GatherView(mem, packed_index(lay, count))


def parse_bufspec(spec: Any) -> BufInfo:
    """Reduce a BufSpec to a :class:`BufInfo`.  Raises ``TypeError``/``ValueError``."""
    if spec.__class__ is Buffer:   # fast path: a placeholder is already parsed
        return spec
    if isinstance(spec, (list, tuple)):
        if not 1 <= len(spec) <= 4:
            raise ValueError(f"buffer spec must have 1 to 4 items, got {len(spec)}")
        given_count: Any = None
        displ: Any = 0
        typespec: Any = None   # None: the buffer's own type
        if len(spec) == 2:
            if spec[1] is None or isinstance(spec[1], (Datatype, str)):
                typespec = spec[1]
            else:
                given_count = spec[1]
        elif len(spec) == 3:
            given_count, typespec = spec[1], spec[2]
        elif len(spec) == 4:   # [buf, count, displ, datatype]
            given_count, displ, typespec = spec[1], spec[2], spec[3]
        if isinstance(given_count, (tuple, list)):   # [buf, (count, displ), datatype]
            given_count, displ = given_count
        mem, count, dt = _raw(spec[0], typespec is None)
        if typespec is not None:
            dt = _as_datatype(typespec)
            if mem is not None and given_count is None and not displ:   # mpi4py infers it
                count = _count_in(mem, dt)
        if spec[0] is None and displ is not None and len(spec) == 4 and given_count:
            raise ValueError("a count and displacement into no buffer (None); a bsim "
                             "placeholder is [None, count, datatype]")
        if displ:
            if not isinstance(displ, (int, np.integer)) or displ < 0:
                raise ValueError(f"displacement must be an int >= 0, got {displ!r}")
            offset = int(displ) * dt.extent
            if mem is None or not 0 <= offset <= mem.nbytes:
                raise ValueError(f"displacement {displ} x {dt.label} reaches past the buffer")
            mem = mem[offset:]
            if given_count is None:
                count = _count_in(mem, dt)
        if given_count is not None:
            if not isinstance(given_count, (int, np.integer)) or given_count < 0:
                raise ValueError(f"count must be an int >= 0, got {given_count!r}")
            count = int(given_count)
        nbytes = count * dt.size
        if nbytes > COUNT_MAX or count > COUNT_MAX:
            raise ValueError(_too_large(count, dt))
        if mem is not None and not dt.layout.contiguous:
            return BufInfo(nbytes, count, dt, _through(mem, dt, count))
        if mem is not None:
            if nbytes > mem.nbytes:
                raise ValueError(f"count {count} x {dt.label} = {nbytes} bytes exceeds the "
                                 f"buffer's {mem.nbytes} bytes")
            mem = mem[:nbytes]
        return BufInfo(nbytes, count, dt, mem)
    mem, count, dt = _raw(spec)
    nbytes = mem.nbytes if mem is not None else count * dt.size
    return BufInfo(nbytes, count, dt, mem)


def buffer_address(location: Any) -> int:
    """The address of a buffer's first byte (0 for ``BOTTOM``/None): ``MPI.Get_address``
    (``bsim/mpi/data/addresses.py``) for anything but a window's null memory.

    The buffer is read as a message is (DLPack and CUDA-array-interface objects
    checked the same way), so a bad one raises what mpi4py raises."""
    mem, _, _ = _raw(location, False)
    if mem is None:
        return 0
    return int(np.frombuffer(mem, dtype=np.uint8).ctypes.data)


class BufInfoV:
    """A parsed vector spec: memory (or None), counts and displacements in elements.

    A placeholder split in equal blocks keeps only its total (``counts`` and
    ``displs`` None): nothing is moved, so no per-rank lists are built.
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
    mem, _, _ = _raw(buf)
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
        if spec.count % nblocks:
            raise ValueError(f"buffer of {spec.count} elements does not split into {nblocks} "
                             f"equal blocks")
        return BufInfoV(None, None, None, spec.datatype, spec.nbytes, nblocks)
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
    mem, count, dt = _raw(items[0], typespec is None)
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


class MPIUsageBufferError(MPIUsageError, BufferError):
    """A buffer MPI cannot use as given (not contiguous, foreign byte order, device memory)."""


class MPIUsageKeyError(MPIUsageError, KeyError):
    """An unknown typecode in a buffer spec (mpi4py raises ``KeyError``)."""

    def __str__(self) -> str:   # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


def _usage_error(exc: Exception) -> type[MPIUsageError]:
    if isinstance(exc, BufferError):
        return MPIUsageBufferError
    if isinstance(exc, KeyError):
        return MPIUsageKeyError
    return MPIUsageTypeError if isinstance(exc, TypeError) else MPIUsageError


def parse_buffer(vr: VirtualRank, spec: Any, call: str) -> BufInfo:
    """:func:`parse_bufspec` for an MPI call: a bad spec is an :class:`MPIUsageError`
    naming the rank and the call (also a ``TypeError`` or ``BufferError`` when that is
    what mpi4py raises)."""
    try:
        return parse_bufspec(spec)
    except (TypeError, ValueError, BufferError, KeyError) as exc:
        why = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        raise _usage_error(exc)(f"rank {vr.rank}: {call}: bad buffer: {why}") from None


def parse_vector_buffer(vr: VirtualRank, spec: Any, nblocks: int, call: str,
                        equal: bool = False) -> BufInfoV:
    """:func:`parse_bufspecv` for an MPI call (errors name the rank and the call)."""
    try:
        return parse_bufspecv(spec, nblocks, equal)
    except (TypeError, ValueError, BufferError, KeyError) as exc:
        why = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        raise _usage_error(exc)(f"rank {vr.rank}: {call}: bad vector buffer: {why}") from None
