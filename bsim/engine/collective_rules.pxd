# C types of collective_rules.py, for Cython (bsim/engine/compiled.py, TYPED).

cimport cython
from bsim.engine.engine_state cimport EngineState
from bsim.engine.matching cimport Message, post_receive
from bsim.engine.rank cimport VirtualRank
from bsim.engine.request_state cimport RequestState, new_request
from bsim.mpi.comms.comm_identity cimport CommIdentity

cdef class CollInstance:
    cdef public object key, op, sig, times, values, reqs, root_t, result, nbytes, rounds
    cdef public object extra, cost_fn, call
    cdef public long kind, root, size, sig_rank, arrived, finalized, local, expect
    cdef public long long rkey
    cdef public double max_t
    cdef public bint scheduled, root_known, alg, shared

    cpdef record(self, long me, double t, object value, object nbytes, long long rkey)

# the collective kinds as C integers (ALL, FANOUT, FANIN stay Python ints for importers)
cdef long _K_ALL, _K_FANOUT, _K_FANIN

@cython.locals(inst=CollInstance, req=RequestState, eng=EngineState, me=long, size=long,
               seq=long, t=double, rkey="long long", bg=bint, sized=bint, seqs=dict,
               colls=dict)
cpdef tuple arrive(VirtualRank vr, CommIdentity comm, object op, long kind, long root,
                   object nbytes, object value, object extra=*, bint blocking=*,
                   object cost_bytes=*, object cost_op=*, object blocks=*, tuple ident=*)

cdef bint _sized(object extra) except -1

cdef _schedule_completion(EngineState eng, CollInstance inst)

cpdef _resolve(RequestState req, double start, double T, bint background,
               double posted=*)

@cython.locals(reqs=list, req=RequestState, r=Py_ssize_t, n=Py_ssize_t, m=double, rt=double,
               T=double, kind=long, root=long)
cpdef _complete(CollInstance inst, bint overlaps)

cpdef finalize(VirtualRank vr, object comm, CollInstance inst)
