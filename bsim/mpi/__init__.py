"""The mpi4py-compatible surface: what ``bsim.MPI`` (and ``mpi4py.MPI`` in a run) offers.

Each call looks up the calling virtual rank and turns the MPI operation into
engine actions that move sizes, not data (``docs/architecture.md``):

* :mod:`~bsim.mpi.comm`: ``Comm`` / ``Intracomm`` / ``Cartcomm`` (identity; methods bound
  from the modules below);
* :mod:`~bsim.mpi.p2p`: point-to-point calls;
* :mod:`~bsim.mpi.collective_calls`, :mod:`~bsim.mpi.collective_exchanges`: collectives;
* :mod:`~bsim.mpi.management`: ``Dup``, ``Split``, ``Create``, groups of a comm;
* :mod:`~bsim.mpi.cartesian`, :mod:`~bsim.mpi.neighbor`: Cartesian topologies and
  their neighbourhood collectives;
* :mod:`~bsim.mpi.requests`, :mod:`~bsim.mpi.message`: requests, statuses and
  matched probes;
* :mod:`~bsim.mpi.groups`, :mod:`~bsim.mpi.datatypes`, :mod:`~bsim.mpi.ops`,
  :mod:`~bsim.mpi.buffers`: MPI's value types and buffer specifications.

The module-level names of ``mpi4py.MPI`` (``COMM_WORLD``, ``Wtime``, constants)
are in :mod:`bsim.MPI`.
"""
