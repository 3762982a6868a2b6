# ranks: 4
from mpi4py import MPI

comm = MPI.COMM_WORLD
dims = MPI.Compute_dims(comm.size, 2)
cart = comm.Create_cart(dims, periods=[True, False], reorder=False)
coords = cart.Get_coords(cart.rank)
src, dst = cart.Shift(0, 1)
lo, hi = cart.Shift(1, 1)
print(cart.rank, dims, coords, (src, dst), (lo, hi), cart.Get_topo())
