# ranks: 3
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
if rank == 0:
    done = 0
    total = 0
    while done < size - 1:
        if comm.Iprobe(source=MPI.ANY_SOURCE, tag=7):
            total += comm.recv(source=MPI.ANY_SOURCE, tag=7)
            done += 1
    print("total", total)
else:
    comm.send(sum(range(rank * 100)), dest=0, tag=7)
