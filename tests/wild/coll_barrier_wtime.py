# ranks: 3
from mpi4py import MPI

comm = MPI.COMM_WORLD
t0 = MPI.Wtime()
comm.Barrier()
t1 = MPI.Wtime()
print(comm.rank, "elapsed is non-negative:", t1 - t0 >= 0)
