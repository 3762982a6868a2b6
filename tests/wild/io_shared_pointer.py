# ranks: 3
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank = comm.rank
fh = MPI.File.Open(comm, "wild_io_ord.bin", MPI.MODE_RDWR | MPI.MODE_CREATE)
fh.Set_size(0)
fh.Write_ordered(np.full(rank + 1, rank, dtype="i"))
fh.Sync()
comm.Barrier()
size = fh.Get_size()
fh.Close()
if rank == 0:
    print(size, np.fromfile("wild_io_ord.bin", dtype="i").tolist())
