"""Buffer specifications other than the hot path's: ``[buf, count, datatype]`` and its
forms, and any bare buffer (``bytes``, ``array.array``, a numpy array of any layout, a
DLPack or CUDA-array-interface object), reduced to ``(memory, count, datatype)``.

This module always runs as Python, while ``buffers.py`` around it is compiled: the errors
here are raised while a view of the user's buffer is held, and an interpreted frame keeps
that view alive, through the error's traceback, until the error is handled.  A compiled
frame drops it as the error leaves, and a foreign exporter's release callback (a ctypes
``PyCapsule`` destructor, as in mpi4py's own tests) then runs with the error pending and
loses it (``SystemError: returned NULL without setting an exception``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...constants import BOTTOM
from .buffer_info import BufInfo
from .datatypes import Datatype, from_numpy, from_typecode, plain_numpy_type
from .foreign import foreign_array
from .placeholder import _BYTE, COUNT_MAX, Buffer, _as_datatype, _too_large
from .typemap import GatherView, packed_index

__all__ = ["raw_buffer", "parse_spec"]


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


def parse_spec(spec: Any) -> BufInfo:
    """A spec that is not a placeholder, a plain C-contiguous array or ``[array, MPI.X]``
    of one (``buffers.parse_bufspec`` takes those): ``[buf, ...]`` lists and tuples, and
    bare buffers.  Raises ``TypeError``/``ValueError``/``BufferError``/``KeyError``."""
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


