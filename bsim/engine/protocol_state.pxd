# The C type of protocol_state.py's ProtocolState, for Cython (bsim/engine/compiled.py,
# TYPED).

cimport cython
from bsim.engine.engine_state cimport EngineState

cdef extern from "Python.h":
    # float(n) of an int n, as its float() and int / float compute it (no float object)
    double int_as_double "PyLong_AsDouble" (object n) except? -1.0

cdef class ProtocolState:
    cdef public EngineState engine
    cdef public object net, fabric, envelope, poll_time
    cdef public dict credits   # (typed: a probe's credits tested for emptiness in C)
    cdef public bint hockney, send_network, exact_bsim
    cdef public double latency, bandwidth, send_seconds

    @cython.locals(size=double)
    cpdef double net_cost(self, long long src, long long dst, object nbytes)
