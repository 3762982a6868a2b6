"""IN_PLACE in Allgather/Reduce/Gather, Scan/Exscan uppercase, None recvbuf off-root."""
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
a = np.zeros(size, dtype="i")
a[rank] = rank + 5
comm.Allgather(MPI.IN_PLACE, a)
print(f"rank {rank} allgather inplace {a.tolist()}")
v = np.array([rank, 1], dtype="d")
if rank == 0:
    comm.Reduce(MPI.IN_PLACE, v, op=MPI.SUM, root=0)
    print("reduce inplace", v.tolist())
else:
    comm.Reduce(v, None, op=MPI.SUM, root=0)
gb = np.zeros(size * 2, dtype="l") if rank == 0 else None
if rank == 0:
    gb[0:2] = [7, 7]
    comm.Gather(MPI.IN_PLACE, gb, root=0)
    print("gather inplace", gb.tolist())
else:
    comm.Gather(np.array([rank, rank], dtype="l"), None, root=0)
s = np.empty(1, dtype="i")
comm.Scan(np.array([rank + 1], dtype="i"), s)
e = np.array([-1], dtype="i")
comm.Exscan(np.array([rank + 1], dtype="i"), e)
print(f"rank {rank} Scan {s[0]} Exscan {e[0] if rank else 'undef'}")
r = np.empty(2, dtype="d")
comm.Scatter(np.arange(2 * size, dtype="d") if rank == 0 else None, r, root=0)
print(f"rank {rank} scatter none {r.tolist()}")
comm.barrier()
x = comm.bcast(np.arange(3) * 1.5 if rank == 0 else None)
print(f"rank {rank} pickled ndarray {x.tolist()} {x.dtype}")
