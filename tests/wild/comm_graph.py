# ranks: 4
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
sources = [rank]
degrees = [2]
destinations = [(rank + 1) % size, (rank - 1) % size]
graph = comm.Create_dist_graph(sources, degrees, destinations)
indeg, outdeg, _ = graph.Get_dist_neighbors_count()
recv = np.empty(indeg, dtype="i")
graph.Neighbor_allgather(np.array([rank * 11], dtype="i"), recv)
print(rank, indeg, outdeg, sorted(recv.tolist()))
