# ranks: 2
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank = comm.Get_rank()

if rank == 0:
    data = np.arange(100, dtype=np.float64)
    req = comm.Isend(data, dest=1, tag=5)
    req.Wait()
elif rank == 1:
    data = np.empty(100, dtype=np.float64)
    req = comm.Irecv(data, source=0, tag=5)
    req.Wait()
    print("received, mean =", data.mean())

if rank == 0:
    req = comm.isend({"msg": "hi"}, dest=1, tag=9)
    req.wait()
else:
    req = comm.irecv(source=0, tag=9)
    print(req.wait())
