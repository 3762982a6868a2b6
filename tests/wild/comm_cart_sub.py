# ranks: 4
from mpi4py import MPI

comm = MPI.COMM_WORLD
cart = comm.Create_cart([2, 2], periods=[False, False])
rows = cart.Sub([False, True])
cols = cart.Sub([True, False])
print(cart.rank, cart.coords, "row-sum", rows.allreduce(cart.rank),
      "col-sum", cols.allreduce(cart.rank))
