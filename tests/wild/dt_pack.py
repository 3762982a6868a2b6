# ranks: 2
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
if comm.rank == 0:
    a = np.array([1, 2, 3], dtype="i")
    b = np.array([0.25, 0.5], dtype="d")
    size = MPI.INT.Pack_size(3, comm) + MPI.DOUBLE.Pack_size(2, comm)
    buf = bytearray(size)
    pos = 0
    pos = MPI.INT.Pack(a, buf, pos, comm)
    pos = MPI.DOUBLE.Pack(b, buf, pos, comm)
    comm.Send([buf, pos, MPI.PACKED], dest=1)
else:
    st = MPI.Status()
    comm.Probe(source=0, status=st)
    buf = bytearray(st.Get_count(MPI.PACKED))
    comm.Recv([buf, MPI.PACKED], source=0)
    a = np.empty(3, dtype="i")
    b = np.empty(2, dtype="d")
    pos = MPI.INT.Unpack(buf, 0, a, comm)
    pos = MPI.DOUBLE.Unpack(buf, pos, b, comm)
    print(a.tolist(), b.tolist())
