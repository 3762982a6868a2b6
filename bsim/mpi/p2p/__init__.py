"""Point-to-point communication (MPI 4.1 Chs. 3 and 4).

* :mod:`.calls`: ``Send``/``Recv`` and their modes, nonblocking forms,
  ``Probe``/``Iprobe``, ``Mprobe``/``Improbe``, and the lowercase (pickled) forms;
* :mod:`.persistent`: ``Send_init``, ``Ssend_init``, ``Rsend_init``, ``Recv_init``;
* :mod:`.sendrecv`: ``Isendrecv``, ``Isendrecv_replace``;
* :mod:`.message`: ``MPI.Message`` of matched probes;
* :mod:`.bsend`: buffered mode and attached buffers;
* :mod:`.partitioned`: ``Psend_init``/``Precv_init`` and their partitions.

May import: :mod:`bsim.mpi.common`, :mod:`bsim.mpi.data`, :mod:`bsim.mpi.requests`.
"""
