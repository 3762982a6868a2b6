# The C types of matching.py, for Cython (bsim/engine/compiled.py, TYPED).

cimport cython
from bsim.engine.rank cimport VirtualRank
from bsim.engine.request_state cimport RequestState
from bsim.mpi.data.buffer_info cimport BufInfo
from bsim.engine.protocol_state cimport ProtocolState
from bsim.engine.engine_state cimport EngineState

cdef extern from "Python.h":
    void gc_untrack "PyObject_GC_UnTrack" (object obj)

cdef class Message:
    cdef public object ctx, src, dst, src_crank, tag, nbytes, payload, lower, sreq
    cdef public long long key
    cdef public double t_send, visible
    cdef public bint rendezvous

cdef double _IN_FLIGHT, _TAKEN_EARLY

cdef class Mailbox:
    cdef public list posted, unexpected, probers, in_flight

@cython.locals(box=Mailbox, posted=list, req=RequestState, i=Py_ssize_t, proto=ProtocolState)
cpdef deliver(VirtualRank dst, Message msg, double now)

@cython.locals(box=Mailbox, unexpected=list, msg=Message, i=Py_ssize_t, proto=ProtocolState,
               posted=list)
cpdef post_receive(VirtualRank vr, RequestState req, bint blocking=*)

@cython.locals(sbox=Mailbox, sent=list, msg=Message, r=RequestState, n=Py_ssize_t,
               j=Py_ssize_t, src=Py_ssize_t, me=Py_ssize_t, tag=Py_ssize_t, eng=EngineState,
               sender=VirtualRank)
cdef bint _take_in_flight(VirtualRank vr, Mailbox box, RequestState req) except -1

@cython.locals(box=Mailbox, sent=list, last=Message, n=Py_ssize_t, k=Py_ssize_t,
               first=Message)
cpdef note_in_flight(VirtualRank vr, Message msg)

@cython.locals(info=BufInfo)
cpdef transfer_payload(RequestState req, Message msg)

@cython.locals(cost=double)
cpdef bsim_matched(ProtocolState p, RequestState req, Message msg)

@cython.locals(msg=Message)
cpdef Message new_message(object ctx, object src, object dst, object src_crank, object tag,
                          object nbytes, object payload, bint lower)

@cython.locals(n=Py_ssize_t, i=Py_ssize_t, j=Py_ssize_t, msg=Message, key="long long")
cpdef order_by_key(list batch)
