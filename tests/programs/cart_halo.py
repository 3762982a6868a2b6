"""A 2-D periodic Cartesian halo exchange with numpy (each rank checks its neighbours' ids)."""

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
cart = comm.Create_cart(MPI.Compute_dims(comm.Get_size(), 2), periods=[True, True])
me = cart.Get_rank()
ok = True
for direction in (0, 1):
    src, dst = cart.Shift(direction, 1)
    got = np.zeros(1, dtype="i4")
    cart.Sendrecv(np.array([me], dtype="i4"), dest=dst, recvbuf=got, source=src)
    ok &= int(got[0]) == src
allok = cart.allreduce(ok, op=MPI.LAND)
if me == 0:
    print(f"halo exchange on {cart.dims} grid: {'ok' if allok else 'WRONG'}")
