# ranks: 4
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
rng = np.random.RandomState(7 + rank)
local = np.sort(rng.randint(0, 100, size=4))
for phase in range(size):
    partner = rank + 1 if (phase + rank) % 2 == 0 else rank - 1
    if 0 <= partner < size:
        other = np.empty_like(local)
        comm.Sendrecv(local, dest=partner, recvbuf=other, source=partner)
        merged = np.sort(np.concatenate([local, other]))
        local = merged[:4] if rank < partner else merged[4:]
result = comm.gather(local.tolist(), root=0)
if rank == 0:
    flat = sum(result, [])
    print(flat, flat == sorted(flat))
