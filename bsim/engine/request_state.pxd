# The C type of request_state.py's RequestState, for Cython (bsim/engine/compiled.py, TYPED).

cimport cython

cdef class RequestState

cdef class RankState:
    cdef public int open_requests

    cpdef on_resolve(self, RequestState req)

cdef class RequestState:
    cdef public object owner, kind, call, ctx, src, tag, avail
    cdef public double cost, partner, t_post
    cdef public bint waited, lower, cancelled, handed
    cdef public object envelope, payload, rinfo, error, post, flow

    @cython.locals(owner=RankState)
    cpdef resolve(self, double avail, double cost, double partner)
    @cython.locals(owner=RankState)
    cpdef finish(self, object status)
