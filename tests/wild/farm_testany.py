# ranks: 4
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
if rank == 0:
    bufs = [np.zeros(3) for _ in range(size - 1)]
    reqs = [comm.Irecv(bufs[i], source=i + 1, tag=1) for i in range(size - 1)]
    got = []
    while len(got) < size - 1:
        idx, flag = MPI.Request.Testany(reqs)
        if flag and idx != MPI.UNDEFINED:
            got.append(idx)
    print(sorted(got), [b.tolist() for b in bufs])
else:
    comm.Send(np.full(3, rank * 1.5), dest=0, tag=1)
