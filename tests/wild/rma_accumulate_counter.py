# ranks: 4
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank = comm.rank
itemsize = MPI.INT.Get_size()
win = MPI.Win.Allocate(itemsize if rank == 0 else 0, itemsize, comm=comm)
if rank == 0:
    np.frombuffer(win.tomemory(), dtype="i")[:] = 0
win.Fence()
win.Accumulate(np.array([rank + 1], dtype="i"), 0, op=MPI.SUM)
win.Fence()
if rank == 0:
    print("counter", np.frombuffer(win.tomemory(), dtype="i")[0])
win.Free()
