"""mpi4py.util.dtlib conversions and mpi4py.util.sync Counter."""
from mpi4py import MPI
from mpi4py.util import dtlib
import numpy as np

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
dt = dtlib.from_numpy_dtype(np.dtype("f8"))
print(f"rank {rank} f8 is DOUBLE {dt == MPI.DOUBLE} back {dtlib.to_numpy_dtype(MPI.INT)}")
rec = np.dtype([("a", "i4"), ("b", "f8")], align=True)
mt = dtlib.from_numpy_dtype(rec).Commit()
print(f"rank {rank} struct size {mt.Get_size()} extent {mt.Get_extent()}")
buf = np.zeros(2, dtype=rec)
if rank == 0:
    buf["a"] = [1, 2]
    buf["b"] = [0.5, 1.5]
comm.Bcast([buf, mt], root=0)
print(f"rank {rank} struct bcast {buf['a'].tolist()} {buf['b'].tolist()}")
mt.Free()
try:
    from mpi4py.util import sync
    counter = sync.Counter(comm=comm)
    vals = [counter.next() for _ in range(3)]
    comm.Barrier()
    allv = comm.gather(vals, root=0)
    if rank == 0:
        print("counter values", sorted(v for l in allv for v in l))
    counter.free()
except ImportError:
    print("no sync")
