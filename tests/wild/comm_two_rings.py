# ranks: 4
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
size = comm.Get_size()
group = comm.Get_group()
half = size / 2
if rank < half:
    sub = group.Range_incl([(0, half - 1, 1)])
else:
    sub = group.Range_incl([(half, size - 1, 1)])
ring = comm.Create(sub)
r = ring.Get_rank()
n = ring.Get_size()
val = ring.sendrecv(rank, dest=(r + 1) % n, source=(r - 1) % n)
print("world", rank, "ring rank", r, "got", val)
