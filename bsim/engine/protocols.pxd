# The C types protocols.py's hot methods declare (@cython.locals), for Cython
# (bsim/engine/compiled.py, TYPED).

from bsim.engine.matching cimport Message, note_in_flight
from bsim.engine.rank cimport VirtualRank
from bsim.engine.request_state cimport RequestState
from bsim.engine.engine_state cimport EngineState
from bsim.engine.protocol_state cimport ProtocolState

cimport cython

@cython.locals(eng=EngineState, t=double, lag=double, visible=double)
cpdef bsim_send(ProtocolState p, VirtualRank vr, VirtualRank dst, Message msg, RequestState req,
                bint synchronous)
