# ranks: 2
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
if rank == 0:
    np.arange(12, dtype="d").tofile("wild_io_view.bin")
comm.Barrier()
fh = MPI.File.Open(comm, "wild_io_view.bin", MPI.MODE_RDONLY)
ftype = MPI.DOUBLE.Create_vector(3, 2, 2 * size).Commit()
fh.Set_view(rank * 2 * 8, MPI.DOUBLE, ftype)
out = np.zeros(6)
fh.Read_all(out)
fh.Close()
ftype.Free()
print(rank, out.tolist())
