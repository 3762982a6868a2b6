# The C type of rank.py's VirtualRank, for Cython (bsim/engine/compiled.py, TYPED).

cimport cython
from bsim.engine.engine_state cimport EngineState
from bsim.engine.request_state cimport RequestState

cdef class VirtualRank:
    cdef public EngineState engine
    cdef public object rank, greenlet, nbytes, retval, pending, box
    cdef public object last_arrival, waitset, coll_seq, resume, world, thread_level
    cdef public long long keybase, seq, wake_key, ops, msgs
    cdef public double clock, calc, wait, comm, nic_free, wake_at, host_mark
    cdef public bint finished, polled, finalized
    cdef public long wait_mode, unknown, open_requests

    cpdef long long next_key(self)
    @cython.locals(key="long long")
    cpdef wake(self, double t)
    cpdef suspend(self, object call)
    cpdef sleep_until(self, double t, object call=*)
    cpdef sync(self, object call=*, bint polling=*)
    @cython.locals(mode=long, t=double)
    cpdef on_resolve(self, RequestState req)
    @cython.locals(r=RequestState, unknown=long, t=double, wait=double, comm=double,
                   idle=double, w=double, av=double, cost=double)
    cpdef settle(self, list reqs, object call)

@cython.locals(n=Py_ssize_t, i=Py_ssize_t, j=Py_ssize_t, r=RequestState, q=RequestState,
               a=double, b=double, out=list)
cpdef list _by_avail(list reqs)

@cython.locals(vr=VirtualRank)
cpdef current()

@cython.locals(r=VirtualRank, eng=EngineState)
cpdef add_time(object seconds)
