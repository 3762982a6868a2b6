"""Groups and the making of communicators (MPI 4.1 Secs. 7.3-7.6).

* :mod:`.groups`: ``MPI.Group``, ordered sets of world ranks;
* :mod:`.communicators`: ``Dup``, ``Split``, ``Split_type``, ``Create``,
  ``Create_group``, ``Create_from_group``, ``Compare``, ``Free``, ``Abort``, a
  communicator's group and info;
* :mod:`.intercomm`: intercommunicators: their two sides, ``Create_intercomm``,
  ``Merge`` and their own ``Dup``/``Split``/``Create``;
* :mod:`.hints`: a communicator's info hints, as MPICH keeps them.

The communicator classes themselves are :mod:`bsim.mpi.comms`, above this package: it
makes new communicators of the class of the one a call is made on.

May import: :mod:`bsim.mpi.common`, :mod:`bsim.mpi.data`, :mod:`bsim.mpi.requests`,
:mod:`bsim.mpi.collectives`.
"""
