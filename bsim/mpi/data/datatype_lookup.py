"""mpi4py's private datatype helpers: ``MPI._typedict*``, ``MPI._typecode``, ``MPI._typealign``.

``mpi4py.util.dtlib`` (numpy dtype <-> MPI datatype) calls them; their tables are those of
mpi4py 4.1.2 on MPICH (``bsim/mpi/data/datatype_table.py``).
"""

from __future__ import annotations

from .datatype_introspection import typealign_of, typecode_of
from .datatype_table import TYPEDICT, TYPEDICT_C, TYPEDICT_F
from .datatypes import PREDEFINED, Datatype

__all__ = ["_typedict", "_typedict_c", "_typedict_f", "_typecode", "_typealign"]

_typedict = {code: PREDEFINED[name] for code, name in TYPEDICT.items()}
_typedict_c = {code: PREDEFINED[name] for code, name in TYPEDICT_C.items()}
_typedict_f = {code: PREDEFINED[name] for code, name in TYPEDICT_F.items()}


def _typecode(datatype: Datatype) -> str | None:
    """The character code or type string of a predefined datatype, else None."""
    return typecode_of(datatype._rec)


def _typealign(datatype: Datatype) -> int | None:
    """The alignment of a predefined datatype, else None."""
    return typealign_of(datatype._rec)
