# ranks: 1
from mpi4py.futures import MPIPoolExecutor


def slow_sum(n):
    return sum(range(n))


if __name__ == "__main__":
    ex = MPIPoolExecutor(max_workers=1)
    fut = ex.submit(slow_sum, 1000)
    while not fut.done():
        pass
    print("result", fut.result())
    ex.shutdown()
