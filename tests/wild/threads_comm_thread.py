# ranks: 2
import threading
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.rank
other = 1 - rank
box = []


def receiver():
    box.append(comm.recv(source=other, tag=5))


t = threading.Thread(target=receiver)
t.start()
comm.send("hello %d" % rank, dest=other, tag=5)
t.join()
print(rank, box)
