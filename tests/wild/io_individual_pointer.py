# ranks: 2
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank = comm.rank
fh = MPI.File.Open(comm, "wild_io_ind.bin", MPI.MODE_RDWR | MPI.MODE_CREATE)
fh.Seek(rank * 16)
fh.Write(np.array([rank + 0.5, rank + 0.25]))
fh.Sync()
comm.Barrier()
fh.Seek(((rank + 1) % 2) * 16)
back = np.zeros(2)
fh.Read(back)
fh.Close()
print(rank, back.tolist())
