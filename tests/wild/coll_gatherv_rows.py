# ranks: 3
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
N = 10
counts = [N // size + (1 if r < N % size else 0) for r in range(size)]
displs = [sum(counts[:r]) for r in range(size)]
local = np.arange(displs[rank], displs[rank] + counts[rank], dtype="d") ** 2
full = np.empty(N, dtype="d") if rank == 0 else None
comm.Gatherv(local, [full, counts, displs, MPI.DOUBLE], root=0)
if rank == 0:
    print(full.tolist())
