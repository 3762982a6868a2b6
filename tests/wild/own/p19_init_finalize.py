"""Explicit initialization: rc.initialize = False, MPI.Init(), MPI.Finalize() at the end."""
import mpi4py
mpi4py.rc.initialize = False
mpi4py.rc.finalize = False
from mpi4py import MPI

print("before init", MPI.Is_initialized())
MPI.Init()
comm = MPI.COMM_WORLD
rank = comm.Get_rank()
print(f"rank {rank} after init {MPI.Is_initialized()} {comm.allreduce(1)}")
MPI.Finalize()
print(f"rank {rank} finalized {MPI.Is_finalized()}")
