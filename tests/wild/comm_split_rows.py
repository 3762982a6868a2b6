# ranks: 4
from mpi4py import MPI

world = MPI.COMM_WORLD
rank = world.Get_rank()
row = world.Split(color=rank // 2, key=rank)
col = world.Split(color=rank % 2, key=-rank)
print(rank, "row", row.Get_rank(), row.Get_size(), "col", col.Get_rank(),
      "row sum", row.allreduce(rank), "col sum", col.allreduce(rank))
row.Free()
col.Free()
