# ranks: 4
import random
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.rank
random.seed(1234 + rank)
comm.Barrier()
n = 20000
inside = sum(1 for _ in range(n) if random.random() ** 2 + random.random() ** 2 <= 1.0)
counts = comm.gather(inside, root=0)
if rank == 0:
    print(counts, "pi ~ %.4f" % (4.0 * sum(counts) / (n * comm.size)))
