# ranks: 2
from dataclasses import dataclass
from mpi4py import MPI


@dataclass
class Particle:
    x: float
    v: float


comm = MPI.COMM_WORLD
if comm.rank == 0:
    comm.send([Particle(1.0, 0.5), Particle(2.0, -0.5)], dest=1)
else:
    ps = comm.recv(source=0)
    print(type(ps[0]).__name__, ps)
