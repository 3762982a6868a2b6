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

from typing import TYPE_CHECKING, Any

import numpy as np

from ...constants import BOTTOM
from ...engine.rank import current_or_none
from ...errors import MPIUsageError, MPIUsageTypeError
from .buffer_info import BufInfo
from .datatype_records import NULL_REC
from .datatypes import (
    CONTIGUOUS_PREDEFINED,
    PREDEFINED,
    Datatype,
    from_numpy,
    from_typecode,
    plain_numpy_type,
)
from .foreign import foreign_array
from .typemap import GatherView, packed_index

__all__ = ["Buffer", "buffer", "BufInfo", "parse_bufspec", "parse_buffer", "raw_buffer",
           "in_simulation", "MPIUsageBufferError", "MPIUsageKeyError"]

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
        rec = datatype._rec   # (what bool() and .committed read: a Buffer per call is hot)
        if rec is NULL_REC:
            raise ValueError("MPI.DATATYPE_NULL is not a datatype of data")
        if not rec.committed:   # as MPICH: "Datatype has not been committed"
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


def raw_buffer(buf: Any, typed: bool = True) -> tuple[memoryview | None, int, Datatype]:
    """(byte view or None, element count, datatype) of a bare buffer object.

    *typed*: the datatype comes from the buffer itself (no datatype in the spec), so a numpy
    array of non-native byte order is refused (``BufferError``); one of objects always.
    """
    if buf is None or buf is BOTTOM:   # None or MPI.BOTTOM: no data
        return None, 0, _BYTE
    if isinstance(buf, Buffer):
        return None, buf.count, buf.datatype
    if isinstance(buf, np.ndarray):
        if buf.__class__ is np.ndarray and buf.flags.c_contiguous:   # the hot path
            dt = plain_numpy_type(buf.dtype)   # a predefined type: nothing to refuse
            if dt is not None:
                return (buf.data.cast("B") if buf.nbytes else None), buf.size, dt
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
        return raw_buffer(array, typed)
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
    if spec.__class__ is np.ndarray and spec.flags.c_contiguous:   # a plain array
        dt = plain_numpy_type(spec.dtype)   # (raw_buffer's hot path, without the call)
        if dt is not None:
            n = spec.nbytes
            return BufInfo(n, spec.size, dt, spec.data.cast("B") if n else None)
    if isinstance(spec, (list, tuple)):
        if len(spec) == 2 and id(spec[1]) in CONTIGUOUS_PREDEFINED:   # [array, MPI.DOUBLE]
            buf, size = spec[0], spec[1].size
            if buf.__class__ is np.ndarray and buf.flags.c_contiguous and size \
                    and plain_numpy_type(buf.dtype) is not None:
                n = buf.nbytes
                if n and not n % size:   # (else the general path says what is wrong)
                    return BufInfo(n, n // size, spec[1], buf.data.cast("B"))
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
        mem, count, dt = raw_buffer(spec[0], typespec is None)
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
    mem, count, dt = raw_buffer(spec)
    nbytes = mem.nbytes if mem is not None else count * dt.size
    return BufInfo(nbytes, count, dt, mem)


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
