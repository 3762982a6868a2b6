# C calls from exchanges.py to calls.py's plumbing (bsim/engine/compiled.py, TYPED).

cimport cython
from bsim.mpi.collectives.calls cimport check_root, leave, nonblocking_request, take_part
from bsim.mpi.data.buffers cimport parse_buffer
from bsim.mpi.comms.comm_identity cimport CommIdentity
from bsim.mpi.data.vector_buffers cimport BufInfoV, parse_vector_buffer

@cython.locals(rinfo=BufInfoV)
cdef _Allgather(CommIdentity comm, object sendbuf, object recvbuf, bint vector, bint blocking=*)
