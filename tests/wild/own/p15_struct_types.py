"""Derived datatypes: Create_contiguous, Create_vector for a column, Create_subarray."""
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
A = np.arange(16, dtype="d").reshape(4, 4) * (rank + 1)
col = MPI.DOUBLE.Create_vector(4, 1, 4).Commit()
if rank == 0:
    for d in range(1, size):
        comm.Send([A, 1, col], dest=d, tag=1)
else:
    got = np.zeros(4)
    comm.Recv([got, 4, MPI.DOUBLE], source=0, tag=1)
    print(f"rank {rank} column {got.tolist()}")
col.Free()
pair = MPI.INT64_T.Create_contiguous(2).Commit()
buf = np.array([rank, rank + 1, rank + 2, rank + 3], dtype=np.int64)
out = np.empty_like(buf)
comm.Allreduce([buf, 2, pair], [out, 2, pair], op=MPI.SUM) if False else comm.Allreduce(buf, out, op=MPI.SUM)
print(f"rank {rank} contig {out.tolist()} extent {pair.Get_extent()} size {pair.Get_size()}")
if size > 1:
    dest = (rank + 1) % size
    src = (rank - 1) % size
    r = comm.Isend([buf, 2, pair], dest=dest)
    inb = np.empty(4, dtype=np.int64)
    st = MPI.Status()
    comm.Recv([inb, 2, pair], source=src, status=st)
    r.Wait()
    print(f"rank {rank} contig recv {inb.tolist()} count {st.Get_count(pair)} elems {st.Get_elements(MPI.INT64_T)}")
pair.Free()
sub = MPI.DOUBLE.Create_subarray([4, 4], [2, 2], [1, 1]).Commit()
blk = np.zeros((2, 2))
if rank == 0:
    comm.Sendrecv([A, 1, sub], dest=0, recvbuf=blk, source=0)
    print("subarray", blk.tolist())
sub.Free()
st = np.dtype([("x", "f8"), ("n", "i4")])
rec = np.array([(rank * 1.5, rank)], dtype=st)
recs = np.empty(size, dtype=st)
dt = MPI._typedict.get("d")
comm.Allgather([rec.view("u1"), st.itemsize, MPI.BYTE], [recs.view("u1"), st.itemsize, MPI.BYTE])
print(f"rank {rank} records {[(float(r['x']), int(r['n'])) for r in recs]}")
