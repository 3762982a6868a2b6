# ranks: 3
from mpi4py import MPI

def is_prime(n):
    if n < 2:
        return False
    i = 2
    while i * i <= n:
        if n % i == 0:
            return False
        i += 1
    return True

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
N = 2000
mine = [n for n in range(rank, N, size) if is_prime(n)]
count = comm.reduce(len(mine), op=MPI.SUM, root=0)
largest = comm.allreduce(max(mine) if mine else 0, op=MPI.MAX)
if rank == 0:
    print("primes below", N, ":", count, "largest", largest)
