"""Ring shift with Sendrecv, Sendrecv_replace and the lowercase sendrecv."""
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
right = (rank + 1) % size
left = (rank - 1) % size

buf = np.array([rank, rank * 10], dtype=np.int64)
for step in range(size):
    comm.Sendrecv_replace(buf, dest=right, sendtag=step, source=left, recvtag=step)
print(f"rank {rank} after full ring {buf.tolist()}")

out = np.array([float(rank)])
inc = np.empty(1)
status = MPI.Status()
comm.Sendrecv(out, dest=right, sendtag=5, recvbuf=inc, source=left, recvtag=5, status=status)
print(f"rank {rank} from {status.Get_source()} tag {status.Get_tag()} got {inc[0]} count {status.Get_count(MPI.DOUBLE)}")

msg = comm.sendrecv({"from": rank}, dest=right, source=left)
print(f"rank {rank} sendrecv {msg}")

req_s = comm.isend([rank] * 3, dest=right, tag=1)
req_r = comm.irecv(source=left, tag=1)
data = req_r.wait()
req_s.wait()
print(f"rank {rank} irecv {data}")

sbuf = np.full(4, rank, dtype=np.float32)
rbuf = np.empty(4, dtype=np.float32)
reqs = [comm.Isend(sbuf, dest=right, tag=2), comm.Irecv(rbuf, source=left, tag=2)]
MPI.Request.Waitall(reqs)
print(f"rank {rank} Irecv {rbuf.tolist()}")
