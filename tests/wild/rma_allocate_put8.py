# ranks: 2
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
win = MPI.Win.Allocate(8, comm=comm)
win.Fence()
if comm.rank == 0:
    win.Put(np.array([3.5]), 1)
win.Fence()
print(comm.rank, np.frombuffer(win.tomemory(), dtype="d").tolist())
win.Free()
