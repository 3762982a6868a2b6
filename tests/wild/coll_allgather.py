# ranks: 4
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
names = comm.allgather("proc-%d" % rank)
arr = np.zeros(size * 2, dtype="i")
comm.Allgather(np.array([rank, rank * rank], dtype="i"), arr)
print(rank, names, arr.tolist())
