# ranks: 2
from mpi4py import MPI

comm = MPI.COMM_WORLD
dup = comm.Dup()
print(comm.rank, MPI.Comm.Compare(comm, dup) == MPI.CONGRUENT,
      MPI.Comm.Compare(comm, comm) == MPI.IDENT)
dup.Set_name("my-dup")
print(comm.rank, dup.Get_name(), comm.Get_name())
dup.Free()
