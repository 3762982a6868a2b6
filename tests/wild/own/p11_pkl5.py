"""mpi4py.util.pkl5: large pickled messages through the pkl5 communicator."""
from mpi4py import MPI
from mpi4py.util import pkl5
import numpy as np

comm = pkl5.Intracomm(MPI.COMM_WORLD)
rank, size = comm.Get_rank(), comm.Get_size()
big = np.arange(50000, dtype=np.float64) * rank
if rank == 0:
    for d in range(1, size):
        comm.send({"arr": big + d, "tag": d}, dest=d, tag=4)
    print("rank 0 sent")
else:
    msg = comm.recv(source=0, tag=4)
    print(f"rank {rank} pkl5 recv sum {msg['arr'].sum()} tag {msg['tag']}")
obj = comm.bcast(list(range(5)) if rank == 0 else None, root=0)
print(f"rank {rank} pkl5 bcast {obj}")
g = comm.gather(rank * 2, root=0)
if rank == 0:
    print("pkl5 gather", g)
req = comm.isend(rank, dest=(rank + 1) % size, tag=8)
v = comm.recv(source=(rank - 1) % size, tag=8)
req.wait()
print(f"rank {rank} pkl5 ring {v}")
st = MPI.Status()
if rank == 0 and size > 1:
    comm.send(b"x" * 1000, dest=1, tag=12)
if rank == 1:
    m = comm.mprobe(source=0, tag=12, status=st)
    data = m.recv()
    print(f"rank 1 mprobe {len(data)} src {st.Get_source()}")
