# The C types of engine_state.py's EngineState and ModuleWatch, for Cython
# (bsim/engine/compiled.py, TYPED).

cdef class EngineState:
    cdef public double _now, lookahead, last_batch_time
    cdef public long nranks
    cdef public list ranks, queue
    cdef public dict deliveries, wakeups, colls
    cdef public long long formula_collectives
    cdef public object protocol, main, host_of, tracer, measure, last_batch
    cdef public object collective_costs, request_class
    cdef public bint defers, hooked, early_match

cdef class ModuleWatch:
    cdef public bint swapping
    cdef public Py_ssize_t count
    cdef public object main_now
