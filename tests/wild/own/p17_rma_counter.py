"""One-sided: Win.Create on numpy, Fence + Put/Get/Accumulate, lock-based Fetch_and_op."""
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
local = np.zeros(size, dtype="i")
win = MPI.Win.Create(local, disp_unit=local.itemsize, comm=comm)
win.Fence()
for t in range(size):
    win.Put(np.array([rank + 1], dtype="i"), t, target=rank)
win.Fence()
print(f"rank {rank} put {local.tolist()}")
win.Fence()
win.Accumulate(np.ones(size, dtype="i"), 0, op=MPI.SUM)
win.Fence()
if rank == 0:
    print("acc", local.tolist())
got = np.empty(1, dtype="i")
win.Fence()
win.Get(got, (rank + 1) % size, target=0)
win.Fence()
print(f"rank {rank} get {got[0]}")
win.Free()
ctr = np.zeros(1, dtype="l")
w2 = MPI.Win.Create(ctr, disp_unit=ctr.itemsize, comm=comm)
old = np.empty(1, dtype="l")
w2.Lock(0)
w2.Fetch_and_op(np.array([1], dtype="l"), old, 0, op=MPI.SUM)
w2.Unlock(0)
comm.Barrier()
olds = comm.gather(int(old[0]), root=0)
if rank == 0:
    print("fetch_and_op olds", sorted(olds), "final", int(ctr[0]))
w2.Free()
