"""Scatterv/Gatherv/Allgatherv with varying counts, Alltoall, Reduce_scatter_block."""
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()

counts = [i + 1 for i in range(size)]
displs = [sum(counts[:i]) for i in range(size)]
N = sum(counts)
if rank == 0:
    full = np.arange(N, dtype=np.float64) * 2
else:
    full = None
part = np.empty(counts[rank], dtype=np.float64)
comm.Scatterv([full, counts, displs, MPI.DOUBLE], part, root=0)
print(f"rank {rank} scatterv {part.tolist()}")
part *= -1
back = np.zeros(N) if rank == 0 else None
comm.Gatherv(part, [back, counts, displs, MPI.DOUBLE] if rank == 0 else None, root=0)
if rank == 0:
    print("gatherv", back.tolist())

mine = np.full(rank + 1, rank, dtype=np.int32)
allv = np.empty(N, dtype=np.int32)
comm.Allgatherv(mine, [allv, counts])
print(f"rank {rank} allgatherv {allv.tolist()}")

sa = np.array([rank * 100 + d for d in range(size)], dtype=np.int64)
ra = np.empty(size, dtype=np.int64)
comm.Alltoall(sa, ra)
print(f"rank {rank} alltoall {ra.tolist()}")

sb = np.arange(2 * size, dtype=np.float64) + rank
rb = np.empty(2, dtype=np.float64)
comm.Reduce_scatter_block(sb, rb, op=MPI.SUM)
print(f"rank {rank} rsb {rb.tolist()}")

rs = np.empty(counts[rank], dtype=np.int64)
comm.Reduce_scatter(np.ones(N, dtype=np.int64), rs, recvcounts=counts, op=MPI.SUM)
print(f"rank {rank} rs {rs.tolist()}")

scounts = [1] * size
sv = np.array([rank] * size, dtype="i")
rv = np.empty(size, dtype="i")
comm.Alltoallv([sv, scounts], [rv, scounts])
print(f"rank {rank} alltoallv {rv.tolist()}")

g = np.zeros((size, 2)) if rank == 0 else None
comm.Gather(np.array([rank, rank ** 2], dtype=float), g, root=0)
if rank == 0:
    print("gather2d", g.tolist())
s = np.empty(2)
comm.Scatter(g, s, root=0)
print(f"rank {rank} scatter2d {s.tolist()}")
