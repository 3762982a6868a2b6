# ranks: 2
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
triple = MPI.INT.Create_contiguous(3).Commit()
print(comm.rank, triple.Get_size(), triple.Get_extent())
if comm.rank == 0:
    comm.Send([np.arange(6, dtype="i"), 2, triple], dest=1)
else:
    buf = np.zeros(6, dtype="i")
    comm.Recv([buf, 2, triple], source=0)
    print(buf.tolist())
triple.Free()
