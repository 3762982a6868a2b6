# C types of fast_path.py's flat_call, for Cython (bsim/engine/compiled.py, TYPED).

cimport cython
from bsim.engine.engine_state cimport EngineState
from bsim.engine.matching cimport Message, new_message, post_receive
from bsim.engine.protocols cimport bsim_send
from bsim.engine.protocol_state cimport ProtocolState
from bsim.engine.rank cimport VirtualRank, green_current, vrank_of
from bsim.engine.request_state cimport RequestState, new_request
from bsim.mpi.data.buffer_info cimport BufInfo

@cython.locals(vr=VirtualRank, eng=EngineState, req=RequestState, msg=Message, nbytes=object,
               info=BufInfo, world=bint, proto=ProtocolState, ipeer=Py_ssize_t, iw=Py_ssize_t,
               sent="long long")
cpdef flat_call(object comm, object buf, object peer, object tag, object call, object kind,
                bint hand=*)
