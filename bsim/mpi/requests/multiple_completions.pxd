# C types of multiple_completions.py's hot function, for Cython (bsim/engine/compiled.py,
# TYPED).

cimport cython
from bsim.engine.rank cimport VirtualRank, current
from bsim.engine.request_state cimport RequestState

@cython.locals(r=RequestState, owner=VirtualRank, pending=list)
cpdef list wait_all(object requests, object statuses, object call, bint stop_at_error,
                    bint results=*)

@cython.locals(r=RequestState, pending=list, n=Py_ssize_t, i=Py_ssize_t, j=Py_ssize_t,
               total=Py_ssize_t)
cpdef list active(object requests, object call, bint unique=*)

@cython.locals(me=VirtualRank)
cpdef check_owner(RequestState req, object call)
