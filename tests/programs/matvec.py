"""y = A x with A distributed in 2-D blocks: row and column communicators (Split)."""

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
size, rank = comm.Get_size(), comm.Get_rank()
q = int(round(size ** 0.5))
assert q * q == size, "run on a square number of ranks"
n = 4 * q
row, col = divmod(rank, q)
row_comm = comm.Split(row, col)      # ranks of one block row
col_comm = comm.Split(col, row)      # ranks of one block column
b = n // q
A = np.fromfunction(lambda i, j: (i + 1) * 0.5 + j, (n, n))
block = A[row * b:(row + 1) * b, col * b:(col + 1) * b]
x = np.arange(n, dtype="f8")
xb = np.empty(b)
if row == 0:                          # the first block row owns x and broadcasts down columns
    xb[:] = x[col * b:(col + 1) * b]
col_comm.Bcast(xb, root=0)
partial = block @ xb
yb = np.empty(b)
row_comm.Allreduce(partial, yb, op=MPI.SUM)
y = np.empty(n) if rank == 0 else None
if col == 0:
    parts = col_comm.gather(yb, root=0)
    if rank == 0:
        y = np.concatenate(parts)
if rank == 0:
    print(f"matvec max error {np.abs(y - A @ x).max():.1e}")
