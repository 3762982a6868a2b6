"""Buffers that are neither Python buffers nor numpy arrays: DLPack and the CUDA array interface.

mpi4py takes both as messages; so does bsim, read as mpi4py reads them
(``asdlpack.pxi``, ``ascaibuf.pxi`` of mpi4py 4.x): the DLPack capsule is
inspected, not consumed (its producer keeps ownership and frees it when the
capsule dies), and the memory must be C-contiguous.  bsim runs on the host, so
the memory must be host-accessible: a DLPack CPU, CUDA-host or CUDA-managed
device, or a CUDA/ROCm device pointer (DLPack, ``__cuda_array_interface__``)
that is host memory of this process (managed memory, or a host fake as mpi4py's
own tests use; checked in ``/proc/self/maps`` for DLPack, as mpi4py reads
``__dlpack_device__`` and hands the pointer to MPI).  Other devices, and a
DLPack device pointer that is not host-accessible, are refused with
``BufferError``; a device pointer behind the CUDA array interface is not
checked and must not be passed.

The numpy view returned keeps the capsule (or the object) alive for as long as
bsim holds the buffer.
"""

from __future__ import annotations

import bisect
import ctypes
import math
import sys
import warnings
from typing import Any

import numpy as np

__all__ = ["foreign_array"]

_HOST_DEVICES = {1: "CPU", 3: "CUDA host", 13: "CUDA managed"}
_GPU_DEVICES = {2: "CUDA", 10: "ROCm"}   # taken when the pointer is host memory
_KINDS = {0: "i", 1: "u", 2: "f", 5: "c", 6: "b"}   # DLDataTypeCode -> numpy kind


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]


_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_is_valid.restype = ctypes.c_int
_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]


class _HostView:
    """An ``__array_interface__`` over host memory that keeps its owner alive."""

    def __init__(self, owner: Any, address: int, shape: tuple[int, ...], typestr: str,
                 readonly: bool) -> None:
        self.owner = owner
        self.__array_interface__ = {"version": 3, "data": (address, readonly),
                                    "shape": shape, "typestr": typestr, "strides": None}


def _view(owner: Any, address: int, shape: tuple[int, ...], typestr: str,
          readonly: bool) -> np.ndarray:
    if not address or 0 in shape:
        return np.empty(shape, dtype=typestr)
    return np.asarray(_HostView(owner, address, shape, typestr, readonly))


def _contiguous(shape: tuple[int, ...], strides: Any, unit: int) -> bool:
    """C order, with *strides* in units of *unit*; a dimension of extent 1 has any stride."""
    expected = unit
    for extent, stride in zip(reversed(shape), reversed(list(strides))):
        if extent != 1 and stride != expected:
            return False
        expected *= extent
    return True


def _any_contiguous(shape: tuple[int, ...], strides: list[int], unit: int) -> bool:
    """C or Fortran order (DLPack arrays may be either, as mpi4py takes them)."""
    return (_contiguous(shape, strides, unit)
            or _contiguous(shape[::-1], strides[::-1], unit))


_MAPS: list[tuple[int, int]] = []   # readable and writable ranges of /proc/self/maps (cache)


def _read_maps() -> list[tuple[int, int]]:
    spans = []
    try:
        with open("/proc/self/maps", encoding="ascii") as maps:
            for line in maps:
                span, perms = line.split(None, 2)[:2]
                if perms.startswith("rw"):
                    low, high = (int(x, 16) for x in span.split("-"))
                    spans.append((low, high))
    except OSError:
        return []
    return spans


def _covered(spans: list[tuple[int, int]], address: int, end: int) -> bool:
    i = bisect.bisect_right(spans, (address, float("inf"))) - 1
    while 0 <= i < len(spans) and spans[i][0] <= address < spans[i][1]:
        if end <= spans[i][1]:
            return True
        address = spans[i][1]   # continues in the next mapping, if adjacent
        i += 1
    return False


def _host_mapped(address: int, nbytes: int) -> bool:
    """Whether ``[address, address + nbytes)`` is readable and writable host memory of this
    process (Linux: ``/proc/self/maps``, read again only for an address not seen mapped).
    A GPU's device memory is not: its range is reserved without access."""
    global _MAPS
    if nbytes <= 0 or not address:
        return True
    if _covered(_MAPS, address, address + nbytes):
        return True
    _MAPS = _read_maps()
    return _covered(_MAPS, address, address + nbytes)


def _from_dlpack(obj: Any) -> np.ndarray:
    device, device_id = (obj.__dlpack_device__() if hasattr(obj, "__dlpack_device__")
                         else (1, 0))
    device, _ = int(device), int(device_id)   # TypeError for anything but integers
    if device not in _HOST_DEVICES and device not in _GPU_DEVICES:
        raise BufferError(f"DLPack device type {device} is not host memory: bsim "
                          f"simulates on the host (use bsim.buffer placeholders for "
                          f"device data)")
    # a device array is asked for its data without stream synchronisation (stream=-1),
    # as mpi4py asks (asdlpack.pxi); a CPU array with no stream
    stream = {} if device == 1 else {"stream": -1}
    try:   # DLPack 1.0
        capsule = obj.__dlpack__(max_version=(1, 0), copy=False, **stream)
    except TypeError:   # DLPack 0.x
        capsule = obj.__dlpack__(**stream)
    if _is_valid(capsule, b"dltensor_versioned"):
        managed_v = _DLManagedTensorVersioned.from_address(
            _get_pointer(capsule, b"dltensor_versioned"))
        if managed_v.major < 1:
            raise BufferError(f"dlpack: versioned tensor of major version {managed_v.major}")
        tensor, readonly = managed_v.dl_tensor, bool(managed_v.flags & 1)
    elif _is_valid(capsule, b"dltensor"):
        tensor = _DLManagedTensor.from_address(_get_pointer(capsule, b"dltensor")).dl_tensor
        readonly = False
    else:
        raise BufferError("dlpack: invalid capsule object")
    dtype = tensor.dtype
    kind, lanes = _KINDS.get(dtype.code, "?"), dtype.lanes
    if kind == "f" and lanes == 2:   # a complex number as two float lanes (mpi4py reads it so)
        kind, lanes = "c", 1
    size = dtype.bits * dtype.lanes // 8
    if size < 1 or dtype.bits * dtype.lanes % 8:
        raise BufferError(f"dlpack: unsupported data type (code {dtype.code}, "
                          f"{dtype.bits} bits, {dtype.lanes} lanes)")
    typestr = f"{'|' if size == 1 else '<'}{kind}{size}"
    try:
        if kind == "?" or lanes != 1:
            raise TypeError
        np.dtype(typestr)
    except TypeError:   # another type: its bytes, as mpi4py moves them
        typestr = f"|V{size}"
    ndim = tensor.ndim
    if ndim < 0:
        raise BufferError(f"dlpack: negative number of dimensions {ndim}")
    if ndim and not tensor.shape:
        raise BufferError("dlpack: no shape")
    shape = tuple(tensor.shape[i] for i in range(ndim))
    if any(n < 0 for n in shape):
        raise BufferError(f"dlpack: negative extent in shape {shape}")
    if ndim and tensor.strides and not _any_contiguous(
            shape, [tensor.strides[i] for i in range(ndim)], 1):
        raise BufferError("dlpack: buffer is not contiguous")
    address = (tensor.data or 0) + tensor.byte_offset
    if device in _GPU_DEVICES and not _host_mapped(address, math.prod(shape) * size):
        raise BufferError(f"DLPack device type {device} ({_GPU_DEVICES[device]}): the memory "
                          f"is not host-accessible, and bsim simulates on the host (use "
                          f"bsim.buffer placeholders for device data)")
    return _view(capsule, address, shape, typestr, readonly)


def _from_cai(obj: Any, cai: Any) -> np.ndarray:
    """Read ``__cuda_array_interface__`` with mpi4py's checks (``ascaibuf.pxi``): a missing
    key is a ``KeyError``, a wrong type a ``TypeError``, a wrong value a ``ValueError``, and
    what MPI cannot send (a mask, foreign byte order, negative extents, gaps) a
    ``BufferError``."""
    what = "__cuda_array_interface__"
    if not isinstance(cai, dict):
        raise TypeError(f"{what}: expected a dict, got {type(cai).__name__}")
    data, typestr, shape = cai["data"], cai["typestr"], cai["shape"]
    strides, descr, mask = cai.get("strides"), cai.get("descr"), cai.get("mask")
    if not isinstance(data, tuple):
        raise TypeError(f"{what}: 'data' must be a tuple (pointer, readonly)")
    if len(data) != 2:
        raise ValueError(f"{what}: 'data' must be a tuple of 2 items, got {len(data)}")
    if not isinstance(typestr, str):
        raise TypeError(f"{what}: 'typestr' must be a str")
    if not isinstance(shape, tuple):
        raise TypeError(f"{what}: 'shape' must be a tuple")
    if strides is not None and not isinstance(strides, tuple):
        raise TypeError(f"{what}: 'strides' must be a tuple or None")
    if descr is not None and not isinstance(descr, list):
        raise TypeError(f"{what}: 'descr' must be a list or None")
    if mask is not None:
        raise BufferError(f"{what}: masked arrays cannot be sent")
    native = "<" if sys.byteorder == "little" else ">"
    order, itemsize = typestr[:1], int(typestr[2:])   # ValueError for a bad size
    if order not in ("|", "=", native) and not (order in "<>" and itemsize == 1):
        raise BufferError(f"{what}: byte order {order!r} is not the host's")
    if any(n < 0 for n in shape):
        raise BufferError(f"{what}: negative extent in shape {shape}")
    if descr is not None and (len(descr) != 1 or descr[0][1][1:] != typestr[1:]):
        warnings.warn(f"{what}: 'descr' {descr!r} is not read: the data is sent as its "
                      f"'typestr' {typestr!r}", RuntimeWarning, stacklevel=2)
    if strides is not None and not _contiguous(shape, strides, itemsize):
        raise BufferError(f"{what}: buffer is not C-contiguous")
    address, readonly = data
    typestr = "|" + typestr[1:] if order == "|" or itemsize == 1 else native + typestr[1:]
    return _view(obj, int(address or 0), shape, typestr, bool(readonly))


def foreign_array(obj: Any) -> np.ndarray | None:
    """A numpy view of a DLPack or CUDA-array-interface object, else None."""
    if hasattr(obj, "__dlpack__"):
        return _from_dlpack(obj)
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        return _from_cai(obj, cai)
    return None
