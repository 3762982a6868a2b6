# C types of calls.py's plumbing, for Cython (bsim/engine/compiled.py, TYPED): a collective
# call reaches take_part and settle as C calls, one C frame each on a waiting rank's stack.

cimport cython
from bsim.engine.collective_rules cimport CollInstance, arrive, finalize
from bsim.engine.rank cimport VirtualRank
from bsim.mpi.comms.comm_identity cimport CommIdentity
from bsim.mpi.data.buffers cimport parse_buffer

cpdef tuple take_part(CommIdentity comm, VirtualRank vr, object op, object kind, object root,
                      object nbytes, object value, object extra=*, object cost_bytes=*,
                      bint blocking=*, object blocks=*, tuple ident=*)

cpdef leave(object comm, VirtualRank vr, CollInstance inst, object result=*)

cdef tuple _bcast_args(CommIdentity comm, VirtualRank vr, object buf, object root, object call)

cpdef check_root(object comm, VirtualRank vr, object root, object call, object size=*)

cpdef nonblocking_request(object comm, VirtualRank vr, CollInstance inst, object req,
                          object post, object info=*, object root=*)

@cython.final
cdef class CollectivePost:
    cdef object comm, post, info
    cdef VirtualRank vr
    cdef CollInstance inst
    cdef long root
