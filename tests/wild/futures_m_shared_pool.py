# ranks: 3
# command: -m mpi4py.futures
from mpi4py.futures import MPIPoolExecutor


def square(x):
    return x * x


if __name__ == "__main__":
    with MPIPoolExecutor() as executor:
        print(sum(executor.map(square, range(20))))
