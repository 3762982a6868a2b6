# The C type of engine_state.py's EngineState, for Cython (bsim/engine/compiled.py, TYPED).

cdef class EngineState:
    cdef public double _now, lookahead, last_batch_time
    cdef public long nranks
    cdef public list ranks, queue
    cdef public dict deliveries, wakeups
    cdef public object protocol, main, host_of, tracer, measure, last_batch
    cdef public bint defers, hooked, early_match
