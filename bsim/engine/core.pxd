# The C types core.py's event loop declares (@cython.locals), for Cython
# (bsim/engine/compiled.py, TYPED).

# (matching.deliver is not cimported: the loop calls it as a module global, which the event
# queue's tests replace; a C call measured no faster on the halo)
from bsim.engine.matching cimport Message
from bsim.engine.rank cimport VirtualRank, green_switch
