"""time.sleep between messages and a timed receive loop with Iprobe."""
import time
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
if rank == 1:
    time.sleep(0.05)
    comm.send("late", dest=0, tag=1)
if rank == 0 and size > 1:
    t0 = time.time()
    while not comm.Iprobe(source=1, tag=1):
        time.sleep(0.001)
    print("rank 0 got", comm.recv(source=1, tag=1))
comm.Barrier()
print(f"rank {rank} done")
