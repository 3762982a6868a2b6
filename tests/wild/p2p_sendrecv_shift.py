# ranks: 4
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
right = (rank + 1) % size
left = (rank - 1) % size
send = np.array([rank * 10.0])
recv = np.empty(1)
comm.Sendrecv(send, dest=right, recvbuf=recv, source=left)
print(rank, "got", recv[0], "from", left)
