# ranks: 4
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
n = 8
rows = n // size
A = np.arange(n * n, dtype="i8").reshape(n, n) if rank == 0 else None
x = np.arange(n, dtype="i8") if rank == 0 else np.empty(n, dtype="i8")
local_A = np.empty((rows, n), dtype="i8")
comm.Scatter(A, local_A, root=0)
comm.Bcast(x, root=0)
local_y = local_A @ x
y = np.empty(n, dtype="i8") if rank == 0 else None
comm.Gather(local_y, y, root=0)
if rank == 0:
    print(y.tolist())
