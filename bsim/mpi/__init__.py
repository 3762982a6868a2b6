"""The mpi4py-compatible surface: what ``bsim.MPI`` (and ``mpi4py.MPI`` in a run) offers.

Each call looks up the calling virtual rank and turns the MPI operation into
engine actions that move sizes, not data (``docs/architecture.md``).  The surface is
in subpackages by concept, each above the ones it may import (its docstring says which):

* :mod:`~bsim.mpi.common`: handles, attributes, info, error handlers and error codes,
  the namespace's constants and stand-ins;
* :mod:`~bsim.mpi.data`: datatypes, buffer specifications, memory, pickling;
* :mod:`~bsim.mpi.requests`: requests and statuses;
* :mod:`~bsim.mpi.p2p`: point-to-point calls, matched probes, buffered and partitioned
  communication;
* :mod:`~bsim.mpi.collectives`: collectives, reduction operations, their intercommunicator
  forms;
* :mod:`~bsim.mpi.management`: groups and the making of communicators, intercommunicators;
* :mod:`~bsim.mpi.topologies`: Cartesian and graph topologies, neighbourhood collectives;
* :mod:`~bsim.mpi.dynamic`: ports, spawned processes, sessions;
* :mod:`~bsim.mpi.io`: MPI-IO files;
* :mod:`~bsim.mpi.comms`: the communicator classes, whose methods are bound from the
  packages above;
* :mod:`~bsim.mpi.onesided`: RMA windows.

Every subpackage may also import what lies below the surface: ``bsim.engine``,
``bsim.constants``, ``bsim.errors`` and ``bsim.version``.  At this level are only the two
modules about the namespace as a whole: :mod:`~bsim.mpi.handle_constants` (MPICH's handle
values of the predefined objects) and :mod:`~bsim.mpi.coverage` (which names of mpi4py's
API are simulated: ``python -m bsim.mpi.coverage``).  The module-level names of
``mpi4py.MPI`` (``COMM_WORLD``, ``Wtime``, constants) are in :mod:`bsim.MPI`.
"""
