# ranks: 2
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
idx = MPI.DOUBLE.Create_indexed([2, 1, 3], [0, 4, 7]).Commit()
if comm.rank == 0:
    comm.Send([np.arange(10, dtype="d"), 1, idx], dest=1)
else:
    out = np.full(10, -1.0)
    comm.Recv([out, 1, idx], source=0)
    print(out.tolist())
idx.Free()
