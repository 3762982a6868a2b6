# ranks: 4
from mpi4py import MPI

comm = MPI.COMM_WORLD
size = comm.Get_size()
rank = comm.Get_rank()

if rank == 0:
    data = [(i + 1) ** 2 for i in range(size)]
else:
    data = None
data = comm.scatter(data, root=0)
assert data == (rank + 1) ** 2
data = comm.gather(data * 2, root=0)
if rank == 0:
    print("gathered", data)
