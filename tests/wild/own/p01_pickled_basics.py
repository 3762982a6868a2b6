"""Lowercase pickled point-to-point and collectives on dicts, lists and arrays."""
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
size = comm.Get_size()

if rank == 0:
    data = {"a": 7, "b": 3.14, "names": ["x", "y"]}
    for dest in range(1, size):
        comm.send(data, dest=dest, tag=11)
    got = data
else:
    got = comm.recv(source=0, tag=11)
print(f"rank {rank} recv {sorted(got.items())}")

cfg = comm.bcast({"steps": 10, "dt": 0.5} if rank == 0 else None, root=0)
print(f"rank {rank} bcast {cfg['steps']} {cfg['dt']}")

chunks = [[i, i * i] for i in range(size)] if rank == 0 else None
mine = comm.scatter(chunks, root=0)
print(f"rank {rank} scatter {mine}")

arr = np.arange(3, dtype=float) + rank
everything = comm.gather(arr, root=0)
if rank == 0:
    print("gather", [a.tolist() for a in everything])

total = comm.allreduce(rank + 1, op=MPI.SUM)
biggest = comm.allreduce(rank, op=MPI.MAX)
vec = comm.allreduce(np.ones(2) * rank)
print(f"rank {rank} allreduce {total} {biggest} {vec.tolist()}")
lists = comm.allgather([rank] * 2)
print(f"rank {rank} allgather {lists}")
s = comm.reduce(f"r{rank}", op=MPI.SUM, root=0)
if rank == 0:
    print("reduce str", s)
x = comm.alltoall([rank * 10 + d for d in range(size)])
print(f"rank {rank} alltoall {x}")
print(f"rank {rank} scan {comm.scan(rank + 1)} exscan {comm.exscan(rank + 1)}")
