"""The Python twins of the C programs in ``c/``: the same MPI calls, in order.

Each takes ``(nbytes, iters, compute)`` as its C twin takes ``argv`` (``collective``
also the operation's name, its C twin's fourth argument); ``compute`` is
``bsim.add_time`` here and ``smpi_execute`` there.  Under real ``mpiexec``
they run as ordinary mpi4py programs.
"""

from __future__ import annotations

from collections.abc import Callable

import bsim

__all__ = ["PROGRAMS", "ring", "pingpong", "halo2d", "sweep", "allreduce", "collective",
           "COLLECTIVE_OPS"]


def _grid(size: int) -> int:
    """px: the largest divisor of *size* not above its square root."""
    return max(d for d in range(1, int(size ** 0.5) + 1) if size % d == 0)


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
    px = _grid(size)
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


KBLOCKS = 4


def sweep(nbytes: int, iters: int, compute: float) -> None:
    """KBA sweep from each corner of a px x py grid: Recv upstream x, y; compute; Send."""
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    rank, size = comm.rank, comm.size
    px = _grid(size)
    py = size // px
    x, y = rank % px, rank // px
    buf = bsim.buffer(nbytes, MPI.BYTE)
    for _ in range(iters):
        for corner in range(4):
            dx, dy = (-1 if corner & 1 else 1), (-1 if corner & 2 else 1)
            ux, uy, wx, wy = x - dx, y - dy, x + dx, y + dy
            for _k in range(KBLOCKS):
                if 0 <= ux < px:
                    comm.Recv(buf, source=ux + y * px, tag=0)
                if 0 <= uy < py:
                    comm.Recv(buf, source=x + uy * px, tag=1)
                bsim.add_time(compute)
                if 0 <= wx < px:
                    comm.Send(buf, dest=wx + y * px, tag=0)
                if 0 <= wy < py:
                    comm.Send(buf, dest=x + wy * px, tag=1)


def allreduce(nbytes: int, iters: int, compute: float) -> None:
    """Compute, then Allreduce (SUM) of nbytes/8 doubles; repeated."""
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    count = max(nbytes // 8, 1)
    for _ in range(iters):
        bsim.add_time(compute)
        comm.Allreduce(bsim.buffer(count, MPI.DOUBLE), bsim.buffer(count, MPI.DOUBLE),
                       op=MPI.SUM)


COLLECTIVE_OPS = ("bcast", "reduce", "gather", "scatter", "allgather", "alltoall",
                  "reduce_scatter", "barrier")


def collective(nbytes: int, iters: int, compute: float, op: str) -> None:
    """Compute, then one collective *op* over COMM_WORLD (root 0, SUM of doubles); repeated.

    *nbytes* is bsim's size of the collective (docs/collectives.md): the buffer (bcast), the
    vector of doubles (reduce, reduce_scatter: ``nbytes/P`` each), the root's buffer of P
    blocks (gather, scatter), one rank's receive (allgather) or send (alltoall) buffer of P
    blocks; barrier ignores it.
    """
    from mpi4py import MPI
    if op not in COLLECTIVE_OPS:
        raise ValueError(f"collective: op must be one of {', '.join(COLLECTIVE_OPS)}, "
                         f"got {op!r}")
    comm = MPI.COMM_WORLD
    size = comm.size
    block, doubles = nbytes // size, nbytes // 8
    for _ in range(iters):
        bsim.add_time(compute)
        if op == "bcast":
            comm.Bcast(bsim.buffer(nbytes, MPI.BYTE), root=0)
        elif op == "reduce":
            comm.Reduce(bsim.buffer(doubles, MPI.DOUBLE), bsim.buffer(doubles, MPI.DOUBLE),
                        op=MPI.SUM, root=0)
        elif op == "gather":
            comm.Gather(bsim.buffer(block, MPI.BYTE), bsim.buffer(block * size, MPI.BYTE),
                        root=0)
        elif op == "scatter":
            comm.Scatter(bsim.buffer(block * size, MPI.BYTE), bsim.buffer(block, MPI.BYTE),
                         root=0)
        elif op == "allgather":
            comm.Allgather(bsim.buffer(block, MPI.BYTE), bsim.buffer(block * size, MPI.BYTE))
        elif op == "alltoall":
            comm.Alltoall(bsim.buffer(block * size, MPI.BYTE),
                          bsim.buffer(block * size, MPI.BYTE))
        elif op == "reduce_scatter":
            comm.Reduce_scatter(bsim.buffer(doubles, MPI.DOUBLE),
                                bsim.buffer(doubles // size, MPI.DOUBLE),
                                recvcounts=[doubles // size] * size, op=MPI.SUM)
        else:
            comm.Barrier()


PROGRAMS: dict[str, Callable[..., None]] = {
    "ring": ring, "pingpong": pingpong, "halo2d": halo2d, "sweep": sweep, "allreduce": allreduce,
    "collective": collective}
