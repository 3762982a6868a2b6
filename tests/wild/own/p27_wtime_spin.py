"""A busy-wait on MPI.Wtime (wall-clock dependent code)."""
from mpi4py import MPI

comm = MPI.COMM_WORLD
t0 = MPI.Wtime()
n = 0
while MPI.Wtime() - t0 < 0.01:
    n += 1
print(f"rank {comm.Get_rank()} spun {n > 0}")
