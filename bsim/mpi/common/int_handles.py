"""Integer handles for handle classes that are one int (error handlers, info objects).

mpi4py's handle objects offer ``handle``, ``toint``/``fromint``, ``py2f``/``f2py`` and
``fromhandle``; for a class whose state is one integer id (``_id``; 0 the null handle), the
id is that handle, and ``fromint`` makes another object for the same handle, equal to it.
"""

from __future__ import annotations

from typing import TypeVar

__all__ = ["IntHandle"]

H = TypeVar("H", bound="IntHandle")


class IntHandle:
    """``handle``, ``toint``/``fromint``, ``py2f``/``f2py``, ``fromhandle`` over ``_id``."""

    __slots__ = ()
    _id: int

    @property
    def handle(self) -> int:
        """The handle value."""
        return self._id

    def toint(self) -> int:
        """The handle as an int (``fromint`` gives it back)."""
        return self._id

    py2f = toint

    @classmethod
    def fromint(cls: type[H], arg: int) -> H:
        """Another object for handle *arg* (equal to the one ``toint`` came from)."""
        out = cls()
        out._id = int(arg)
        return out

    f2py = fromhandle = fromint
