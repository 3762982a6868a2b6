"""Comm.Split into rows, Create_cart with Shift/Get_coords, Dup/Free."""
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()

color = rank % 2
sub = comm.Split(color, key=-rank)
print(f"rank {rank} color {color} subrank {sub.Get_rank()} subsize {sub.Get_size()} sum {sub.allreduce(rank)}")
sub.Free()

dims = MPI.Compute_dims(size, 2)
cart = comm.Create_cart(dims, periods=[True, False], reorder=False)
coords = cart.Get_coords(cart.Get_rank())
src, dst = cart.Shift(0, 1)
src1, dst1 = cart.Shift(1, 1)
print(f"rank {rank} dims {dims} coords {coords} shift0 {src} {dst} shift1 {src1} {dst1}")
print(f"rank {rank} topo {cart.Get_topo()} ndim {cart.Get_dim()} rank_of {cart.Get_cart_rank(coords)}")
val = np.array([float(rank)])
got = np.array([-1.0])
cart.Sendrecv(val, dest=dst1, recvbuf=got, source=src1)
print(f"rank {rank} halo from {src1}: {got[0]}")
rows = cart.Sub([False, True])
print(f"rank {rank} row size {rows.Get_size()} row rank {rows.Get_rank()}")
rows.Free()
cart.Free()

dup = comm.Dup()
print(f"rank {rank} dup compare {MPI.Comm.Compare(comm, dup) == MPI.CONGRUENT} size {dup.Get_size()}")
x = dup.bcast(rank * 3 if rank == 0 else None)
print(f"rank {rank} dup bcast {x}")
dup.Free()
print(f"rank {rank} freed {dup == MPI.COMM_NULL}")
