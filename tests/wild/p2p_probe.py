# ranks: 2
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank = comm.rank
if rank == 0:
    n = 37
    comm.Send(np.arange(n, dtype="i"), dest=1, tag=3)
else:
    status = MPI.Status()
    comm.Probe(source=0, tag=3, status=status)
    count = status.Get_count(MPI.INT)
    buf = np.empty(count, dtype="i")
    comm.Recv(buf, source=0, tag=3)
    print("probed count", count, "last", buf[-1])
