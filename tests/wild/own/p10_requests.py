"""Waitall / Waitany / Testsome / Testall / Waitsome with nonblocking p2p."""
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()

if rank == 0:
    bufs = [np.empty(2, dtype=np.int64) for _ in range(1, size)]
    reqs = [comm.Irecv(bufs[i - 1], source=i, tag=i) for i in range(1, size)]
    seen = []
    st = MPI.Status()
    for _ in range(size - 1):
        idx = MPI.Request.Waitany(reqs, st)
        seen.append((idx, st.Get_source(), bufs[idx].tolist()))
    print("waitany", sorted(seen))
    print("after waitany all null", all(r == MPI.REQUEST_NULL for r in reqs))
else:
    comm.Send(np.array([rank, -rank], dtype=np.int64), dest=0, tag=rank)

if rank == 0:
    reqs = [comm.irecv(source=i, tag=20) for i in range(1, size)]
    done = []
    while len(done) < size - 1:
        idxs = MPI.Request.Testsome(reqs)
        if idxs:
            done.extend(idxs)
    print("testsome indices", sorted(done))
else:
    comm.send(rank, dest=0, tag=20)

reqs = []
for d in range(size):
    reqs.append(comm.isend(rank * 100 + d, dest=d, tag=30))
recvs = [comm.irecv(source=s, tag=30) for s in range(size)]
vals = MPI.Request.waitall(recvs)
MPI.Request.Waitall(reqs)
print(f"rank {rank} waitall values {vals}")

r = comm.Ibarrier()
r.Wait()
x = np.array([rank], dtype="i")
y = np.empty(1, dtype="i")
req = comm.Iallreduce(x, y, op=MPI.SUM)
flag = False
while not flag:
    flag = req.Test()
print(f"rank {rank} iallreduce {y[0]}")
req = comm.Ibcast(x, root=0)
MPI.Request.Waitall([req])
print(f"rank {rank} ibcast {x[0]}")
sr = [comm.Isend(np.array([1.0]), dest=(rank + 1) % size), comm.Irecv(np.empty(1), source=(rank - 1) % size)]
n = 0
while True:
    idx = MPI.Request.Waitsome(sr)
    if idx is None or idx == MPI.UNDEFINED:
        break
    n += len(idx)
    if all(q == MPI.REQUEST_NULL for q in sr):
        break
print(f"rank {rank} waitsome total {n} testall {MPI.Request.Testall(sr)}")
