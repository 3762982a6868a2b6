# C types of vector_buffers.py, for Cython (bsim/engine/compiled.py, TYPED): a v-collective's
# parsed buffer is an extension type, its blocks a C method, its placeholder's fields C fields.

cimport cython
from bsim.mpi.data.buffer_info cimport BufInfo

@cython.final
cdef class BufInfoV:
    cdef public object mem, counts, displs, datatype, _nbytes, _nblocks

    cpdef tuple block(self, object i)

cdef BufInfoV _equal_blocks(BufInfo placeholder, object nblocks)

cpdef BufInfoV parse_vector_buffer(object vr, object spec, object nblocks, object call,
                                   bint equal=*)
