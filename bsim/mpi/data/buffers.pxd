# C calls to buffers.py's parsing, for Cython (bsim/engine/compiled.py, TYPED): the calls
# that parse a buffer spec (collectives, point-to-point) call these in C.

cpdef object parse_bufspec(object spec)
cpdef object parse_buffer(object vr, object spec, object call)
