"""What every part of the MPI surface shares: handles, error codes, attributes, info.

* :mod:`.handles`, :mod:`.int_handles`: the MPI handle values of bsim's objects
  (``handle``, ``toint``/``fromint``, ``py2f``/``f2py``) and mpi4py's ``_sizeof``,
  ``_addressof``, ``_handleof``;
* :mod:`.attributes`: keyvals and cached attributes of communicators, datatypes and
  windows (MPI 4.1 Sec. 7.7);
* :mod:`.info`: info objects (MPI 4.1 Sec. 10);
* :mod:`.errhandlers`, :mod:`.error_codes`: error handlers, error classes, codes and
  strings (MPI 4.1 Secs. 9.3-9.5);
* :mod:`.namespace`: the integer constants of ``mpi4py.MPI`` and the stand-ins of what
  bsim does not simulate; :mod:`.rc`: ``mpi4py.rc``; :mod:`.initialization`:
  ``MPI.Init``, ``Init_thread``, ``Is_initialized`` and ``Query_thread`` per rank;
  :mod:`.integers`: scalar arguments converted as mpi4py converts them to C ``int``.

May import: nothing else of ``bsim.mpi`` (this is the bottom of the surface).
"""
