"""Repeat a timed MPI operation until its median is known well enough.

The leader (rank 0 of the communicator that measures) owns the samples and
the stopping decision (:class:`~bsim.calibration.stats.Repetitions`); after
every batch it broadcasts "go on" or "stop", so every rank runs the same
number of samples and nobody waits for a message that never comes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .stats import Repetitions

__all__ = ["repeat", "choose_inner", "mpi_library"]


def repeat(comm: Any, sample: Callable[[], float], rule: Repetitions,
           combine: str = "leader") -> list[float]:
    """Samples of *sample()* on *comm* per *rule*; the list is complete on rank 0 only.

    ``combine="leader"`` keeps rank 0's own timings (ping-pong: the leader
    times the round trip); ``"max"`` takes, sample by sample, the maximum over
    the ranks (collectives: the operation ends when its slowest rank does).
    """
    from mpi4py import MPI
    for _ in range(rule.warmup):
        sample()
    samples: list[float] = []
    start = MPI.Wtime()
    while True:
        batch = np.array([sample() for _ in range(rule.batch)], dtype=float)
        if combine == "max" and comm.Get_size() > 1:
            out = np.empty_like(batch)
            comm.Reduce(batch, out, op=MPI.MAX, root=0)
            batch = out
        done = False
        if comm.Get_rank() == 0:
            samples.extend(batch.tolist())
            done = rule.done(samples, MPI.Wtime() - start)
        if comm.bcast(done, root=0):
            return samples


def choose_inner(comm: Any, once: Callable[[], float], min_sample: float,
                 limit: int = 1000) -> int:
    """How many operations one sample should time so that it lasts >= *min_sample* seconds.

    *once()* times a single operation (all ranks call it); rank 0's median of
    three decides and the count is broadcast.
    """
    times = sorted(once() for _ in range(3))
    inner = 1
    if comm.Get_rank() == 0 and times[1] > 0:
        inner = int(min(max(math.ceil(min_sample / times[1]), 1), limit))
    return int(comm.bcast(inner, root=0))


def mpi_library() -> str:
    """First line of ``MPI.Get_library_version()`` (e.g. ``MPICH Version: 5.0.2``)."""
    from mpi4py import MPI
    first = MPI.Get_library_version().strip().splitlines()[0]
    return " ".join(first.split())
