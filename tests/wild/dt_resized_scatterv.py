# ranks: 4
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
size, rank = comm.size, comm.rank
rows = 3
col = MPI.DOUBLE.Create_vector(rows, 1, size).Create_resized(0, MPI.DOUBLE.Get_size()).Commit()
A = np.arange(rows * size, dtype="d").reshape(rows, size) if rank == 0 else None
out = np.zeros(rows)
comm.Scatterv([A, [1] * size, list(range(size)), col] if rank == 0 else None, out, root=0)
print(rank, out.tolist())
col.Free()
