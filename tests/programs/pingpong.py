"""An unmodified mpi4py ping-pong (runs under mpiexec -n 2 or bsim run -n 2)."""

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
nbytes = 1000
buf = np.zeros(nbytes, dtype="B")
if rank == 0:
    buf[:] = 7
    t0 = MPI.Wtime()
    comm.Send([buf, MPI.BYTE], dest=1, tag=11)
    comm.Recv([buf, MPI.BYTE], source=1, tag=22)
    t1 = MPI.Wtime()
    print(f"pingpong round trip {t1 - t0:.9f} s checksum {int(buf.sum())}")
elif rank == 1:
    comm.Recv([buf, MPI.BYTE], source=0, tag=11)
    buf += 1
    comm.Send([buf, MPI.BYTE], dest=0, tag=22)
