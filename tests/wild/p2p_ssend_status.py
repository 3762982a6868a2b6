# ranks: 2
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
if comm.rank == 0:
    comm.Ssend(np.ones(4, dtype="f4"), dest=1, tag=42)
else:
    st = MPI.Status()
    buf = np.zeros(8, dtype="f4")
    comm.Recv(buf, source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=st)
    print(st.source, st.tag, st.Get_count(MPI.FLOAT), buf.tolist())
