"""One-sided communication (MPI 4.1 Ch. 12): RMA windows, their operations and epochs.

* :mod:`.window`: ``MPI.Win``: creation, memory, attributes;
* :mod:`.operations`: ``Put``, ``Get``, the accumulates and their request forms, and
  the window state every member shares;
* :mod:`.synchronization`: fences, locks, flushes, post-start-complete-wait;
* :mod:`.transfer`: how the bytes of one operation cross the network (``docs/rma.md``).

May import: :mod:`bsim.mpi.common`, :mod:`bsim.mpi.data`, :mod:`bsim.mpi.requests`,
:mod:`bsim.mpi.collectives`, :mod:`bsim.mpi.management`, :mod:`bsim.mpi.comms`.
"""
