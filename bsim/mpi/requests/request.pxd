# The helpers request.py's class methods call, cimported so that Cython calls them in C
# (bsim/engine/compiled.py, TYPED; the module's classes stay Python classes).

from bsim.mpi.requests.multiple_completions cimport check_owner, wait_all
from bsim.engine.request_state cimport RankState, RequestState
