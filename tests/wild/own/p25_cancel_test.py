"""Cancel a receive that will never match, Issend + Test loop, Ssend, Bsend with a buffer."""
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
req = comm.Irecv(np.empty(1), source=MPI.ANY_SOURCE, tag=999)
req.Cancel()
st = MPI.Status()
req.Wait(st)
print(f"rank {rank} cancelled {st.Is_cancelled()}")
right, left = (rank + 1) % size, (rank - 1) % size
r = comm.issend(rank, dest=right, tag=3)
v = comm.recv(source=left, tag=3)
while not r.Test():
    pass
print(f"rank {rank} issend got {v}")
MPI.Attach_buffer(MPI.buffer.allocate(1 << 16) if hasattr(MPI, "buffer") else bytearray(1 << 16))
comm.bsend([rank, "b"], dest=right, tag=4)
w = comm.recv(source=left, tag=4)
MPI.Detach_buffer()
print(f"rank {rank} bsend got {w}")
if size > 1:
    if rank == 0:
        comm.Ssend(np.array([42.0]), dest=1)
    elif rank == 1:
        a = np.empty(1)
        comm.Recv(a, source=0)
        print("rank 1 ssend got", a[0])
