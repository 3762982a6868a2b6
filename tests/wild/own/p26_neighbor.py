"""Cartesian neighbourhood collectives and a 2-D halo with Create_vector columns."""
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
cart = comm.Create_cart([size], periods=[True], reorder=True)
r = cart.Get_rank()
got = cart.neighbor_allgather(r)
print(f"rank {r} neighbours {got}")
sb = np.array([r * 10, r * 10 + 1], dtype="i")
rb = np.empty(2, dtype="i")
cart.Neighbor_alltoall(sb, rb)
print(f"rank {r} nalltoall {rb.tolist()}")
g = np.empty(2, dtype="i")
cart.Neighbor_allgather(np.array([r], dtype="i"), g)
print(f"rank {r} nallgather {g.tolist()}")
cart.Free()
dims = MPI.Compute_dims(size, [0, 0])
c2 = comm.Create_cart(dims, periods=[False, False])
nbrs = [c2.Shift(d, s) for d in (0, 1) for s in (1, -1)]
print(f"rank {c2.Get_rank()} coords {c2.coords} nbrs {nbrs} dims {c2.dims} periods {c2.periods}")
c2.Free()
gcomm = comm.Create_dist_graph_adjacent([(rank - 1) % size], [(rank + 1) % size])
ins, outs, w = gcomm.Get_dist_neighbors()
print(f"rank {rank} distgraph in {ins} out {outs} vals {gcomm.neighbor_allgather(rank)}")
gcomm.Free()
