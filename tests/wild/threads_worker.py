# ranks: 2
import threading
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.rank
results = {}


def worker(i):
    results[i] = i * (rank + 1)


threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(rank, sorted(results.items()), comm.allreduce(sum(results.values())))
