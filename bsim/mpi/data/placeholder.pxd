# Buffer as an extension type, for Cython (bsim/engine/compiled.py, TYPED): BufInfo's
# subclass without fields of its own, so that a skeleton's Buffer per call is made from
# BufInfo's free list and its __init__ sets C fields.

from bsim.mpi.data.buffer_info cimport BufInfo


cdef class Buffer(BufInfo):
    pass

cpdef object _as_datatype(object datatype)
