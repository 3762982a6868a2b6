# ranks: 1
import os
import sys
from mpi4py import MPI

child = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_spawn_child.py")
inter = MPI.COMM_SELF.Spawn(sys.executable, args=[child], maxprocs=3)
inter.bcast(42, root=MPI.ROOT)
total = inter.reduce(None, op=MPI.SUM, root=MPI.ROOT)
print("children:", inter.Get_remote_size(), "sum of replies:", total)
inter.Disconnect()
