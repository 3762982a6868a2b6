"""Reduction operations (mpi4py's ``MPI.Op``): ``SUM``, ``MAX``, ... and ``Op.Create``.

An ``Op`` is callable on two Python objects (``MPI.SUM(x, y)``) and reduces
numpy arrays elementwise.  Lowercase collectives fold the ranks' objects in
rank order (``op(op(x0, x1), x2)``...); MAXLOC/MINLOC take ``(value, index)``
pairs and break ties by the lower index, as MPI does.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from functools import reduce
from typing import Any

import numpy as np

from ..constants import ERR_OP
from ..errors import MPIUsageError

__all__ = ["Op", "SUM", "PROD", "MAX", "MIN", "LAND", "LOR", "LXOR", "BAND", "BOR", "BXOR",
           "MAXLOC", "MINLOC", "REPLACE", "NO_OP", "OP_NULL", "fold"]


class Op:
    """A reduction operation: a name, a binary function and commutativity."""

    __slots__ = ("name", "_fn", "_np", "commute")

    def __init__(self, name: str, fn: Callable[[Any, Any], Any],
                 np_fn: Callable[[Any, Any], Any] | None = None, commute: bool = True) -> None:
        self.name = name
        self._fn = fn
        self._np = np_fn
        self.commute = commute

    @classmethod
    def Create(cls, function: Callable[..., Any], commute: bool = False) -> Op:
        """A user-defined operation ``function(x, y)`` (or mpi4py's ``(inbuf, inoutbuf, dt)``)."""
        def fn(x: Any, y: Any) -> Any:
            try:
                return function(x, y)
            except TypeError:
                if isinstance(y, np.ndarray):  # buffer form: function(inbuf, inoutbuf, datatype)
                    out = y.copy()
                    function(x, out, None)
                    return out
                raise
        return cls(getattr(function, "__name__", "user"), fn, None, commute)

    def __call__(self, x: Any, y: Any) -> Any:
        """Apply the operation to two objects."""
        if self._np is not None and (isinstance(x, np.ndarray) or isinstance(y, np.ndarray)):
            return self._np(x, y)
        return self._fn(x, y)

    def Is_commutative(self) -> bool:
        """Whether the operation commutes."""
        return self.commute

    @property
    def is_commutative(self) -> bool:
        """Whether the operation commutes."""
        return self.commute

    def Reduce_local(self, inbuf: Any, inoutbuf: Any) -> None:
        """``inoutbuf = op(inbuf, inoutbuf)`` elementwise, in place."""
        a = np.asarray(inbuf)
        b = np.asarray(inoutbuf)
        b[...] = self(a, b)

    def Free(self) -> None:
        """Free a user-defined operation (a no-op); ``ERR_OP`` for a predefined one."""
        if any(self is op for op in _PREDEFINED_OPS):
            raise MPIUsageError(f"Op.Free(): cannot free the predefined {self.name}",
                                error_class=ERR_OP)

    def __repr__(self) -> str:
        return f"<Op {self.name}>"


def _loc(better: Callable[[Any, Any], bool]) -> Callable[[Any, Any], Any]:
    def pick(x: Any, y: Any) -> Any:
        (vx, ix), (vy, iy) = x, y
        if better(vy, vx) or (vy == vx and iy < ix):
            return (vy, iy)
        return (vx, ix)
    return pick


SUM = Op("SUM", operator.add, np.add)
PROD = Op("PROD", operator.mul, np.multiply)
MAX = Op("MAX", lambda x, y: y if y > x else x, np.maximum)
MIN = Op("MIN", lambda x, y: y if y < x else x, np.minimum)
LAND = Op("LAND", lambda x, y: bool(x) and bool(y), np.logical_and)
LOR = Op("LOR", lambda x, y: bool(x) or bool(y), np.logical_or)
LXOR = Op("LXOR", lambda x, y: bool(x) != bool(y), np.logical_xor)
BAND = Op("BAND", operator.and_, np.bitwise_and)
BOR = Op("BOR", operator.or_, np.bitwise_or)
BXOR = Op("BXOR", operator.xor, np.bitwise_xor)
MAXLOC = Op("MAXLOC", _loc(operator.gt))
MINLOC = Op("MINLOC", _loc(operator.lt))
REPLACE = Op("REPLACE", lambda x, y: y, lambda x, y: y, commute=False)
NO_OP = Op("NO_OP", lambda x, y: x, lambda x, y: x, commute=False)
OP_NULL = Op("OP_NULL", lambda x, y: x)
_PREDEFINED_OPS = (SUM, PROD, MAX, MIN, LAND, LOR, LXOR, BAND, BOR, BXOR, MAXLOC, MINLOC,
                   REPLACE, NO_OP, OP_NULL)


def as_op(op: Any) -> Op:
    """An :class:`Op` from an ``Op`` or any Python callable ``f(x, y)``."""
    if isinstance(op, Op):
        return op
    if callable(op):
        return Op(getattr(op, "__name__", "callable"), op, None, False)
    raise TypeError(f"expected an MPI.Op or a callable, got {op!r}")


def fold(op: Op, values: list[Any]) -> Any:
    """Reduce *values* (in rank order) with *op*."""
    return reduce(op, values)
