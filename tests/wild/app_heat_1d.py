# ranks: 4
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
nlocal = 8
u = np.zeros(nlocal + 2)
if rank == 0:
    u[1] = 100.0
left = rank - 1 if rank > 0 else MPI.PROC_NULL
right = rank + 1 if rank < size - 1 else MPI.PROC_NULL
alpha = 0.25
for step in range(50):
    comm.Sendrecv(u[1:2], dest=left, recvbuf=u[nlocal + 1:nlocal + 2], source=right)
    comm.Sendrecv(u[nlocal:nlocal + 1], dest=right, recvbuf=u[0:1], source=left)
    new = u[1:-1] + alpha * (u[:-2] - 2 * u[1:-1] + u[2:])
    u[1:-1] = new
    if rank == 0:
        u[1] = 100.0
total = comm.allreduce(float(np.round(u[1:-1].sum(), 6)))
print(rank, np.round(u[1:-1], 4).tolist())
if rank == 0:
    print("total heat %.4f" % total)
