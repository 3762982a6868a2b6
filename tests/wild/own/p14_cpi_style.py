"""Classic cpi: bcast n, compute partial sum, reduce; plus Reduce with numpy scalars."""
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
n = np.array(0, dtype="i")
if rank == 0:
    n.fill(1000)
comm.Bcast([n, MPI.INT], root=0)
h = 1.0 / n
s = 0.0
for i in range(rank + 1, int(n) + 1, size):
    x = h * (i - 0.5)
    s += 4.0 / (1.0 + x * x)
mypi = np.array(s * h, dtype="d")
pi = np.array(0.0, dtype="d")
comm.Reduce([mypi, MPI.DOUBLE], [pi, MPI.DOUBLE], op=MPI.SUM, root=0)
if rank == 0:
    print("pi approx %.8f error %.2e" % (pi, abs(pi - np.pi)))
v = comm.allreduce(np.float64(rank) * 0.25)
print(f"rank {rank} numpy scalar allreduce {v} type {type(v).__name__}")
w = comm.allreduce(np.int64(rank))
print(f"rank {rank} np int allreduce {w}")
