# ranks: 2
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
n = 4
a = np.arange(n * n, dtype="d").reshape(n, n) if comm.rank == 0 else np.zeros((n, n))
column = MPI.DOUBLE.Create_vector(n, 1, n).Commit()
if comm.rank == 0:
    comm.Send([a, 1, column], dest=1)
else:
    col = np.zeros(n)
    comm.Recv(col, source=0)
    print("column 0:", col.tolist())
column.Free()
