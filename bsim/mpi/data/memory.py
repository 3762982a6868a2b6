"""``MPI.buffer`` (also ``MPI.memory``): a byte view of memory an object owns, as mpi4py's.

A buffer shares the memory it is made from -- writes through it change the object --
and exports it with the buffer protocol (``memoryview(buf)``: format ``B``, one
dimension).  It is a one-dimensional ``uint8`` numpy array underneath, the only way a
Python class exports the buffer protocol on Python 3.11 (PEP 688 came in 3.12).
What mpi4py's type offers: ``buffer(obj)``, ``buffer.frombuffer(obj, readonly)``,
``buffer.fromaddress(address, nbytes, readonly)``, ``buffer.allocate(nbytes, clear)``;
``address``, ``obj``, ``nbytes``, ``readonly``, ``format``, ``itemsize``; ``cast``,
``tobytes``, ``toreadonly``, ``release``; indexing by an int or a contiguous slice
(a step, ``None`` or deleting an item are errors, as in mpi4py), an int assigned to a
slice fills it; a buffer over device memory (CUDA array interface, DLPack device
other than the CPU) refuses host reads and writes with ``BufferError``.
``MPI.Alloc_mem`` returns one; ``MPI.Free_mem`` releases it.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from .foreign import foreign_array

__all__ = ["buffer"]

_NO_OBJECT = object()


_KDL_CPU = 1   # DLPack's device type of host memory


def _on_device(obj: Any) -> bool:
    """Whether *obj* says its memory is a device's (a CUDA array interface, or a DLPack
    device other than the CPU): its bytes are not for the host to read."""
    if hasattr(obj, "__cuda_array_interface__"):
        return True
    device = getattr(obj, "__dlpack_device__", None)
    return device is not None and device()[0] != _KDL_CPU


class buffer(np.ndarray):  # noqa: N801 - mpi4py's name
    """Bytes of another object's memory (mpi4py's ``MPI.buffer``)."""

    _obj: Any
    _released: bool
    _device: bool

    def __new__(cls, obj: Any = _NO_OBJECT) -> buffer:
        if obj is _NO_OBJECT:
            return cls._wrap(np.empty(0, dtype=np.uint8), None, False)
        return cls.frombuffer(obj, readonly=None)

    @classmethod
    def _wrap(cls, array: np.ndarray, obj: Any, readonly: bool, device: bool = False) -> buffer:
        out = array.view(cls)
        if readonly:
            out.flags.writeable = False
        out._obj = obj
        out._released = False
        out._device = device
        return out

    def __array_finalize__(self, parent: Any) -> None:
        self._obj = getattr(parent, "_obj", None)
        self._released = False
        self._device = getattr(parent, "_device", False)

    def _host_only(self, what: str) -> None:
        """mpi4py's ``BufferError`` for reading device memory's bytes from the host."""
        if self._device:
            raise BufferError(f"buffer.{what}: the memory is on a device (CUDA), not "
                              f"readable from the host")

    @classmethod
    def frombuffer(cls, obj: Any, readonly: bool | None = False) -> buffer:
        """A buffer over *obj*'s memory (``readonly`` None: as *obj* is)."""
        if obj is None or isinstance(obj, (int, float, list, tuple)):
            raise TypeError(f"a bytes-like object is required, not '{type(obj).__name__}'")
        foreign = foreign_array(obj)   # DLPack and CUDA-array-interface objects (host memory)
        source: Any = foreign if foreign is not None else obj
        view = memoryview(source)
        if not view.contiguous:
            raise BufferError("buffer: the memory is not contiguous")
        if readonly is None:
            readonly = view.readonly
        elif not readonly and view.readonly:
            raise BufferError("buffer: the object's memory is read-only")
        array = np.frombuffer(view.cast("B") if view.ndim != 1 or view.format != "B" else view,
                              dtype=np.uint8)
        return cls._wrap(array, obj, readonly or view.readonly, _on_device(obj))

    @classmethod
    def fromaddress(cls, address: int, nbytes: int, readonly: bool = False) -> buffer:
        """A buffer over *nbytes* bytes at *address* (memory the caller keeps alive)."""
        if nbytes < 0:
            raise ValueError(f"buffer.fromaddress: negative size {nbytes}")
        if address == 0 and nbytes:
            raise ValueError("buffer.fromaddress: NULL address")
        raw: Any = (ctypes.c_ubyte * nbytes).from_address(address) if nbytes else bytearray()
        return cls._wrap(np.frombuffer(raw, dtype=np.uint8), None, readonly)

    @classmethod
    def allocate(cls, nbytes: int, clear: bool = False) -> buffer:
        """New memory of *nbytes* bytes (zero-filled: Python's allocation always is)."""
        if not isinstance(nbytes, int):
            raise TypeError(f"buffer.allocate: size must be an int, got {type(nbytes).__name__}")
        if nbytes < 0:
            raise ValueError(f"buffer.allocate: negative size {nbytes}")
        raw = bytearray(max(nbytes, 1))   # a real address even for 0 bytes, as MPI's
        return cls._wrap(np.frombuffer(raw, dtype=np.uint8)[:nbytes], memoryview(raw)[:nbytes],
                         False)

    # -- properties -------------------------------------------------------------------
    @property
    def address(self) -> int:
        """The address of the first byte (0 once released, or for an empty ``buffer()``)."""
        if self._released or (self._obj is None and not self.size):
            return 0
        return int(self.__array_interface__["data"][0])

    @property
    def obj(self) -> Any:
        """The object whose memory this is (None for an empty or address buffer)."""
        return None if self._released else self._obj

    @property
    def nbytes(self) -> int:
        return 0 if self._released else int(self.size)

    @property
    def readonly(self) -> bool:
        return False if self._released else not self.flags.writeable

    @property
    def format(self) -> str:
        """The struct format of the items (unsigned bytes)."""
        return "B"

    # -- methods ----------------------------------------------------------------------
    def cast(self, format: str, shape: Any = None) -> memoryview:  # noqa: A002 - mpi4py's name
        """A memoryview of the bytes as *format* items (of *shape*)."""
        self._host_only("cast")
        view: Any = memoryview(self)   # type: ignore[arg-type]  # an ndarray exports it
        return view.cast(format) if shape is None else view.cast(format, shape)

    def tobytes(self, order: Any = None) -> bytes:
        """The bytes (*order* is accepted and ignored: the memory is one-dimensional)."""
        self._host_only("tobytes")
        return np.asarray(self).tobytes()

    def toreadonly(self) -> buffer:
        """A read-only buffer over the same memory."""
        return buffer._wrap(np.asarray(self), self._obj, True)

    def release(self) -> None:
        """Let go of the memory: the buffer reads as empty afterwards."""
        self._released = True

    def __bool__(self) -> bool:
        return self.nbytes > 0

    # -- mpi4py's sequence rules --------------------------------------------------------
    def _check_key(self, key: Any) -> None:
        if isinstance(key, slice):
            if key.step not in (None, 1):
                raise IndexError("buffer: only contiguous slices")
        elif key is None or not isinstance(key, (int, np.integer)):
            raise TypeError(f"buffer indices must be integers or slices, not "
                            f"{type(key).__name__}")
        elif not -self.size <= key < self.size:
            raise IndexError("buffer index out of range")

    def __getitem__(self, key: Any) -> Any:
        self._check_key(key)
        self._host_only("__getitem__")
        out = super().__getitem__(key)
        return int(out) if isinstance(key, (int, np.integer)) else out

    def __setitem__(self, key: Any, value: Any) -> None:
        self._check_key(key)
        self._host_only("__setitem__")
        if not self.flags.writeable:
            raise TypeError("buffer is read-only")
        if isinstance(key, slice) and not isinstance(value, (int, np.integer)):
            value = np.frombuffer(memoryview(value).cast("B"), dtype=np.uint8)
            if len(value) != len(range(*key.indices(self.size))):
                raise ValueError("buffer: the slice and the value differ in size")
        super().__setitem__(key, value)

    def __delitem__(self, key: Any) -> None:
        raise NotImplementedError("buffer items cannot be deleted")

    def __reduce__(self) -> Any:
        return (buffer.frombuffer, (bytearray(self.tobytes()),))
