"""Process topologies and their neighbourhood collectives (MPI 4.1 Ch. 8).

* :mod:`.cartesian`: ``Create_cart`` and ``Cartcomm``'s calls;
* :mod:`.graphs`: graph and distributed-graph topologies, ``Cart_map``/``Graph_map``, and
  what every topology has (its neighbours: :func:`~.graphs.routes`);
* :mod:`.neighbor`: the exchange every neighbourhood collective shares and the
  lowercase forms; :mod:`.neighbor_buffers`: the buffer forms (blocking, nonblocking,
  persistent).

May import: :mod:`bsim.mpi.common`, :mod:`bsim.mpi.data`, :mod:`bsim.mpi.requests`,
:mod:`bsim.mpi.p2p`, :mod:`bsim.mpi.collectives`, :mod:`bsim.mpi.management`.
"""
