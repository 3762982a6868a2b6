# C types of calls.py's hot functions, for Cython (bsim/engine/compiled.py, TYPED).

cimport cython
from bsim.engine.rank cimport VirtualRank
from bsim.engine.request_state cimport RequestState
from bsim.mpi.data.buffers cimport parse_buffer
from bsim.mpi.p2p.fast_path cimport flat_call

@cython.locals(vr=VirtualRank)
cdef inline object _complete(RequestState req, object status, object call)

@cython.locals(vr=VirtualRank)
cdef inline object _complete_pair(RequestState sreq, RequestState rreq, object status,
                                  object call)
