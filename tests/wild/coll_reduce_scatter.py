# ranks: 3
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
send = np.arange(size * 2, dtype="i") * (rank + 1)
recv = np.empty(2, dtype="i")
comm.Reduce_scatter_block(send, recv, op=MPI.SUM)
print(rank, recv.tolist())
