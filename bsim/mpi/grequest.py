"""``MPI.Grequest``: generalized requests are not simulated, but their null handles are.

mpi4py's ``Grequest`` is a ``Request``: ``Grequest(MPI.REQUEST_NULL)`` and a program's
subclasses of it are null requests (complete, falsy, equal to ``REQUEST_NULL``), as under
mpi4py; ``Grequest.Start`` and ``Complete`` raise :class:`NotSimulatedError` (the class
is a stand-in for the coverage page).
"""

from __future__ import annotations

from typing import Any

from .namespace import _Unsimulated, not_simulated
from .requests import Request

__all__ = ["Grequest"]


class Grequest(Request, metaclass=_Unsimulated):
    """mpi4py's generalized request: only its null handles exist in bsim."""

    __slots__ = ()

    def Complete(self) -> None:
        """Not simulated."""
        not_simulated("Grequest.Complete", "Grequest")

    complete = Complete

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        not_simulated(f"Grequest.{attr}", "Grequest")
