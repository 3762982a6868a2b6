# ranks: 4
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
size = comm.Get_size()
rank = comm.Get_rank()

sendbuf = None
if rank == 0:
    sendbuf = np.empty([size, 100], dtype="i")
    sendbuf.T[:, :] = range(size)
recvbuf = np.empty(100, dtype="i")
comm.Scatter(sendbuf, recvbuf, root=0)
assert np.allclose(recvbuf, rank)
recvbuf2 = None
if rank == 0:
    recvbuf2 = np.empty([size, 100], dtype="i")
comm.Gather(recvbuf, recvbuf2, root=0)
if rank == 0:
    print(recvbuf2[:, 0].tolist(), int(recvbuf2.sum()))
