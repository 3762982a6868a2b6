"""Errors as exceptions: catching MPI.Exception for a bad rank, and error strings."""
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
try:
    comm.Send(np.zeros(1), dest=size + 5)
except MPI.Exception as e:
    print(f"rank {rank} caught class {e.Get_error_class() == MPI.ERR_RANK}")
try:
    comm.bcast(1, root=-7)
except MPI.Exception as e:
    print(f"rank {rank} bcast root class {e.Get_error_class() == MPI.ERR_ROOT}")
print(f"rank {rank} errhandler return {comm.Get_errhandler() == MPI.ERRORS_RETURN}")
try:
    comm.Recv(np.zeros(1), source=0, tag=-5)
except MPI.Exception as e:
    print(f"rank {rank} tag class {e.Get_error_class() == MPI.ERR_TAG}")
