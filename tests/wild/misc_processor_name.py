# ranks: 2
from mpi4py import MPI

comm = MPI.COMM_WORLD
name = MPI.Get_processor_name()
print(comm.rank, isinstance(name, str), MPI.Query_thread() >= MPI.THREAD_SINGLE,
      MPI.Is_initialized(), MPI.Is_finalized())
print(comm.rank, MPI.Get_version()[0] >= 3)
