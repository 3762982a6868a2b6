# The C type of buffer_info.py's BufInfo, for Cython (bsim/engine/compiled.py, TYPED).

cdef class BufInfo:
    cdef public object nbytes, count, datatype, mem
