# ranks: 1
from mpi4py.futures import MPIPoolExecutor


def collatz(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


if __name__ == "__main__":
    with MPIPoolExecutor(max_workers=2) as executor:
        print(list(executor.map(collatz, range(1, 16))))
