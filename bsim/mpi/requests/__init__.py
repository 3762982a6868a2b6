"""Requests and statuses: how nonblocking operations of every kind complete.

* :mod:`.request`: ``MPI.Request`` and ``MPI.Prequest`` (the times ``avail``, ``cost``,
  ``partner`` that drive the waiting rule, ``docs/protocols.md``), ``Wait``/``Test`` and
  ``Waitall``/``Waitany``/``Testall``/``Testany``;
* :mod:`.multiple_completions`: ``Waitsome``/``Testsome`` and the status lists of the
  calls over request lists (MPI 4.1 Sec. 3.7.5);
* :mod:`.status`: ``MPI.Status``;
* :mod:`.generalized`: ``MPI.Grequest`` (MPI 4.1 Sec. 13.2).

The engine knows requests only through ``bsim/engine/surface.py``.

May import: :mod:`bsim.mpi.common`, :mod:`bsim.mpi.data`.
"""
