"""Golden: every collective family, blocking and nonblocking, on WORLD and a Split."""

import numpy as np
from mpi4py import MPI

import bsim

world = MPI.COMM_WORLD
half = world.Split(color=world.rank % 2, key=world.rank)
for comm in (world, half):
    rank, size = comm.Get_rank(), comm.Get_size()
    bsim.add_time(1e-6 * rank)
    comm.Barrier()
    x = np.full(1024, rank, dtype="d")
    y = np.empty_like(x)
    comm.Allreduce(x, y, op=MPI.SUM)
    comm.Bcast(x, root=size - 1)
    comm.Reduce(x, y if rank == 0 else None, op=MPI.MAX, root=0)
    big = np.empty(1024 * size, dtype="d")
    comm.Allgather(x, big)
    comm.Gather(x, big if rank == 1 % size else None, root=1 % size)
    comm.Scatter(big if rank == 0 else None, x, root=0)
    comm.Alltoall(big, np.empty_like(big))
    counts = [256 * (i + 1) for i in range(size)]
    comm.Allgatherv(np.zeros(counts[rank]), [np.empty(sum(counts)), counts])
    comm.Reduce_scatter_block(big, x, op=MPI.SUM)
    comm.Scan(x, y, op=MPI.SUM)
    comm.Exscan(x, y, op=MPI.SUM)
    bsim.add_time(2e-6 * (size - rank))
    reqs = [comm.Iallreduce(x, y), comm.Ibcast(big, root=0), comm.Ibarrier()]
    bsim.add_time(5e-6)
    MPI.Request.Waitall(reqs)
    total = comm.allreduce(rank)
    items = comm.allgather(rank * rank)
    root_val = comm.bcast({"from": 0} if rank == 0 else None, root=0)
    comm.gather(rank, root=0)
    comm.alltoall(list(range(size)))
    comm.scatter(list(range(size)) if rank == 0 else None, root=0)
    comm.reduce(rank, op=MPI.MAX, root=0)
    comm.barrier()
half.Free()
