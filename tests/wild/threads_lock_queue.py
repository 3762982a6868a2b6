# ranks: 2
import queue
import threading
from mpi4py import MPI

comm = MPI.COMM_WORLD
q = queue.Queue()
lock = threading.Lock()
total = [0]


def consumer():
    while True:
        item = q.get()
        if item is None:
            break
        with lock:
            total[0] += item


ts = [threading.Thread(target=consumer) for _ in range(2)]
for t in ts:
    t.start()
for i in range(10):
    q.put(i + comm.rank)
for _ in ts:
    q.put(None)
for t in ts:
    t.join()
print(comm.rank, total[0], comm.allreduce(total[0]))
