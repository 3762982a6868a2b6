"""Persistent requests Send_init/Recv_init with Startall inside an iteration loop."""
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
right, left = (rank + 1) % size, (rank - 1) % size
sbuf = np.zeros(2)
rbuf = np.zeros(2)
reqs = [comm.Send_init(sbuf, dest=right, tag=1), comm.Recv_init(rbuf, source=left, tag=1)]
acc = 0.0
for it in range(5):
    sbuf[:] = [rank * it, it]
    MPI.Prequest.Startall(reqs)
    MPI.Request.Waitall(reqs)
    acc += rbuf[0]
print(f"rank {rank} persistent acc {acc}")
for r in reqs:
    r.Free()
b = np.array([rank], dtype="i")
pr = comm.Bcast_init(b, root=0) if hasattr(comm, "Bcast_init") else None
if pr is not None:
    pr.Start(); pr.Wait(); pr.Free()
print(f"rank {rank} bcast_init {b[0]}")
