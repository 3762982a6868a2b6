"""1-D Jacobi with halo exchange, convergence via allreduce; typical teaching code."""
import sys

import numpy as np
from mpi4py import MPI


def main(n=24, iters=30):
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    local = n // size + (1 if rank < n % size else 0)
    start = rank * (n // size) + min(rank, n % size)
    u = np.zeros(local + 2)
    if rank == 0:
        u[0] = 1.0
    if rank == size - 1:
        u[-1] = 0.0
    left = rank - 1 if rank > 0 else MPI.PROC_NULL
    right = rank + 1 if rank < size - 1 else MPI.PROC_NULL
    for it in range(iters):
        comm.Sendrecv(u[1:2], dest=left, sendtag=0, recvbuf=u[-1:], source=right, recvtag=0)
        comm.Sendrecv(u[-2:-1], dest=right, sendtag=1, recvbuf=u[0:1], source=left, recvtag=1)
        new = 0.5 * (u[:-2] + u[2:])
        diff = np.abs(new - u[1:-1]).max() if local else 0.0
        u[1:-1] = new
        gdiff = comm.allreduce(diff, op=MPI.MAX)
    counts = comm.allgather(local)
    full = np.empty(n) if rank == 0 else None
    comm.Gatherv(u[1:-1].copy(), [full, counts, None, MPI.DOUBLE] if rank == 0 else None, root=0)
    if rank == 0:
        print("start", start, "final", np.round(full, 10).tolist())
        print("gdiff", round(gdiff, 12))
    return 0


if __name__ == "__main__":
    sys.exit(main())
