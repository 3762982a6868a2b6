"""``Pack``/``Unpack`` and their portable ``external32`` forms (MPI 4.1, 5.2 and 14.5.2).

:class:`DatatypePacking` is mixed into :class:`bsim.mpi.data.datatypes.Datatype`.  As in
mpi4py 4.1.2 the input of ``Pack`` is a plain buffer holding ``len // extent``
elements of the datatype and the output a byte buffer written from *position*;
``Unpack`` fills ``len // extent`` elements of its output.  ``Pack`` writes the
*packed form* a message carries (the bytes of each element's blocks in typemap order,
``bsim/mpi/data/typemap.py``): ``Pack_size(count)`` is ``count * size`` (MPICH adds no
header).  ``Pack_external`` writes MPI's canonical ``external32`` representation: each
basic datatype big-endian at its section 14.5.2 size (``LONG`` and ``UNSIGNED_LONG`` 4
bytes, ``WCHAR`` 2, ``LONG_DOUBLE`` an IEEE quad of 16, the others their native size;
pair types member by member), as MPICH does; a datatype with no external32 form
(``FLOAT16_T``) is ``ERR_TYPE``.  Not enough room in the output or input is
``ERR_TRUNCATE``.  A derived datatype that was not committed is ``ERR_TYPE`` in
``Pack``, ``Unpack``, ``Pack_size``, ``Pack_external`` and ``Unpack_external``, as
MPICH's "Datatype has not been committed" (its ``Pack_external_size`` accepts one, and
so does bsim's).

Timing: packing is a local memory copy, and bsim's network models give no
memory-copy cost, so these calls charge no simulated time (like the datatype queries).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...constants import ERR_ARG
from .datatype_records import COMBINER, DatatypeBase, TypeRecord, type_error
from .foreign import foreign_array
from .typemap import packed_index

if TYPE_CHECKING:
    from ..comms.comm import Comm

__all__ = ["DatatypePacking", "signature", "PAIR_MEMBERS"]

ERR_TRUNCATE = 14
_EXTERNAL = {"LONG": ">i4", "UNSIGNED_LONG": ">u4", "WCHAR": ">u2"}
"""external32 encodings that differ from the native type in size (others: big-endian)."""
_QUAD = np.finfo(np.longdouble).nmant == 63   # x86 80-bit long double (else already quad)


def signature(rec: TypeRecord) -> list[TypeRecord]:
    """The basic datatypes of one element in typemap order (MPI's type signature)."""
    kind = rec.combiner
    if kind == COMBINER["NAMED"]:
        if rec.dtype is None and rec.typestr and rec.typestr.startswith("V"):   # a pair
            return list(PAIR_MEMBERS[rec.label])
        return [rec]
    if not rec.types:   # Fortran 90 kinds
        return [rec]
    if kind == COMBINER["STRUCT"]:
        n = rec.counts[0]
        out: list[TypeRecord] = []
        for bl, t in zip(rec.counts[1:n + 1], rec.types):
            out += signature(t) * bl
        return out
    old = rec.types[0]
    copies = rec.layout.size // old.layout.size if old.layout.size else 0
    return signature(old) * copies


PAIR_MEMBERS: dict[str, tuple[TypeRecord, ...]] = {}
"""The members of each pair type (filled by ``bsim/mpi/data/datatypes.py``)."""


def _encoding(rec: TypeRecord) -> tuple[np.dtype, np.dtype | str]:
    """(native numpy dtype, external32 dtype or ``"quad"``) of a basic datatype."""
    native = rec.dtype
    label = rec.label
    if native is not None and native.kind == "U":   # wchar_t: its code points
        native = np.dtype(f"<u{native.itemsize}")
    if native is None or rec.typechar in ("e",) or rec.label in ("BFLOAT16_T",):
        raise type_error("Pack_external", f"{label} has no external32 representation")
    if native.kind in "fc" and native.itemsize in (16, 32) and native.char in "gG":
        return native, "quad"
    ext = _EXTERNAL.get(label)
    if ext is not None:
        return native, np.dtype(ext)
    if native.kind in "SUV" or native.itemsize == 1:
        return native, native
    return native, native.newbyteorder(">")


def _runs(sig: list[TypeRecord]) -> list[tuple[TypeRecord, int]]:
    runs: list[tuple[TypeRecord, int]] = []
    for rec in sig:
        if runs and runs[-1][0] is rec:
            runs[-1] = (rec, runs[-1][1] + 1)
        else:
            runs.append((rec, 1))
    return runs


def _ext_size(rec: TypeRecord) -> int:
    native, ext = _encoding(rec)
    return 16 * (native.itemsize // 16) if ext == "quad" else np.dtype(ext).itemsize


def _quad_out(raw: bytes) -> bytes:
    """x86 extended long doubles (16 bytes each) to big-endian IEEE binary128."""
    if not _QUAD:
        return np.frombuffer(raw, np.dtype("u1")).reshape(-1, 16)[:, ::-1].tobytes()
    words = np.frombuffer(raw, dtype="<u8").reshape(-1, 2)
    mant, sexp = words[:, 0], words[:, 1] & np.uint64(0xFFFF)
    hi = (sexp << np.uint64(48)) | ((mant & np.uint64(0x7FFFFFFFFFFFFFFF)) >> np.uint64(15))
    lo = (mant & np.uint64(0x7FFF)) << np.uint64(49)
    return np.stack([hi, lo], axis=1).astype(">u8").tobytes()


def _quad_in(raw: bytes) -> bytes:
    """Big-endian IEEE binary128 to x86 extended long doubles (16 bytes each)."""
    if not _QUAD:
        return np.frombuffer(raw, np.dtype("u1")).reshape(-1, 16)[:, ::-1].tobytes()
    words = np.frombuffer(raw, dtype=">u8").reshape(-1, 2).astype("<u8")
    hi, lo = words[:, 0], words[:, 1]
    sexp = hi >> np.uint64(48)
    lead = np.where((sexp & np.uint64(0x7FFF)) != 0, np.uint64(1 << 63), np.uint64(0))
    mant = lead | ((hi & np.uint64((1 << 48) - 1)) << np.uint64(15)) | (lo >> np.uint64(49))
    return np.stack([mant, sexp], axis=1).astype("<u8").tobytes()


def _convert(sig: list[TypeRecord], data: bytes, out: bool) -> bytes:
    """Native packed bytes to external32 (*out*) or back, basic datatype by datatype."""
    parts, pos = [], 0
    for rec, n in _runs(sig):
        native, ext = _encoding(rec)
        if ext == "quad":
            width = native.itemsize * n
            chunk = data[pos:pos + width]
            parts.append(_quad_out(chunk) if out else _quad_in(chunk))
            pos += width
            continue
        src, dst = (native, ext) if out else (ext, native)
        width = np.dtype(src).itemsize * n
        arr = np.frombuffer(data[pos:pos + width], dtype=src)
        parts.append(arr.astype(dst).tobytes())
        pos += width
    return b"".join(parts)


def _bytes_of(buf: Any, call: str, writable: bool) -> memoryview:
    """A byte view of a buffer object (the buffer protocol, DLPack, CUDA arrays)."""
    try:
        view = memoryview(buf)
    except TypeError:
        array = foreign_array(buf)
        if array is None:
            raise TypeError(f"Datatype.{call}: expected a buffer, got "
                            f"{type(buf).__name__}") from None
        view = np.ascontiguousarray(array).data
    if writable and view.readonly:
        raise BufferError(f"Datatype.{call}: the output buffer is read-only")
    if not view.contiguous:
        raise BufferError(f"Datatype.{call}: the buffer is not contiguous")
    return view.cast("B") if view.ndim != 1 or view.format != "B" else view


class DatatypePacking(DatatypeBase):
    """``Pack``, ``Unpack``, ``Pack_size`` and the ``external32`` forms."""

    __slots__ = ()


    def _committed(self, call: str) -> TypeRecord:
        """The datatype, or ``ERR_TYPE`` for a null one or a derived one not committed."""
        rec = self._live(call)
        if not rec.committed:
            raise type_error(call, f"datatype {rec.label} is not committed: call its "
                             f"Commit() before {call} with it")
        return rec

    def _elements(self, call: str, nbytes: int) -> int:
        self._committed(call)
        return nbytes // self.extent if self.extent > 0 else 0

    def _gather(self, call: str, inbuf: Any) -> bytes:
        mem = _bytes_of(inbuf, call, False)
        index = packed_index(self.layout, self._elements(call, mem.nbytes))
        if index.size and (index.min() < 0 or index.max() >= mem.nbytes):
            raise type_error(call, "the datatype reaches outside the input buffer", ERR_ARG)
        return np.frombuffer(mem, dtype=np.uint8)[index].tobytes() if index.size else b""

    def _scatter(self, call: str, data: bytes, outbuf: Any, index: np.ndarray) -> None:
        mem = _bytes_of(outbuf, call, True)
        if index.size and (index.min() < 0 or index.max() >= mem.nbytes):
            raise type_error(call, "the datatype reaches outside the output buffer", ERR_ARG)
        np.frombuffer(mem, dtype=np.uint8)[index] = np.frombuffer(data, dtype=np.uint8)

    @staticmethod
    def _put(call: str, data: bytes, outbuf: Any, position: int) -> int:
        mem = _bytes_of(outbuf, call, True)
        end = position + len(data)
        if position < 0 or end > mem.nbytes:
            raise type_error(call, f"{len(data)} packed bytes at position {position} do not "
                             f"fit in an output buffer of {mem.nbytes} bytes", ERR_TRUNCATE)
        mem[position:end] = data
        return end

    @staticmethod
    def _take(call: str, inbuf: Any, position: int, nbytes: int) -> bytes:
        mem = _bytes_of(inbuf, call, False)
        end = position + nbytes
        if position < 0 or end > mem.nbytes:
            raise type_error(call, f"{nbytes} packed bytes at position {position} are not in "
                             f"an input buffer of {mem.nbytes} bytes", ERR_TRUNCATE)
        return bytes(mem[position:end])

    def Pack(self, inbuf: Any, outbuf: Any, position: int, comm: Comm) -> int:
        """Pack the elements of *inbuf* into *outbuf* at *position*; the new position."""
        return self._put("Pack", self._gather("Pack", inbuf), outbuf, position)

    def Unpack(self, inbuf: Any, position: int, outbuf: Any, comm: Comm) -> int:
        """Unpack from *inbuf* at *position* into the elements of *outbuf*; the new
        position."""
        mem = _bytes_of(outbuf, "Unpack", True)
        index = packed_index(self.layout, self._elements("Unpack", mem.nbytes))
        data = self._take("Unpack", inbuf, position, int(index.size))
        self._scatter("Unpack", data, outbuf, index)
        return position + int(index.size)

    def Pack_size(self, count: int, comm: Comm) -> int:
        """Bytes that ``Pack`` needs for *count* elements (``count * size``)."""
        self._committed("Pack_size")
        if count < 0:
            raise type_error("Pack_size", f"count must be >= 0, got {count}", 2)
        return int(count) * self.size

    def _check_datarep(self, call: str, datarep: str, committed: bool = True
                       ) -> list[TypeRecord]:
        rec = self._committed(call) if committed else self._live(call)
        if datarep != "external32":
            raise type_error(call, f"data representation {datarep!r}: only 'external32' "
                             f"is portable", ERR_ARG)
        return signature(rec)

    def Pack_external(self, datarep: str, inbuf: Any, outbuf: Any, position: int) -> int:
        """``Pack`` in the portable ``external32`` representation."""
        sig = self._check_datarep("Pack_external", datarep)
        data = self._gather("Pack_external", inbuf)
        count = len(data) // self.size if self.size else 0
        return self._put("Pack_external", _convert(sig * count, data, True), outbuf, position)

    def Unpack_external(self, datarep: str, inbuf: Any, position: int, outbuf: Any) -> int:
        """``Unpack`` from the portable ``external32`` representation."""
        sig = self._check_datarep("Unpack_external", datarep)
        mem = _bytes_of(outbuf, "Unpack_external", True)
        count = self._elements("Unpack_external", mem.nbytes)
        width = count * sum(_ext_size(r) for r in sig)
        data = _convert(sig * count, self._take("Unpack_external", inbuf, position, width),
                        False)
        self._scatter("Unpack_external", data, outbuf, packed_index(self.layout, count))
        return position + width

    def Pack_external_size(self, datarep: str, count: int) -> int:
        """Bytes that ``Pack_external`` needs for *count* elements."""
        sig = self._check_datarep("Pack_external_size", datarep, committed=False)
        return int(count) * sum(_ext_size(r) for r in sig)
