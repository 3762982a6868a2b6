"""DLPack and CUDA-array-interface buffers read as mpi4py reads them (bsim/mpi/data/foreign.py)."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

import bsim
from bsim.mpi.data.foreign import _host_mapped, foreign_array


class Dl:
    def __init__(self, a, device=(1, 0)):
        self.a, self.device = a, device

    def __dlpack__(self, stream=None, **kw):
        assert stream == (None if self.device[0] == 1 else -1)   # as mpi4py asks
        return self.a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.device


class Cai:
    def __init__(self, a, shape=None, strides=None, readonly=False):
        self.a = a
        self.__cuda_array_interface__ = {
            "version": 0, "typestr": a.dtype.str, "data": (a.ctypes.data, readonly),
            "shape": shape or a.shape, "strides": strides}


@pytest.mark.parametrize("dtype", ["?", "i1", "u2", "i4", "i8", "f4", "f8", "c8", "c16"])
def test_dlpack_views_the_same_memory(dtype):
    a = np.arange(6).astype(dtype)
    v = foreign_array(Dl(a))
    assert v.dtype == a.dtype and v.tolist() == a.tolist()
    v[0] = a[1]                    # a view, writable: receives land in the user's array
    assert a[0] == a[1]


def test_dlpack_refuses_strided_and_device_memory():
    with pytest.raises(BufferError, match="contiguous"):
        foreign_array(Dl(np.arange(10.0)[::2]))
    with pytest.raises(BufferError, match="device type 4 is not host memory"):
        foreign_array(Dl(np.arange(3.0), device=(4, 0)))


def test_dlpack_cuda_pointer_to_host_memory_is_read():
    """mpi4py hands a kDLCUDA pointer to MPI; bsim reads it when it is host memory (a fake
    GPU array, managed memory) and refuses device memory, which is not mapped readable."""
    a = np.arange(3.0)
    assert foreign_array(Dl(a, device=(2, 0))).tolist() == [0.0, 1.0, 2.0]
    assert _host_mapped(a.ctypes.data, a.nbytes)
    assert not _host_mapped(4096, 8)          # the zero page is never mapped


def test_cuda_interface_with_unit_dimensions_and_readonly():
    a = np.arange(3, dtype="i4")
    v = foreign_array(Cai(a, shape=(3, 1, 1), strides=(4, 4, 4), readonly=True))
    assert v.tolist() == [[[0]], [[1]], [[2]]] and not v.flags.writeable
    with pytest.raises(BufferError, match="C-contiguous"):
        foreign_array(Cai(np.arange(6, dtype="i4"), shape=(3,), strides=(8,)))


def test_other_objects_are_not_foreign():
    assert foreign_array([1, 2]) is None and foreign_array(object()) is None


def test_cuda_interface_checks_as_mpi4py():
    """mpi4py's checks (ascaibuf.pxi): a missing key is a KeyError, a wrong type a TypeError,
    a mask or foreign byte order a BufferError, an unread descr a RuntimeWarning."""
    import sys
    import warnings

    a = np.arange(3, dtype="i4")

    def cai(**change):
        c = Cai(a)
        c.__cuda_array_interface__.update(change)
        return c

    with pytest.raises(BufferError, match="masked"):
        foreign_array(cai(mask=True))
    with pytest.raises(TypeError):
        foreign_array(cai(typestr=None))
    other = ">" if sys.byteorder == "little" else "<"
    with pytest.raises(BufferError, match="byte order"):
        foreign_array(cai(typestr=other + "i4"))
    with pytest.raises(ValueError):
        foreign_array(cai(data=(a.ctypes.data,)))
    c = Cai(a)
    del c.__cuda_array_interface__["shape"]
    with pytest.raises(KeyError):
        foreign_array(c)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning):
            foreign_array(cai(descr=[("", "<i4"), ("", "<i4")]))


def test_dlpack_fortran_order_and_get_address():
    f = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    assert foreign_array(Dl(f)).nbytes == 48
    assert bsim.MPI.Get_address(f) == f.ctypes.data
    assert bsim.MPI.Get_address(bsim.MPI.BOTTOM) == 0


_RELEASED = []


@ctypes.PYFUNCTYPE(None, ctypes.c_void_p)
def _release(capsule):   # (module-level: it must outlive every capsule made with it)
    _RELEASED.append(capsule)


class _CtypesCapsule:
    """A DLPack exporter whose capsule's destructor is a ctypes callback, as mpi4py's own
    tests make them (``dlpackimpl.py``): a ctypes callback run while an error is pending
    fails to convert its argument and clears the error, so an error raised while bsim held
    the last view of the buffer was lost as the view was dropped (``SystemError: ...
    returned NULL without setting an exception``) when the spec parser ran compiled."""

    KEEP: list = []   # the tensors and arrays, alive for as long as the test process

    def __init__(self, a):
        from bsim.mpi.data.foreign import _DLManagedTensor

        shape = (ctypes.c_int64 * 1)(a.size)
        self.managed = _DLManagedTensor()
        t = self.managed.dl_tensor
        t.data, t.ndim, t.shape = a.ctypes.data, 1, shape
        t.device.device_type, t.dtype.code, t.dtype.bits, t.dtype.lanes = 1, 0, 32, 1
        self.KEEP.append((a, shape, self.managed))

    def __dlpack__(self, stream=None, **kw):
        if kw:
            raise TypeError("DLPack 0.x")
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p,
                                                       ctypes.c_void_p]
        return new(ctypes.addressof(self.managed), b"dltensor",
                   ctypes.cast(_release, ctypes.c_void_p))

    def __dlpack_device__(self):
        return (1, 0)


def test_an_error_about_a_foreign_buffer_survives_its_release():
    """A spec error on a DLPack buffer is the error (mpi4py's test_cco_buf
    ``testReduceLocalBadCount``), and the buffer is released once it is handled."""
    from bsim import MPI

    def program():
        s = _CtypesCapsule(np.arange(3, dtype="i4"))
        r = _CtypesCapsule(np.arange(3, dtype="i4"))
        for spec in ([s, 4, MPI.INT], [s, (1, 3), MPI.INT]):   # a count, a displacement
            with pytest.raises(ValueError, match="exceeds the buffer|past the buffer"):
                MPI.SUM.Reduce_local(spec, [r, 3, MPI.INT])
        with pytest.raises(ValueError, match="bad buffer: count 4 x INT"):
            MPI.COMM_WORLD.Send([s, 4, MPI.INT], dest=0)

    del _RELEASED[:]
    bsim.simulate(program, ranks=1)
    assert _RELEASED   # the capsules are released (after their errors were handled)
