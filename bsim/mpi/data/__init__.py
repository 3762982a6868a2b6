"""What a message is made of: datatypes, buffer specifications, memory, pickled objects.

* :mod:`.datatypes` (``MPI.Datatype``) with its records (:mod:`.datatype_records`), the
  predefined table (:mod:`.datatype_table`), the constructors
  (:mod:`.datatype_constructors`), decoding (:mod:`.datatype_introspection`), mpi4py's
  private lookups (:mod:`.datatype_lookup`), the layout (:mod:`.typemap`) and
  ``Pack``/``Unpack`` (:mod:`.packing`) (MPI 4.1 Ch. 5);
* :mod:`.buffers`: buffer specifications reduced to bytes (what an uppercase call is
  given); :mod:`.foreign`: DLPack and CUDA-array-interface buffers; :mod:`.memory`:
  ``MPI.buffer``; :mod:`.addresses`: ``Get_address``, ``Aint_add``, ``Aint_diff``;
* :mod:`.pickling`: how lowercase calls pickle objects (``MPI.pickle``) and the
  internals ``mpi4py.util`` calls.

May import: :mod:`bsim.mpi.common`.
"""
