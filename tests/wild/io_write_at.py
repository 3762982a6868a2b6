# ranks: 4
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank = comm.rank
amode = MPI.MODE_WRONLY | MPI.MODE_CREATE
fh = MPI.File.Open(comm, "wild_io_at.bin", amode)
buf = np.full(5, rank, dtype="i")
fh.Write_at_all(rank * buf.nbytes, buf)
fh.Close()
comm.Barrier()
if rank == 0:
    data = np.fromfile("wild_io_at.bin", dtype="i")
    print(data.tolist())
