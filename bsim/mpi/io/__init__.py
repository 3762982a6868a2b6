"""MPI-IO (MPI 4.1 Ch. 14): files, views, independent and collective data access.

* :mod:`.file`: ``MPI.File``: open, close, views, pointers, sizes;
* :mod:`.views`: file views (which bytes a rank's accesses reach);
* :mod:`.access`: the shared state of an open file and the independent reads and
  writes, with their time;
* :mod:`.collective`: collective and split-collective access, timed as ROMIO's
  two-phase I/O (``docs/io.md``).

May import: :mod:`bsim.mpi.common`, :mod:`bsim.mpi.data`, :mod:`bsim.mpi.requests`,
:mod:`bsim.mpi.management`.
"""
