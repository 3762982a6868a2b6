# ranks: 4
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
send = np.arange(size, dtype="i") + rank * 100
recv = np.empty(size, dtype="i")
comm.Alltoall(send, recv)
objs = comm.alltoall([(rank, j) for j in range(size)])
print(rank, recv.tolist(), objs)
