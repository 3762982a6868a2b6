# C types of fast_path.py's flat_call, for Cython (bsim/engine/compiled.py, TYPED).

cimport cython
from bsim.engine.engine_state cimport EngineState
from bsim.engine.matching cimport Message, new_message, post_receive
from bsim.engine.protocols cimport bsim_send
from bsim.engine.protocol_state cimport ProtocolState
from bsim.engine.rank cimport VirtualRank, green_current, running_rank, vrank_of
from bsim.engine.request_state cimport RequestState, new_request
from bsim.mpi.comms.comm_identity cimport CommIdentity
from bsim.mpi.data.buffer_info cimport BufInfo
from bsim.mpi.data.buffers cimport parse_buffer

cdef Py_ssize_t _group_peer(CommIdentity comm, VirtualRank vr, Py_ssize_t crank) except? -2

cdef extern from *:
    # an exact int's value as a C long long, or the least one (LLONG_MIN) when it is beyond
    # that range: a rank or a tag checked against MPI's bounds without an int object, and
    # no error set (PyLong_AsLongLongAndOverflow)
    """
    #include <limits.h>
    static long long bsim_int_or_least(PyObject *o) {
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        return overflow ? LLONG_MIN : v;
    }
    """
    long long int_or_least "bsim_int_or_least" (object o) noexcept

@cython.locals(vr=VirtualRank, eng=EngineState, req=RequestState, msg=Message, nbytes=object,
               info=BufInfo, world=bint, proto=ProtocolState, ipeer="long long",
               itag="long long", wpeer=Py_ssize_t, iw=Py_ssize_t, sent="long long",
               dst=VirtualRank, ident=CommIdentity)
cpdef flat_call(object comm, object buf, object peer, object tag, object call, object kind,
                bint hand=*)
