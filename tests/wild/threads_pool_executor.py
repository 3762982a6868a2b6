# ranks: 2
from concurrent.futures import ThreadPoolExecutor
from mpi4py import MPI

comm = MPI.COMM_WORLD


def work(x):
    return x * x + comm.rank


with ThreadPoolExecutor(max_workers=3) as pool:
    out = list(pool.map(work, range(6)))
print(comm.rank, out, comm.allreduce(sum(out)))
