# ranks: 3
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
mine = np.full(rank + 1, rank, dtype="i")
counts = comm.allgather(len(mine))
displs = [sum(counts[:i]) for i in range(size)]
out = np.empty(sum(counts), dtype="i")
comm.Allgatherv(mine, [out, counts, displs, MPI.INT])
print(rank, out.tolist())
