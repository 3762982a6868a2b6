# ranks: 3
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
n = 5
u = np.full(n + 2, float(rank))
left = rank - 1 if rank > 0 else MPI.PROC_NULL
right = rank + 1 if rank < size - 1 else MPI.PROC_NULL
reqs = [comm.Isend(u[1:2], dest=left, tag=1),
        comm.Isend(u[n:n + 1], dest=right, tag=2),
        comm.Irecv(u[0:1], source=left, tag=2),
        comm.Irecv(u[n + 1:n + 2], source=right, tag=1)]
MPI.Request.Waitall(reqs)
print(rank, u.tolist())
