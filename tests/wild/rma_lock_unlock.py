# ranks: 3
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank = comm.rank
win = MPI.Win.Allocate(8, 8, comm=comm)
mem = np.frombuffer(win, dtype="d")
mem[0] = -1.0
comm.Barrier()
if rank != 0:
    win.Lock(0, MPI.LOCK_EXCLUSIVE)
    win.Accumulate(np.array([float(rank)]), 0, op=MPI.MAX)
    win.Unlock(0)
comm.Barrier()
if rank == 0:
    win.Lock(0, MPI.LOCK_SHARED)
    print("max", mem[0])
    win.Unlock(0)
win.Free()
