"""rc.thread_level, Is_thread_main, names, attributes, Get_parent, py2f/f2py."""
import mpi4py
mpi4py.rc.thread_level = "funneled"
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
print(f"rank {rank} level {MPI.Query_thread() == MPI.THREAD_FUNNELED} main {MPI.Is_thread_main()}")
print(f"rank {rank} name {comm.Get_name()} self {MPI.COMM_SELF.Get_name()}")
print(f"rank {rank} tag_ub big {comm.Get_attr(MPI.TAG_UB) >= 32767}")
print(f"rank {rank} parent null {MPI.Comm.Get_parent() == MPI.COMM_NULL}")
f = comm.py2f()
print(f"rank {rank} f2py same {MPI.Comm.f2py(f) == comm}")
