"""User-defined reductions: Op.Create on buffers and plain callables on objects."""
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()


def absmax(inbuf, inoutbuf, datatype):
    a = np.frombuffer(inbuf, dtype="d")
    b = np.frombuffer(inoutbuf, dtype="d")
    b[:] = np.where(np.abs(a) > np.abs(b), a, b)


op = MPI.Op.Create(absmax, commute=True)
x = np.array([(-1) ** rank * rank, rank * 0.5], dtype="d")
y = np.empty(2)
comm.Allreduce(x, y, op=op)
print(f"rank {rank} absmax {y.tolist()}")
op.Free()
merged = comm.allreduce({rank: rank * rank}, op=lambda a, b: {**a, **b})
print(f"rank {rank} merged {sorted(merged.items())}")
cat = MPI.Op.Create(lambda a, b, datatype: a + b, commute=False)
s = comm.reduce([rank], op=cat, root=0)
if rank == 0:
    print("noncommutative concat", s)
cat.Free()
bits = comm.allreduce(1 << rank, op=MPI.BOR)
print(f"rank {rank} bor {bits} band {comm.allreduce(7, op=MPI.BAND)} lxor {comm.allreduce(True, op=MPI.LXOR)}")
