"""Integer arguments as mpi4py converts them to C ``int``.

mpi4py converts a scalar argument (``dest``, ``source``, ``tag``, ``root``, Split's
``color`` and ``key``, a ``Range_incl`` triple) with Cython's C-int conversion, which
takes a Python float too: ``comm.bcast(x, root=size / 2)`` runs under MPICH.  A float
with an integral value (``size / 2 == 2.0``, the usual case in programs written for
Python 2's division) is that int here as well; a float with a fraction (``1.5``), which
mpi4py would silently truncate, is left as it is for the caller to refuse in one line.
Sequences (``Incl``'s ranks, ``Create_cart``'s dims) are not converted: mpi4py refuses
floats there too.
"""

from __future__ import annotations

import operator
from typing import Any

__all__ = ["integral"]


def integral(value: Any) -> Any:
    """*value* as a Python int when it is an int, a numpy int or a float with an integral
    value; else *value* unchanged."""
    if value.__class__ is int:
        return value
    if isinstance(value, bool):
        return value
    try:
        return operator.index(value)
    except TypeError:
        pass
    if isinstance(value, float) or type(value).__module__ == "numpy" and \
            hasattr(value, "is_integer"):
        try:
            if value.is_integer():
                return int(value)
        except (AttributeError, TypeError, ValueError):
            return value
    return value
