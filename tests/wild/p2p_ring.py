# ranks: 4
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.rank
size = comm.size

token = None
if rank == 0:
    token = 0
    comm.send(token + 1, dest=1)
    token = comm.recv(source=size - 1)
    print("token came back as", token)
else:
    token = comm.recv(source=rank - 1)
    print("rank", rank, "got token", token)
    comm.send(token + 1, dest=(rank + 1) % size)
