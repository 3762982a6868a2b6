# ranks: 1
import os
import sys
import numpy as np
from mpi4py import MPI

worker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_spawn_pi_worker.py")
comm = MPI.COMM_SELF.Spawn(sys.executable, args=[worker], maxprocs=2)
N = np.array(1000, "i")
comm.Bcast([N, MPI.INT], root=MPI.ROOT)
PI = np.array(0.0, "d")
comm.Reduce(None, [PI, MPI.DOUBLE], op=MPI.SUM, root=MPI.ROOT)
print("%.8f" % PI)
comm.Disconnect()
