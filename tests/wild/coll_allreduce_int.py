# ranks: 3
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank = comm.rank
local = np.array([rank + 1, 2 * rank, 5], dtype="i8")
total = np.zeros(3, dtype="i8")
comm.Allreduce(local, total, op=MPI.SUM)
mx = comm.allreduce(rank * 3, op=MPI.MAX)
mn = comm.allreduce(rank - 10, op=MPI.MIN)
print(rank, total.tolist(), mx, mn)
