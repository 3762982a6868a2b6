# The C types core.py's event loop declares (@cython.locals), for Cython
# (bsim/engine/compiled.py, TYPED).

# (matching.deliver is not cimported: the loop calls it as a module global, which the event
# queue's tests replace; a C call measured no faster on the halo)
cimport cython
from bsim.engine.matching cimport Message, order_by_key
from bsim.engine.rank cimport VirtualRank, green_switch

@cython.locals(p="long long")
cdef inline bint _ahead(tuple head, long long prio, long long key) except -1
