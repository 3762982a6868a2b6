# The helpers request.py's class methods call, cimported so that Cython calls them in C,
# and Request as an extension type (bsim/engine/compiled.py, TYPED): RequestState's
# subclass without fields of its own, so that it is made from RequestState's free list;
# its Python bases (RequestSets, HandleValues, ProgramSubclasses) add methods only.

from bsim.mpi.requests.multiple_completions cimport check_owner, wait_all
cimport cython
from bsim.engine.rank cimport VirtualRank
from bsim.engine.request_state cimport RankState, RequestState


cdef class Request(RequestState):
    pass

@cython.locals(owner=VirtualRank)
cpdef object wait_for(RequestState req, object status)
