"""An unmodified mpi4py ring: pass a counter around, every rank adds its rank."""

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
if rank == 0:
    comm.send(0, dest=1)
    total = comm.recv(source=size - 1)
    print(f"ring total {total} at t={MPI.Wtime():.9f}")
else:
    value = comm.recv(source=rank - 1)
    comm.send(value + rank, dest=(rank + 1) % size)
