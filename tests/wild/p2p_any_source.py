# ranks: 4
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.rank
size = comm.size

if rank == 0:
    got = []
    status = MPI.Status()
    for i in range(size - 1):
        msg = comm.recv(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=status)
        got.append((status.Get_source(), status.Get_tag(), msg))
    for src, tag, msg in sorted(got):
        print("from", src, "tag", tag, "->", msg)
else:
    comm.send(rank ** 2, dest=0, tag=rank + 100)
