"""The communicator classes: ``Comm``, ``Intracomm``, ``Intercomm``, ``Topocomm``,
``Cartcomm``, ``Graphcomm``, ``Distgraphcomm`` and the predefined communicators.

* :mod:`.comm`: the classes (identity, rank and size, error handlers, attributes);
* :mod:`.methods`: their MPI calls, bound from the packages that implement them
  (``Comm.Isend = p2p.Isend``);
* :mod:`.python_api`: mpi4py's Python-level properties and pickling of communicators;
* :mod:`.fault_tolerance`: the ULFM calls (``Revoke``, ``Agree``, ``Shrink``, ...).

This is where the families meet, so it sits above them.

May import: :mod:`bsim.mpi.common`, :mod:`bsim.mpi.data`, :mod:`bsim.mpi.requests`,
:mod:`bsim.mpi.p2p`, :mod:`bsim.mpi.collectives`, :mod:`bsim.mpi.management`,
:mod:`bsim.mpi.topologies`, :mod:`bsim.mpi.dynamic`.
"""
