# C calls from exchanges.py to calls.py's plumbing (bsim/engine/compiled.py, TYPED).

from bsim.mpi.collectives.calls cimport leave, take_part
