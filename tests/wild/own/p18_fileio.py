"""MPI-IO: every rank writes its block with Write_at_all, rank 0 reads back with numpy."""
import os
import tempfile
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
d = comm.bcast(tempfile.mkdtemp() if rank == 0 else None)
path = os.path.join(d, "data.bin")
fh = MPI.File.Open(comm, path, MPI.MODE_WRONLY | MPI.MODE_CREATE)
block = np.arange(4, dtype="i4") + 10 * rank
fh.Write_at_all(rank * block.nbytes, block)
fh.Close()
comm.Barrier()
if rank == 0:
    print("file", np.fromfile(path, dtype="i4").tolist(), os.path.getsize(path))
fh = MPI.File.Open(comm, path, MPI.MODE_RDONLY)
back = np.empty(4, dtype="i4")
fh.Set_view(rank * 16, MPI.INT, MPI.INT)
fh.Read_all(back)
print(f"rank {rank} read {back.tolist()} size {fh.Get_size()}")
fh.Close()
comm.Barrier()
if rank == 0:
    os.remove(path)
    os.rmdir(d)
