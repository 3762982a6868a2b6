"""bsim: predict MPI application performance by simulating skeletons (the BSIM method).

    >>> import bsim
    >>> from bsim import MPI
    >>> def main():
    ...     comm = MPI.COMM_WORLD
    ...     if comm.rank == 0:
    ...         comm.send("hi", dest=1)
    ...     elif comm.rank == 1:
    ...         comm.recv(source=0)
    ...     bsim.add_time(1e-3)
    >>> result = bsim.simulate(main, ranks=2, network="hockney:latency=1e-6,bandwidth=1e9")

Skeletons replace compute with :func:`add_time` and large buffers with
:class:`Buffer` placeholders; :func:`simulate` runs them on virtual ranks over a
network model and returns a :class:`Result` with the calc / wait / comm
breakdown of every rank.
"""

from __future__ import annotations

from . import MPI
from .engine.rank import add_time
from .errors import (
    AddTimeError,
    BsimError,
    CollectiveMismatchError,
    DeadlockError,
    LivelockError,
    MPIUsageError,
    NotInSimulationError,
    RankError,
    SimulationError,
    SimulationLimitError,
    TruncationError,
)
from .mpi.data.buffers import Buffer, buffer, in_simulation
from .outputs.result import Result
from .simulate import simulate
from .version import __version__

__all__ = [
    "MPI", "simulate", "add_time", "Buffer", "buffer", "in_simulation", "Result",
    "BsimError", "MPIUsageError", "TruncationError", "AddTimeError", "CollectiveMismatchError",
    "SimulationError", "SimulationLimitError", "DeadlockError", "LivelockError", "RankError",
    "NotInSimulationError", "__version__",
]
