# The C types of fabric.py's contention layer, for Cython: setup.py compiles the .py with
# this file beside it, Python reads only the .py.  The layer is an extension type whose
# attributes the compiled methods read as C fields.

from bsim.engine.fabric_solver cimport MaxMinSolver
from bsim.engine.fabric_routes cimport Flow

cdef class ContentionLayer(MaxMinSolver):
    cdef public object net, network, routes, share, start, link_ids, _index, _settle_call
    cdef public list _cap, _dirty, _start_heap, _pool, _queue, _ranks
    cdef public dict _live, _pair_first, _pair_last, _starting, _paths_cache, _flat_last
    cdef public bint _after_latency, _settle_pending
    cdef public long _seq, _epoch, _timer_ver, flows_started, settles, _nranks, _route_mode
    cdef public double _armed_at

    cpdef _queue_settle(self, double t, object owner)
