# ranks: 3
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
buf = np.zeros(size, dtype="i")
win = MPI.Win.Create(buf, disp_unit=buf.itemsize, comm=comm)
win.Fence()
for target in range(size):
    win.Put(np.array([rank + 1], dtype="i"), target, target=rank)
win.Fence()
print(rank, buf.tolist())
win.Free()
