"""Positional arguments everywhere, MPI.Status attributes, Get_count on pickled messages."""
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
st = MPI.Status()
if rank == 0:
    for d in range(1, size):
        comm.send("hello" * d, d, 5)
        comm.Send(np.arange(d, dtype=np.int64), d, 6)
else:
    s = comm.recv(None, 0, 5, st)
    print(f"rank {rank} got {s} source {st.source} tag {st.tag} bytes>0 {st.Get_count() > 0}")
    comm.Probe(0, 6, st)
    n = st.Get_count(MPI.INT64_T)
    a = np.empty(n, dtype=np.int64)
    comm.Recv(a, 0, 6, st)
    print(f"rank {rank} count {n} {a.tolist()} elements {st.Get_elements(MPI.INT64_T)} count attr {st.count}")
b = np.zeros(3, dtype=np.uint8)
if rank == 0:
    b[:] = [255, 1, 128]
comm.Bcast(b, 0)
print(f"rank {rank} uint8 {b.tolist()}")
ar = np.array([rank], dtype=np.int8)
out = np.zeros(1, dtype=np.int8)
comm.Allreduce(ar, out, MPI.SUM)
print(f"rank {rank} int8 {out.tolist()}")
bo = bytearray(b"abcd") if rank == 0 else bytearray(4)
comm.Bcast(bo, root=0)
print(f"rank {rank} bytearray {bytes(bo)}")
mv = memoryview(bytearray(2))
if rank == 0:
    mv[:] = b"xy"
comm.Bcast(mv, root=0)
print(f"rank {rank} memoryview {bytes(mv)}")
F = np.asfortranarray(np.arange(6, dtype="d").reshape(2, 3)) if rank == 0 else np.zeros((2, 3), order="F")
comm.Bcast(F, root=0)
print(f"rank {rank} fortran {F.tolist()}")
z = np.array(rank, dtype="d")
zz = np.array(0.0)
comm.Allreduce(z, zz)
print(f"rank {rank} 0-d {float(zz)}")
