"""jacobi2d: a real 2-D Jacobi solver with mpi4py and numpy.

The global ``n x n`` interior (plus a fixed boundary: 1 on the top edge, 0
elsewhere) is split into a ``px x py`` process grid (:func:`grid_dims`,
rank = ``j*px + i``, blocks of :func:`extent` points).  One iteration:

1. halo exchange with the four neighbours: ``Irecv`` x 4, ``Isend`` x 4,
   ``Waitall`` (rows go straight from the array, columns through packed
   buffers; absent neighbours are ``PROC_NULL``);
2. :func:`compute_step`: unpack the received columns, the five-point update
   ``new = (N + S + E + W) / 4`` on the block, pack the next columns.

The timed part is the iteration loop between two barriers; the residual is
reduced after it.  ``python benchmarks/apps/jacobi2d.py --help``; under
``mpiexec -n P`` rank 0 prints one JSON line.  ``--time-kernel`` times
:func:`compute_step` alone on one process for a range of block sizes (the
kernel data that ``bsim fit kernel`` turns into the skeleton's time model).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np

__all__ = ["grid_dims", "extent", "Block", "compute_step", "main", "time_kernel"]


def grid_dims(nprocs: int) -> tuple[int, int]:
    """``(px, py)`` with ``px * py = nprocs``, ``px <= py``, as square as possible."""
    px = int(nprocs ** 0.5)
    while nprocs % px:
        px -= 1
    return px, nprocs // px


def extent(n: int, parts: int, index: int) -> int:
    """Points of block *index* when *n* points are split into *parts* (first ones larger)."""
    return n // parts + (1 if index < n % parts else 0)


class Block:
    """One rank's block: arrays with a one-point halo and the packed column buffers."""

    def __init__(self, ly: int, lx: int, top: bool) -> None:
        self.u = np.zeros((ly + 2, lx + 2))
        if top:
            self.u[-1, :] = 1.0                      # the global top boundary
        self.new = self.u.copy()
        # west/east columns: send (packed) and receive buffers
        self.send_w, self.send_e = np.empty(ly), np.empty(ly)
        self.recv_w, self.recv_e = np.zeros(ly), np.zeros(ly)


def compute_step(b: Block, has_w: bool, has_e: bool) -> None:
    """Unpack received columns, update the block, swap, pack the next columns."""
    u = b.u
    if has_w:
        u[1:-1, 0] = b.recv_w
    if has_e:
        u[1:-1, -1] = b.recv_e
    new = b.new
    np.add(u[:-2, 1:-1], u[2:, 1:-1], out=new[1:-1, 1:-1])
    new[1:-1, 1:-1] += u[1:-1, :-2]
    new[1:-1, 1:-1] += u[1:-1, 2:]
    new[1:-1, 1:-1] *= 0.25
    b.u, b.new = new, u
    b.send_w[:] = b.u[1:-1, 1]
    b.send_e[:] = b.u[1:-1, -2]


def main(n: int = 1024, iterations: int = 50, comm: Any = None) -> dict[str, float]:
    """Run the solver; every rank returns ``{"seconds": loop time (max over ranks), ...}``.

    ``cpu_seconds`` is the loop's CPU time (``time.process_time``, max over
    ranks): on a machine shared with other jobs it is close to what the wall
    time would be on a quiet one, as long as each rank has a core of its own
    (MPICH waits by polling, so waiting counts as CPU time too).
    """
    from mpi4py import MPI
    comm = MPI.COMM_WORLD if comm is None else comm
    rank, size = comm.Get_rank(), comm.Get_size()
    px, py = grid_dims(size)
    i, j = rank % px, rank // px
    lx, ly = extent(n, px, i), extent(n, py, j)
    west = rank - 1 if i > 0 else MPI.PROC_NULL
    east = rank + 1 if i < px - 1 else MPI.PROC_NULL
    south = rank - px if j > 0 else MPI.PROC_NULL
    north = rank + px if j < py - 1 else MPI.PROC_NULL
    b = Block(ly, lx, top=(j == py - 1))
    has_w, has_e = west != MPI.PROC_NULL, east != MPI.PROC_NULL
    compute_step(b, False, False)                     # packs the first columns
    comm.Barrier()
    t0, c0 = MPI.Wtime(), time.process_time()
    for _ in range(iterations):
        u = b.u
        reqs = [comm.Irecv(b.recv_w, source=west, tag=1),
                comm.Irecv(b.recv_e, source=east, tag=2),
                comm.Irecv(u[0, 1:-1], source=south, tag=3),
                comm.Irecv(u[-1, 1:-1], source=north, tag=4),
                comm.Isend(b.send_e, dest=east, tag=1),
                comm.Isend(b.send_w, dest=west, tag=2),
                comm.Isend(u[-2, 1:-1], dest=north, tag=3),
                comm.Isend(u[1, 1:-1], dest=south, tag=4)]
        MPI.Request.Waitall(reqs)
        compute_step(b, has_w, has_e)
    elapsed, cpu = MPI.Wtime() - t0, time.process_time() - c0
    comm.Barrier()
    seconds = comm.allreduce(elapsed, op=MPI.MAX)
    cpu_seconds = comm.allreduce(cpu, op=MPI.MAX)
    residual = comm.allreduce(float(np.abs(b.u - b.new)[1:-1, 1:-1].sum()), op=MPI.SUM)
    return {"seconds": seconds, "cpu_seconds": cpu_seconds, "residual": residual, "px": px,
            "py": py, "cells": lx * ly}


def time_kernel(shapes: list[tuple[int, int]], reps: int = 7, min_time: float = 0.02
                ) -> list[tuple[int, float, float]]:
    """``(cells, wall seconds, CPU seconds)`` of one :func:`compute_step` per shape ``(ly, lx)``.

    Each of *reps* samples is the mean of enough steps to last *min_time*;
    one process, no MPI.  The shapes are visited round-robin (one sample of
    each, *reps* times) so that a change of machine load hits every size
    alike.  Rows are sorted by cells (the order ``bsim fit kernel`` requires).
    """
    blocks, inner = [], []
    for ly, lx in shapes:
        b = Block(ly, lx, top=True)
        compute_step(b, True, True)
        t = time.perf_counter()
        compute_step(b, True, True)
        once = max(time.perf_counter() - t, 1e-7)
        blocks.append(b)
        inner.append(max(1, int(min_time / once)))
    rows = []
    for _ in range(reps):
        for (ly, lx), b, k in zip(shapes, blocks, inner, strict=True):
            t, c = time.perf_counter(), time.process_time()
            for _ in range(k):
                compute_step(b, True, True)
            rows.append((ly * lx, (time.perf_counter() - t) / k, (time.process_time() - c) / k))
    return sorted(rows)


def _cli() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1024, help="interior points per side")
    p.add_argument("--iterations", type=int, default=50)
    p.add_argument("--repeat", type=int, default=3, help="runs; the JSON has all and the "
                   "median")
    p.add_argument("--time-kernel", metavar="CSV", help="write cells,seconds,cpu_seconds of "
                   "compute_step "
                   "for square blocks of n/4 .. n a side (and n/2 x n) instead of running "
                   "the solver")
    ns = p.parse_args()
    if ns.time_kernel:
        # the range a prediction up to P = 16 uses: n/4 .. n a side, and the 1 x 2 block
        sides = sorted({max(16, int(ns.n / 2 ** (k / 2))) for k in range(0, 5)})
        shapes = [(s, s) for s in sides] + [(ns.n // 2, ns.n)]
        with open(ns.time_kernel, "w") as fh:
            fh.write("cells,seconds,cpu_seconds\n")
            fh.writelines(f"{c},{w!r},{u!r}\n" for c, w, u in time_kernel(shapes))
        return
    main(ns.n, min(ns.iterations, 5))                  # warm-up: page faults, MPI setup
    runs = [main(ns.n, ns.iterations) for _ in range(ns.repeat)]
    from mpi4py import MPI
    if MPI.COMM_WORLD.Get_rank() == 0:
        secs = sorted(r["seconds"] for r in runs)
        cpu = sorted(r["cpu_seconds"] for r in runs)
        print(json.dumps({"nprocs": MPI.COMM_WORLD.Get_size(), "n": ns.n,
                          "iterations": ns.iterations, "seconds": secs, "cpu_seconds": cpu,
                          "median": float(np.median(secs)), **{k: runs[0][k] for k in
                                                               ("px", "py", "residual")}}))


if __name__ == "__main__":
    _cli()
