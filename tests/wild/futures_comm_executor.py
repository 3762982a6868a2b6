# ranks: 3
from mpi4py import MPI
from mpi4py.futures import MPICommExecutor


def cube(x):
    return x ** 3


with MPICommExecutor(MPI.COMM_WORLD, root=0) as executor:
    if executor is not None:
        print(list(executor.map(cube, range(8))))
