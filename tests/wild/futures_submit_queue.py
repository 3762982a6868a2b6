# ranks: 3
# command: -m mpi4py.futures
import queue
from mpi4py.futures import MPIPoolExecutor, wait


def job(k):
    return k, "x" * k


if __name__ == "__main__":
    q = queue.Queue()
    for k in range(6):
        q.put(k)
    with MPIPoolExecutor() as ex:
        fs = []
        while not q.empty():
            fs.append(ex.submit(job, q.get()))
        done, _ = wait(fs)
        print(sorted(f.result() for f in done))
