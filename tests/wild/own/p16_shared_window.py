"""Node-shared memory: Split_type(COMM_TYPE_SHARED) + Win.Allocate_shared + Shared_query."""
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
node = comm.Split_type(MPI.COMM_TYPE_SHARED)
nrank, nsize = node.Get_rank(), node.Get_size()
n = 8
itemsize = MPI.DOUBLE.Get_size()
win = MPI.Win.Allocate_shared(n * itemsize if nrank == 0 else 0, itemsize, comm=node)
buf, isz = win.Shared_query(0)
arr = np.ndarray(buffer=buf, dtype="d", shape=(n,))
win.Fence()
for i in range(nrank, n, nsize):
    arr[i] = i * i
win.Fence()
print(f"node-rank-count-ok {nrank < nsize} sum {arr.sum()} itemsize {isz}")
win.Free()
node.Free()
