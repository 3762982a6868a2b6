# cython: annotation_typing=False
"""Buffer specifications: what an uppercase MPI call is given, reduced to bytes.

The simulator needs only the message size.  A spec is any of (mpi4py's BufSpec):

* a buffer: numpy array, ``bytes``/``bytearray``/``memoryview``/``array.array``;
* a placeholder ``bsim.Buffer(nbytes)`` that allocates nothing (as the BSIM paper's MPI stubs do);
* ``[buf, count]``, ``[buf, datatype]``, ``[buf, count, datatype]`` where *buf*
  may be ``None`` (a placeholder of ``count`` elements) and *datatype* an
  ``MPI`` datatype or a typecode string (``"d"``).

When both ends of a message pass real buffers, the bytes are copied, so
unmodified mpi4py programs compute correct values.

Compiled with the hot path (``bsim/engine/compiled.py``): the placeholder (``Buffer``,
``placeholder.py``) and the plain arrays are parsed here; every other spec in
``buffer_specs.py``, which runs as Python (it says why).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...engine.rank import current_or_none
from ...errors import MPIUsageError, MPIUsageTypeError
from .buffer_info import BufInfo
from .buffer_specs import parse_spec
from .datatypes import CONTIGUOUS_PREDEFINED, Datatype, plain_numpy_type
from .placeholder import _BYTE, Buffer, _as_datatype

__all__ = ["Buffer", "buffer", "BufInfo", "parse_bufspec", "parse_buffer", "in_simulation",
           "MPIUsageBufferError", "MPIUsageKeyError"]

if TYPE_CHECKING:
    from ...engine.rank import VirtualRank

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
    return parse_spec(spec)


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
