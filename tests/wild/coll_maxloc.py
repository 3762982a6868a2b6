# ranks: 4
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.rank
value = [3.5, 9.25, 1.0, 9.25][rank % 4]
best = comm.allreduce((value, rank), op=MPI.MAXLOC)
worst = comm.allreduce((value, rank), op=MPI.MINLOC)
print(rank, best, worst)
