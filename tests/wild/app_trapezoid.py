# ranks: 4
from mpi4py import MPI
import numpy as np

def f(x):
    return x * x

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
a, b, n = 0.0, 3.0, 1024
h = (b - a) / n
local_n = n // size
la = a + rank * local_n * h
lb = la + local_n * h
integral = (f(la) + f(lb)) / 2.0 + sum(f(la + i * h) for i in range(1, local_n))
integral = np.array(integral * h)
total = np.array(0.0)
comm.Reduce(integral, total, op=MPI.SUM, root=0)
if rank == 0:
    print("With n = %d trapezoids, integral = %.8f" % (n, total))
