# ranks: 3
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
mem = np.arange(4, dtype="d") + 10 * rank
win = MPI.Win.Create(mem, comm=comm)
out = np.zeros(4)
win.Fence()
win.Get(out, (rank + 1) % size)
win.Fence()
print(rank, out.tolist())
win.Free()
