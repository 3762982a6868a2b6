# ranks: 4
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
counts = np.array([1, 2, 3, 4])[:size]
displs = np.insert(np.cumsum(counts), 0, 0)[:-1]
send = np.arange(counts.sum(), dtype=np.float64) if rank == 0 else None
recv = np.zeros(counts[rank])
comm.Scatterv([send, counts, displs, MPI.DOUBLE], recv, root=0)
print(rank, recv.tolist())
