# The C types of fabric_routes.py's Flow, for Cython: setup.py compiles the .py with this
# file beside it, Python reads only the .py.  A Flow is an extension type, its fields read
# and written by the compiled layer as C numbers and object pointers.

cdef class Flow:
    cdef public tuple links, paths
    cdef public long seq, slot, parts, pair
    cdef public double start, late, alone, scale
    cdef public object head, owner, fn, payload, done, nxt
