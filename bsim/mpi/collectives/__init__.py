"""Collective communication on intra- and intercommunicators (MPI 4.1 Ch. 6).

* :mod:`.calls`: barrier, broadcast, reductions and scans, and the plumbing every
  collective shares (``take_part``, ``leave``, the nonblocking request);
* :mod:`.exchanges`: gather, scatter, allgather, alltoall (all forms);
* :mod:`.persistent`: the ``X_init`` forms;
* :mod:`.ops`: ``MPI.Op``, the reduction operations (MPI 4.1 Sec. 6.9);
* :mod:`.block_checks`: the size check of collectives that move blocks;
* :mod:`.intercomm`, :mod:`.intercomm_buffers`: collectives on intercommunicators, the
  object forms and plumbing, and the buffer forms.

The algorithms and their cost are the engine's (``bsim.engine.collective_rules``,
``netmodels.collective_costs``); this package turns mpi4py's calls into them.

May import: :mod:`bsim.mpi.common`, :mod:`bsim.mpi.data`, :mod:`bsim.mpi.requests`.
"""
