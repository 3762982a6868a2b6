# The C types of matching.py, for Cython (bsim/engine/compiled.py, TYPED).

cimport cython
from bsim.engine.rank cimport VirtualRank
from bsim.engine.request_state cimport RequestState
from bsim.mpi.data.buffer_info cimport BufInfo
from bsim.engine.protocol_state cimport ProtocolState

cdef class Message:
    cdef public object ctx, src, dst, src_crank, tag, nbytes, payload, lower, sreq
    cdef public long long key
    cdef public double t_send, visible
    cdef public bint rendezvous

cdef class Mailbox:
    cdef public list posted, unexpected, probers

@cython.locals(box=Mailbox, posted=list, req=RequestState, i=Py_ssize_t, proto=ProtocolState)
cpdef deliver(VirtualRank dst, Message msg, double now)

@cython.locals(box=Mailbox, unexpected=list, msg=Message, i=Py_ssize_t, proto=ProtocolState)
cpdef post_receive(VirtualRank vr, RequestState req)

@cython.locals(info=BufInfo)
cpdef transfer_payload(RequestState req, Message msg)

@cython.locals(cost=double)
cpdef bsim_matched(ProtocolState p, RequestState req, Message msg)

@cython.locals(msg=Message)
cpdef Message new_message(object ctx, object src, object dst, object src_crank, object tag,
                          object nbytes, object payload, bint lower)
