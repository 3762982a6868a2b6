# ranks: 2
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
dt = np.dtype([("id", "i4"), ("x", "f8"), ("y", "f8")], align=True)
offsets = [dt.fields[n][1] for n in dt.names]
mpitype = MPI.Datatype.Create_struct([1, 1, 1], offsets, [MPI.INT, MPI.DOUBLE, MPI.DOUBLE])
mpitype = mpitype.Create_resized(0, dt.itemsize).Commit()
if comm.rank == 0:
    parts = np.zeros(3, dtype=dt)
    parts["id"] = [1, 2, 3]
    parts["x"] = [0.5, 1.5, 2.5]
    parts["y"] = [-1.0, -2.0, -3.0]
    comm.Send([parts, 3, mpitype], dest=1)
else:
    parts = np.zeros(3, dtype=dt)
    comm.Recv([parts, 3, mpitype], source=0)
    print(parts.tolist())
mpitype.Free()
