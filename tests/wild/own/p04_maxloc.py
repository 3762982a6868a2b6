"""MAXLOC / MINLOC with pickled pairs and with numpy structured buffers."""
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
val = float((rank * 7) % 5)
mx = comm.allreduce((val, rank), op=MPI.MAXLOC)
mn = comm.allreduce((val, rank), op=MPI.MINLOC)
print(f"rank {rank} maxloc {mx} minloc {mn}")
r = comm.reduce((val, rank), op=MPI.MAXLOC, root=0)
if rank == 0:
    print("reduce maxloc", r)

pair = np.array([(val, rank)], dtype=np.dtype([("v", "f8"), ("i", "i4")], align=True))
out = np.empty_like(pair)
comm.Allreduce([pair, MPI.DOUBLE_INT], [out, MPI.DOUBLE_INT], op=MPI.MAXLOC)
print(f"rank {rank} DOUBLE_INT maxloc {out[0]['v']} {out[0]['i']}")
ip = np.array([[rank % 3, rank]], dtype="i")
io = np.empty_like(ip)
comm.Allreduce([ip, MPI.TWOINT], [io, MPI.TWOINT], op=MPI.MINLOC)
print(f"rank {rank} 2INT minloc {io.tolist()}")
