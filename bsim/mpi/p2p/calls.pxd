# C types of calls.py's hot function, for Cython (bsim/engine/compiled.py, TYPED).

cimport cython
from bsim.engine.engine_state cimport EngineState
from bsim.engine.matching cimport Message, post_receive
from bsim.engine.protocols cimport bsim_send
from bsim.engine.protocol_state cimport ProtocolState
from bsim.engine.rank cimport VirtualRank, green_current
from bsim.engine.request_state cimport RequestState
from bsim.mpi.data.buffer_info cimport BufInfo

@cython.locals(vr=VirtualRank, eng=EngineState, req=RequestState, msg=Message, nbytes=object,
               info=BufInfo, world=bint, plain=bint,
               proto=ProtocolState)
cpdef _flat(object comm, object buf, object peer, object tag, object call, object kind,
            bint hand=*)

@cython.locals(vr=VirtualRank)
cdef inline object _complete(RequestState req, object status, object call)
