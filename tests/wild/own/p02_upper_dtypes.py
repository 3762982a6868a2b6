"""Uppercase Send/Recv/Bcast/Reduce/Allreduce with several dtypes and spellings."""
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
size = comm.Get_size()

for dt in (np.float32, np.float64, np.int32, np.int64, np.complex128, np.bool_):
    if rank == 0:
        buf = (np.arange(5) % 2 == 1) if dt is np.bool_ else np.arange(5).astype(dt) * (1 + (1j if dt is np.complex128 else 0))
        buf = buf.astype(dt)
        for d in range(1, size):
            comm.Send(buf, dest=d, tag=3)
    else:
        buf = np.zeros(5, dtype=dt)
        comm.Recv(buf, source=0, tag=3)
    print(f"rank {rank} {np.dtype(dt).name} {buf.tolist()}")

a = np.empty(4, dtype="d")
if rank == 0:
    a[:] = [1.5, 2.5, 3.5, 4.5]
comm.Bcast([a, MPI.DOUBLE], root=0)
print(f"rank {rank} bcast {a.tolist()}")

ia = np.zeros(6, dtype="i")
if rank == 0:
    ia[:] = np.arange(6)
    if size > 1:
        comm.Send([ia, 3, MPI.INT], dest=size - 1, tag=9)
if rank == size - 1 and size > 1:
    comm.Recv([ia, 3, MPI.INT], source=0, tag=9)
print(f"rank {rank} partial {ia.tolist()}")

sendv = np.full(3, rank + 1, dtype=np.int64)
recvv = np.zeros(3, dtype=np.int64)
comm.Reduce(sendv, recvv, op=MPI.PROD, root=0)
if rank == 0:
    print("prod", recvv.tolist())
f = np.array([rank * 0.5, -rank], dtype=np.float32)
g = np.empty_like(f)
comm.Allreduce(f, g, op=MPI.MIN)
print(f"rank {rank} min {g.tolist()}")
c = np.array([rank + 1j * rank], dtype=np.complex128)
cs = np.zeros_like(c)
comm.Allreduce(c, cs, op=MPI.SUM)
print(f"rank {rank} csum {cs.tolist()}")
b = np.array([rank % 2 == 0, True])
bo = np.empty_like(b)
comm.Allreduce(b, bo, op=MPI.LAND)
print(f"rank {rank} land {bo.tolist()}")
inplace = np.array([rank, 1.0])
comm.Allreduce(MPI.IN_PLACE, inplace, op=MPI.SUM)
print(f"rank {rank} inplace {inplace.tolist()}")
