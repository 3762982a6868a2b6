# ranks: 2
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
n = 6
block = MPI.INT.Create_subarray([n, n], [2, 3], [1, 2]).Commit()
if comm.rank == 0:
    a = np.arange(n * n, dtype="i").reshape(n, n)
    comm.Send([a, 1, block], dest=1)
else:
    b = np.zeros((2, 3), dtype="i")
    comm.Recv(b, source=0)
    print(b.tolist())
block.Free()
