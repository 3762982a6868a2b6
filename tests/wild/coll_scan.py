# ranks: 4
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank = comm.rank
print(rank, "scan", comm.scan(rank + 1), "exscan", comm.exscan(rank + 1))
a = np.array([rank + 1], dtype="i")
b = np.zeros(1, dtype="i")
comm.Scan(a, b, op=MPI.PROD)
print(rank, "prefix product", b[0])
