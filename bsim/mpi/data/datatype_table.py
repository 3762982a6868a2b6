"""The predefined MPI datatypes as mpi4py 4.1.2 on MPICH 4.x (x86-64 Linux) shows them.

Data, generated once from the real library (``mpiexec -n 1`` of a script that reads every
``MPI.Datatype`` of ``mpi4py.MPI``: ``Get_name()``, ``handle``, ``size``, ``lb``,
``extent``, ``true_lb``, ``true_extent``, ``typechar``, ``typestr``, ``tocode()``,
``MPI._typealign`` and the ``MPI._typedict*`` tables), and read by
``bsim/mpi/data/datatypes.py``.  Names in one row are one object in mpi4py (``FLOAT32_T is
FLOAT``); the names of ``NULL_ALIASES`` are datatypes this MPICH does not have (their
handle is ``MPI_DATATYPE_NULL``).  Handles are MPICH's (pair types' taken modulo 2**32).
"""

# ruff: noqa: E501  (generated rows, one datatype a line)
from __future__ import annotations

__all__ = ["PREDEFINED_TABLE", "NULL_ALIASES", "NULL_HANDLE", "PAIR_BLOCKS", "TYPEDICT",
           "TYPEDICT_C", "TYPEDICT_F"]

PREDEFINED_TABLE = (
    # name, aliases, MPI name, handle, size, lb, extent, true_lb, true_extent, typechar, typestr, code, align
    ('AINT', (), 'MPI_AINT', 1275070531, 8, 0, 8, 0, 8, 'p', 'i8', 'p', 8),
    ('BYTE', (), 'MPI_BYTE', 1275068685, 1, 0, 1, 0, 1, 'B', 'u1', 'B', 1),
    ('CHAR', (), 'MPI_CHAR', 1275068673, 1, 0, 1, 0, 1, 'c', 'S1', 'c', 1),
    ('CHARACTER', (), 'MPI_CHARACTER', 1275068698, 1, 0, 1, 0, 1, 'c', 'S1', 'c', 1),
    ('COMPLEX', ('F_COMPLEX', 'F_FLOAT_COMPLEX'), 'MPI_COMPLEX', 1275070494, 8, 0, 8, 0, 8, 'F', 'c8', 'F', 4),
    ('COMPLEX16', (), 'MPI_COMPLEX16', 1275072554, 16, 0, 16, 0, 16, 'D', 'c16', 'c16', 8),
    ('COMPLEX32', (), 'MPI_COMPLEX32', 1275076652, 32, 0, 32, 0, 32, 'G', 'c32', 'c32', 16),
    ('COMPLEX8', (), 'MPI_COMPLEX8', 1275070504, 8, 0, 8, 0, 8, 'F', 'c8', 'c8', 4),
    ('COUNT', (), 'MPI_COUNT', 1275070533, 8, 0, 8, 0, 8, 'p', 'i8', 'p', 8),
    ('CXX_BOOL', (), 'MPI_CXX_BOOL', 1275068723, 1, 0, 1, 0, 1, '?', 'b1', '?', 1),
    ('CXX_DOUBLE_COMPLEX', (), 'MPI_CXX_DOUBLE_COMPLEX', 1275072565, 16, 0, 16, 0, 16, 'D', 'c16', 'D', 8),
    ('CXX_FLOAT_COMPLEX', (), 'MPI_CXX_FLOAT_COMPLEX', 1275070516, 8, 0, 8, 0, 8, 'F', 'c8', 'F', 4),
    ('CXX_LONG_DOUBLE_COMPLEX', (), 'MPI_CXX_LONG_DOUBLE_COMPLEX', 1275076662, 32, 0, 32, 0, 32, 'G', 'c32', 'G', 16),
    ('C_BOOL', ('BOOL',), 'MPI_C_BOOL', 1275068735, 1, 0, 1, 0, 1, '?', 'b1', 'b1', 1),
    ('C_COMPLEX', ('C_FLOAT_COMPLEX',), 'MPI_C_COMPLEX', 1275070528, 8, 0, 8, 0, 8, 'F', 'c8', 'F', 4),
    ('C_DOUBLE_COMPLEX', (), 'MPI_C_DOUBLE_COMPLEX', 1275072577, 16, 0, 16, 0, 16, 'D', 'c16', 'D', 8),
    ('C_LONG_DOUBLE_COMPLEX', (), 'MPI_C_LONG_DOUBLE_COMPLEX', 1275076674, 32, 0, 32, 0, 32, 'G', 'c32', 'G', 16),
    ('DOUBLE', ('FLOAT64_T',), 'MPI_DOUBLE', 1275070475, 8, 0, 8, 0, 8, 'd', 'f8', 'd', 8),
    ('DOUBLE_COMPLEX', ('F_DOUBLE_COMPLEX',), 'MPI_DOUBLE_COMPLEX', 1275072546, 16, 0, 16, 0, 16, 'D', 'c16', 'D', 8),
    ('DOUBLE_INT', (), 'MPI_DOUBLE_INT', 2348810241, 12, 0, 16, 0, 12, 'V', 'V16', None, 8),
    ('DOUBLE_PRECISION', ('F_DOUBLE',), 'MPI_DOUBLE_PRECISION', 1275070495, 8, 0, 8, 0, 8, 'd', 'f8', 'd', 8),
    ('FLOAT', ('FLOAT32_T',), 'MPI_FLOAT', 1275069450, 4, 0, 4, 0, 4, 'f', 'f4', 'f', 4),
    ('FLOAT16_T', (), 'MPIX_C_FLOAT16', 1275068998, 2, 0, 2, 0, 2, 'e', 'f2', 'e', 2),
    ('FLOAT_INT', (), 'MPI_FLOAT_INT', 2348810240, 8, 0, 8, 0, 8, 'V', 'V8', None, 4),
    ('INT', ('SIGNED_INT',), 'MPI_INT', 1275069445, 4, 0, 4, 0, 4, 'i', 'i4', 'i', 4),
    ('INT16_T', ('SINT16_T',), 'MPI_INT16_T', 1275068984, 2, 0, 2, 0, 2, 'h', 'i2', 'i2', 2),
    ('INT32_T', ('SINT32_T',), 'MPI_INT32_T', 1275069497, 4, 0, 4, 0, 4, 'i', 'i4', 'i4', 4),
    ('INT64_T', ('SINT64_T',), 'MPI_INT64_T', 1275070522, 8, 0, 8, 0, 8, 'l', 'i8', 'i8', 8),
    ('INT8_T', ('SINT8_T',), 'MPI_INT8_T', 1275068727, 1, 0, 1, 0, 1, 'b', 'i1', 'i1', 1),
    ('INTEGER', ('F_INT',), 'MPI_INTEGER', 1275069467, 4, 0, 4, 0, 4, 'i', 'i4', 'i', 4),
    ('INTEGER1', (), 'MPI_INTEGER1', 1275068717, 1, 0, 1, 0, 1, 'b', 'i1', 'i1', 1),
    ('INTEGER2', (), 'MPI_INTEGER2', 1275068975, 2, 0, 2, 0, 2, 'h', 'i2', 'i2', 2),
    ('INTEGER4', (), 'MPI_INTEGER4', 1275069488, 4, 0, 4, 0, 4, 'i', 'i4', 'i4', 4),
    ('INTEGER8', (), 'MPI_INTEGER8', 1275070513, 8, 0, 8, 0, 8, 'l', 'i8', 'i8', 8),
    ('INT_INT', ('TWOINT',), 'MPI_2INT', 1275070486, 8, 0, 8, 0, 8, 'V', 'V8', None, 4),
    ('LOGICAL', ('F_BOOL',), 'MPI_LOGICAL', 1275069469, 4, 0, 4, 0, 4, 'i', 'i4', 'i', 4),
    ('LONG', ('SIGNED_LONG',), 'MPI_LONG', 1275070471, 8, 0, 8, 0, 8, 'l', 'i8', 'l', 8),
    ('LONG_DOUBLE', (), 'MPI_LONG_DOUBLE', 1275072524, 16, 0, 16, 0, 16, 'g', 'f16', 'g', 16),
    ('LONG_DOUBLE_INT', (), 'MPI_LONG_DOUBLE_INT', 2348810244, 20, 0, 32, 0, 20, 'V', 'V32', None, 16),
    ('LONG_INT', (), 'MPI_LONG_INT', 2348810242, 12, 0, 16, 0, 12, 'V', 'V16', None, 8),
    ('LONG_LONG', ('SIGNED_LONG_LONG',), 'MPI_LONG_LONG_INT', 1275070473, 8, 0, 8, 0, 8, 'q', 'i8', 'q', 8),
    ('OFFSET', (), 'MPI_OFFSET', 1275070532, 8, 0, 8, 0, 8, 'p', 'i8', 'p', 8),
    ('PACKED', (), 'MPI_PACKED', 1275068687, 1, 0, 1, 0, 1, 'B', 'u1', 'B', 1),
    ('REAL', ('F_FLOAT',), 'MPI_REAL', 1275069468, 4, 0, 4, 0, 4, 'f', 'f4', 'f', 4),
    ('REAL16', (), 'MPI_REAL16', 1275072555, 16, 0, 16, 0, 16, 'g', 'f16', 'f16', 16),
    ('REAL4', (), 'MPI_REAL4', 1275069479, 4, 0, 4, 0, 4, 'f', 'f4', 'f4', 4),
    ('REAL8', (), 'MPI_REAL8', 1275070505, 8, 0, 8, 0, 8, 'd', 'f8', 'f8', 8),
    ('SHORT', ('SIGNED_SHORT',), 'MPI_SHORT', 1275068931, 2, 0, 2, 0, 2, 'h', 'i2', 'h', 2),
    ('SHORT_INT', (), 'MPI_SHORT_INT', 2348810243, 6, 0, 8, 0, 8, 'V', 'V8', None, 4),
    ('SIGNED_CHAR', (), 'MPI_SIGNED_CHAR', 1275068696, 1, 0, 1, 0, 1, 'b', 'i1', 'b', 1),
    ('UINT16_T', (), 'MPI_UINT16_T', 1275068988, 2, 0, 2, 0, 2, 'H', 'u2', 'u2', 2),
    ('UINT32_T', (), 'MPI_UINT32_T', 1275069501, 4, 0, 4, 0, 4, 'I', 'u4', 'u4', 4),
    ('UINT64_T', (), 'MPI_UINT64_T', 1275070526, 8, 0, 8, 0, 8, 'L', 'u8', 'u8', 8),
    ('UINT8_T', (), 'MPI_UINT8_T', 1275068731, 1, 0, 1, 0, 1, 'B', 'u1', 'u1', 1),
    ('UNSIGNED', ('UNSIGNED_INT',), 'MPI_UNSIGNED', 1275069446, 4, 0, 4, 0, 4, 'I', 'u4', 'I', 4),
    ('UNSIGNED_CHAR', (), 'MPI_UNSIGNED_CHAR', 1275068674, 1, 0, 1, 0, 1, 'B', 'u1', 'B', 1),
    ('UNSIGNED_LONG', (), 'MPI_UNSIGNED_LONG', 1275070472, 8, 0, 8, 0, 8, 'L', 'u8', 'L', 8),
    ('UNSIGNED_LONG_LONG', (), 'MPI_UNSIGNED_LONG_LONG', 1275070489, 8, 0, 8, 0, 8, 'Q', 'u8', 'Q', 8),
    ('UNSIGNED_SHORT', (), 'MPI_UNSIGNED_SHORT', 1275068932, 2, 0, 2, 0, 2, 'H', 'u2', 'H', 2),
    ('WCHAR', (), 'MPI_WCHAR', 1275069454, 4, 0, 4, 0, 4, 'U', 'U1', 'U', 4),
)
"""One row per predefined datatype (the first name is the canonical one)."""

NULL_ALIASES = ('BFLOAT16_T', 'COMPLEX4', 'INTEGER16', 'LOGICAL1', 'LOGICAL16', 'LOGICAL2', 'LOGICAL4', 'LOGICAL8', 'REAL2')
NULL_HANDLE = 201326592

PAIR_BLOCKS: dict[str, tuple[tuple[int, int], ...]] = {
    # (offset, length) of the value and of the int of MINLOC/MAXLOC pair types (C layout)
    "SHORT_INT": ((0, 2), (4, 4)), "INT_INT": ((0, 4), (4, 4)), "LONG_INT": ((0, 8), (8, 4)),
    "FLOAT_INT": ((0, 4), (4, 4)), "DOUBLE_INT": ((0, 8), (8, 4)),
    "LONG_DOUBLE_INT": ((0, 16), (16, 4)),
}
"""Where the two members of a pair type lie (its extent pads to the larger alignment)."""

TYPEDICT: dict[str, str] = {
    '?': 'BOOL', 'b': 'SIGNED_CHAR', 'h': 'SHORT', 'i': 'INT', 'l': 'LONG', 'q': 'LONG_LONG',
    'B': 'UNSIGNED_CHAR', 'H': 'UNSIGNED_SHORT', 'I': 'UNSIGNED', 'L': 'UNSIGNED_LONG',
    'Q': 'UNSIGNED_LONG_LONG', 'e': 'FLOAT16_T', 'f': 'FLOAT', 'd': 'DOUBLE',
    'g': 'LONG_DOUBLE', 'Zf': 'C_COMPLEX', 'Zd': 'C_DOUBLE_COMPLEX', 'F': 'C_COMPLEX',
    'D': 'C_DOUBLE_COMPLEX', 'Zg': 'C_LONG_DOUBLE_COMPLEX', 'G': 'C_LONG_DOUBLE_COMPLEX',
    'i1': 'INT8_T', 'i2': 'INT16_T', 'i4': 'INT32_T', 'i8': 'INT64_T', 'f4': 'FLOAT',
    'f8': 'DOUBLE', 'f16': 'LONG_DOUBLE', 'c8': 'C_COMPLEX', 'c16': 'C_DOUBLE_COMPLEX',
    'c32': 'C_LONG_DOUBLE_COMPLEX', 'b1': 'BOOL', 'u1': 'UINT8_T', 'u2': 'UINT16_T',
    'u4': 'UINT32_T', 'u8': 'UINT64_T', 'f2': 'FLOAT16_T', 'n': 'COUNT', 'N': 'UNSIGNED_LONG',
    'p': 'AINT', 'P': 'UNSIGNED_LONG', 'c': 'CHAR', 'a': 'CHAR', 'S': 'CHAR', 'S1': 'CHAR',
    's': 'CHAR', '1s': 'CHAR', 'U': 'WCHAR', 'U1': 'WCHAR', 'u': 'UINT16_T', '1u': 'UINT16_T',
    'w': 'WCHAR', '1w': 'WCHAR', 'M': 'INT64_T', 'M8': 'INT64_T', 'm': 'INT64_T',
    'm8': 'INT64_T',
}

TYPEDICT_C: dict[str, str] = {
    '?': 'BOOL', 'b': 'SIGNED_CHAR', 'h': 'SHORT', 'i': 'INT', 'l': 'LONG', 'q': 'LONG_LONG',
    'B': 'UNSIGNED_CHAR', 'H': 'UNSIGNED_SHORT', 'I': 'UNSIGNED', 'L': 'UNSIGNED_LONG',
    'Q': 'UNSIGNED_LONG_LONG', 'f': 'FLOAT', 'd': 'DOUBLE', 'g': 'LONG_DOUBLE',
    'F': 'C_COMPLEX', 'D': 'C_DOUBLE_COMPLEX', 'G': 'C_LONG_DOUBLE_COMPLEX', 'b1': 'BOOL',
    'i1': 'INT8_T', 'i2': 'INT16_T', 'i4': 'INT32_T', 'i8': 'INT64_T', 'u1': 'UINT8_T',
    'u2': 'UINT16_T', 'u4': 'UINT32_T', 'u8': 'UINT64_T', 'f2': 'FLOAT16_T', 'f4': 'FLOAT',
    'c8': 'C_COMPLEX', 'f8': 'DOUBLE', 'c16': 'C_DOUBLE_COMPLEX', 'f16': 'LONG_DOUBLE',
    'c32': 'C_LONG_DOUBLE_COMPLEX',
}

TYPEDICT_F: dict[str, str] = {
    'l': 'F_BOOL', 'i': 'F_INT', 'r': 'F_FLOAT', 's': 'F_FLOAT', 'd': 'DOUBLE_PRECISION',
    'c': 'COMPLEX', 'z': 'DOUBLE_COMPLEX', 'i1': 'INTEGER1', 'i2': 'INTEGER2',
    'i4': 'INTEGER4', 'i8': 'INTEGER8', 'r4': 'REAL4', 'r8': 'REAL8', 'r16': 'REAL16',
    'c8': 'COMPLEX8', 'c16': 'COMPLEX16', 'c32': 'COMPLEX32',
}

