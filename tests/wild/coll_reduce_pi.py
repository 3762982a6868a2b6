# ranks: 4
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
n = 100000
h = 1.0 / n
s = 0
for i in range(rank, n, size):
    x = h * (i + 0.5)
    s += 4.0 / (1.0 + x * x)
pi = comm.reduce(s * h, op=MPI.SUM, root=0)
if rank == 0:
    print("pi is approximately %.10f" % pi)
