# ranks: 2
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
buf = np.zeros(1000, dtype="d")
n_iter = 50
for i in range(n_iter):
    if rank == 0:
        buf[0] = i
        comm.Send(buf, dest=1)
        comm.Recv(buf, source=1)
    else:
        comm.Recv(buf, source=0)
        buf[0] += 0.5
        comm.Send(buf, dest=0)
if rank == 0:
    print("last value", buf[0])
