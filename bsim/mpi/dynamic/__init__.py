"""Processes that join a run while it runs, and sessions (MPI 4.1 Ch. 11).

* :mod:`.connect`: ports, the name service, ``Accept``/``Connect``, ``Join``,
  ``Disconnect``;
* :mod:`.spawn`: ``Spawn``, ``Spawn_multiple``, ``Get_parent`` (new virtual ranks,
  ``bsim/engine/spawning.py``);
* :mod:`.sessions`: ``MPI.Session`` and its process sets.

May import: :mod:`bsim.mpi.common`, :mod:`bsim.mpi.data`, :mod:`bsim.mpi.requests`,
:mod:`bsim.mpi.p2p`, :mod:`bsim.mpi.collectives`, :mod:`bsim.mpi.management`.
"""
