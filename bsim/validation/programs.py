"""The Python twins of the C programs in ``c/``: the same MPI calls, in order.

Each takes ``(nbytes, iters, compute)`` as its C twin takes ``argv``; ``compute``
is ``bsim.add_time`` here and ``smpi_execute`` there.  Under real ``mpiexec``
they run as ordinary mpi4py programs.
"""

from __future__ import annotations

import bsim

__all__ = ["PROGRAMS", "ring", "pingpong", "halo2d"]


def ring(nbytes: int, iters: int, compute: float) -> None:
    """Irecv from the left, Isend to the right, compute, Waitall."""
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    rank, size = comm.rank, comm.size
    right, left = (rank + 1) % size, (rank - 1) % size
    for _ in range(iters):
        reqs = [comm.Irecv(bsim.buffer(nbytes, MPI.BYTE), source=left, tag=0),
                comm.Isend(bsim.buffer(nbytes, MPI.BYTE), dest=right, tag=0)]
        bsim.add_time(compute)
        MPI.Request.Waitall(reqs)


def pingpong(nbytes: int, iters: int, compute: float) -> None:
    """Blocking ping-pong between rank 0 and the last rank."""
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    last = comm.size - 1
    buf = bsim.buffer(nbytes, MPI.BYTE)
    for _ in range(iters):
        if comm.rank == 0:
            comm.Send(buf, dest=last, tag=0)
            comm.Recv(buf, source=last, tag=0)
        elif comm.rank == last:
            comm.Recv(buf, source=0, tag=0)
            comm.Send(buf, dest=0, tag=0)


def halo2d(nbytes: int, iters: int, compute: float) -> None:
    """Four Irecv, four Isend on a periodic px x py grid, compute, Waitall of all eight."""
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    rank, size = comm.rank, comm.size
    px = max(d for d in range(1, int(size ** 0.5) + 1) if size % d == 0)
    py = size // px
    x, y = rank % px, rank // px
    nb = [(x + 1) % px + y * px, (x - 1) % px + y * px,
          x + (y + 1) % py * px, x + (y - 1) % py * px]
    for _ in range(iters):
        reqs = [comm.Irecv(bsim.buffer(nbytes, MPI.BYTE), source=nb[k ^ 1], tag=k)
                for k in range(4)]
        reqs += [comm.Isend(bsim.buffer(nbytes, MPI.BYTE), dest=nb[k], tag=k)
                 for k in range(4)]
        bsim.add_time(compute)
        MPI.Request.Waitall(reqs)


PROGRAMS = {"ring": ring, "pingpong": pingpong, "halo2d": halo2d}
