# ranks: 2
from mpi4py import MPI
from mpi4py.util import pkl5
import numpy as np

comm = pkl5.Intracomm(MPI.COMM_WORLD)
if comm.rank == 0:
    comm.send(np.arange(1000, dtype="i2"), dest=1)
else:
    arr = comm.recv(source=0)
    print(arr.dtype, arr.shape, int(arr.sum()))
