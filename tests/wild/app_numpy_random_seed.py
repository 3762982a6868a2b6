# ranks: 3
import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
np.random.seed(comm.rank)
comm.Barrier()
local = np.random.rand(4)
allv = comm.gather(np.round(local, 8).tolist(), root=0)
if comm.rank == 0:
    for r, v in enumerate(allv):
        print(r, v)
