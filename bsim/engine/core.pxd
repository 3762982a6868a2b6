# The C types core.py's event loop declares (@cython.locals), for Cython
# (bsim/engine/compiled.py, TYPED).

from bsim.engine.matching cimport Message
from bsim.engine.rank cimport VirtualRank
