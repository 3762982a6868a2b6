"""Wtime differences, Wtick, processor name, version queries (values not printed)."""
from mpi4py import MPI
import time

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
t0 = MPI.Wtime()
x = sum(i * i for i in range(20000))
comm.Barrier()
t1 = MPI.Wtime()
print(f"rank {rank} elapsed nonneg {t1 - t0 >= 0} wtick positive {MPI.Wtick() > 0}")
name = MPI.Get_processor_name()
print(f"rank {rank} name is str {isinstance(name, str) and len(name) > 0}")
names = comm.gather(name, root=0)
if rank == 0:
    print("names gathered", len(names))
v = MPI.Get_version()
print(f"rank {rank} version tuple {isinstance(v, tuple) and len(v) == 2}")
print(f"rank {rank} initialized {MPI.Is_initialized()} finalized {MPI.Is_finalized()}")
print(f"rank {rank} thread level ok {MPI.Query_thread() in (MPI.THREAD_SINGLE, MPI.THREAD_FUNNELED, MPI.THREAD_SERIALIZED, MPI.THREAD_MULTIPLE)}")
lib = MPI.Get_library_version()
print(f"rank {rank} libversion str {isinstance(lib, str)}")
tmax = comm.allreduce(t1 - t0, op=MPI.MAX)
print(f"rank {rank} tmax >= mine {tmax >= t1 - t0}")
