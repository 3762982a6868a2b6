"""Reduction operations (mpi4py's ``MPI.Op``): ``SUM``, ``MAX``, ... and ``Op.Create``.

An ``Op`` is callable on two Python objects (``MPI.SUM(x, y)``) and reduces
numpy arrays elementwise.  Lowercase collectives fold the ranks' objects in
rank order (``op(op(x0, x1), x2)``...); MAXLOC/MINLOC take ``(value, index)``
pairs and break ties by the lower index, as MPI does.
"""

from __future__ import annotations

import inspect

import operator
from collections.abc import Callable
from functools import reduce
from typing import Any

import numpy as np

from ...constants import ERR_OP
from ...engine.rank import current_or_none
from ...errors import MPIUsageError
from ..common.handles import HandleValues
from ..data.buffers import parse_bufspec
from ..data.packing import PAIR_MEMBERS
from ..data.typemap import packed_index

__all__ = ["Op", "SUM", "PROD", "MAX", "MIN", "LAND", "LOR", "LXOR", "BAND", "BOR", "BXOR",
           "MAXLOC", "MINLOC", "REPLACE", "NO_OP", "OP_NULL", "fold", "check_op_type",
           "fold_in_layout"]


MAX_USER_OPS = 32   # live user-defined operations per rank (mpi4py's callback table)


def _takes_three(function: Callable[..., Any]) -> bool:
    """Whether *function* accepts three positional arguments (True when its signature
    cannot be read, as for some builtins: mpi4py calls it with three)."""
    try:
        inspect.signature(function).bind(None, None, None)
    except TypeError:
        return False
    except ValueError:
        return True
    return True


class Op(HandleValues):
    """A reduction operation: a name, a binary function and commutativity.

    Handles as mpi4py has them: ``Op()`` is null (equal to ``OP_NULL``, false);
    ``Op(op)`` another object for the same operation; the predefined operations pickle
    to themselves, copies of them to equal objects, a user operation to a new one
    built from the same (picklable) function.
    """

    __slots__ = ("name", "_fn", "_np", "commute", "_handle", "_user", "__weakref__")
    _handle_kind = "Op"
    name: str
    _fn: Callable[[Any, Any], Any]
    _np: Callable[[Any, Any], Any] | None
    commute: bool
    _handle: object                    # copies share it: equality follows it
    _user: tuple[Any, bool] | None     # (function, commute) of a user-defined operation

    def __init__(self, name: str | Op | None = None, fn: Callable[[Any, Any], Any] | None = None,
                 np_fn: Callable[[Any, Any], Any] | None = None, commute: bool = True) -> None:
        if name is None or isinstance(name, Op):
            other = name if name is not None else OP_NULL
            self.name, self._fn, self._np = other.name, other._fn, other._np
            self.commute, self._handle, self._user = other.commute, other._handle, other._user
            return
        if fn is None or not isinstance(name, str):
            raise TypeError(f"Op(): expected an Op, got {type(name).__name__}")
        self.name = name
        self._fn = fn
        self._np = np_fn
        self.commute = commute
        self._handle = self
        self._user = None

    @classmethod
    def Create(cls, function: Callable[..., Any], commute: bool = False) -> Op:
        """A user-defined operation: mpi4py's ``function(inbuf, inoutbuf, datatype)``
        (``datatype`` None for Python objects) or a plain ``function(x, y)`` (one whose
        signature cannot take three positional arguments); which one is decided from
        the signature, so a ``TypeError`` raised inside the function reaches the caller.

        At most ``MAX_USER_OPS`` (32) live at once per rank, as mpi4py's callback table
        (``RuntimeError`` beyond; ``Free`` releases one)."""
        three = _takes_three(function)

        def fn(x: Any, y: Any) -> Any:
            if not three:
                return function(x, y)
            if isinstance(y, np.ndarray):   # reduction of arrays: in place on a copy
                out = y.copy()
                result = function(x, out, None)
                return out if result is None else result
            return function(x, y, None)
        live = _live_user_ops()
        if len(live) >= MAX_USER_OPS:
            raise RuntimeError(f"cannot create more than {MAX_USER_OPS} user-defined "
                               f"operations at once (free some with Op.Free)")
        op = cls(getattr(function, "__name__", "user"), fn, None, commute)
        op._user = (function, commute)
        live.add(id(op._handle))
        return op

    @property
    def is_predefined(self) -> bool:
        """Whether this is one of MPI's predefined operations (``OP_NULL`` included)."""
        return self._user is None

    def _handle_identity(self) -> object | None:
        """What copies of this operation share (None for ``OP_NULL``)."""
        return self._handle if self else None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Op):
            return NotImplemented
        return self._handle is other._handle

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        """mpi4py's handles are unhashable."""
        raise TypeError(f"unhashable type: '{type(self).__name__}'")

    def __bool__(self) -> bool:
        return self._handle is not OP_NULL

    def free(self) -> None:
        """mpi4py's ``free``: nothing for the predefined objects and null handles, a copy of
        a predefined operation becomes null, a user operation is ``Free``d."""
        if self._user is not None:
            self.Free()
            return
        if self and self is not self._handle:   # a copy of a predefined operation
            Op.__init__(self, OP_NULL)

    def __reduce__(self) -> Any:
        if self._user is not None:
            if self is not self._handle:   # a copy holds the handle, not the function
                raise ValueError(f"cannot serialize {self!r}: a copy of a user-defined "
                                 f"operation (pickle the one Op.Create returned)")
            return (Op.Create, self._user)
        if self is self._handle:
            return self.name
        return (type(self), (self._handle,))

    def __call__(self, x: Any, y: Any) -> Any:
        """Apply the operation to two objects."""
        if not self:
            raise _null_op("Op.__call__")
        if self._np is not None and (isinstance(x, np.ndarray) or isinstance(y, np.ndarray)):
            return self._np(x, y)
        return self._fn(x, y)

    def Is_commutative(self) -> bool:
        """Whether the operation commutes (``ERR_OP`` for ``OP_NULL``, as MPICH)."""
        if not self:
            raise _null_op("Op.Is_commutative")
        return self.commute

    @property
    def is_commutative(self) -> bool:
        """Whether the operation commutes."""
        return self.Is_commutative()

    def Reduce_local(self, inbuf: Any, inoutbuf: Any) -> None:
        """``inoutbuf = op(inbuf, inoutbuf)`` elementwise, in place.

        Both are message buffers (``[buf, count, datatype]``, arrays, ...) of the same
        count and datatype (``ValueError`` otherwise, as mpi4py); a user operation gets
        ``function(inbuf memory, inoutbuf memory, datatype)`` as mpi4py calls it;
        ``ERR_OP`` for ``OP_NULL`` (a freed operation), as MPICH."""
        if not self:
            raise _null_op("Op.Reduce_local")
        src, dst = parse_bufspec(inbuf), parse_bufspec(inoutbuf)
        if src.count != dst.count or src.datatype != dst.datatype:
            raise ValueError(f"Reduce_local: mismatched buffers ({src.count} x "
                             f"{src.datatype.label} and {dst.count} x {dst.datatype.label})")
        check_op_type(self, dst.datatype, "Op.Reduce_local")
        if src.mem is None or dst.mem is None:
            return   # placeholders: no data
        if self._user is not None and not dst.datatype.layout.contiguous:   # gaps
            dst.mem[0:dst.mem.nbytes] = fold_in_layout(self, dst.datatype, dst.count,
                                                       [bytes(src.mem), bytes(dst.mem)])
            return
        if not isinstance(src.mem, memoryview) or not isinstance(dst.mem, memoryview):
            raise ValueError("Reduce_local: buffers must be contiguous")
        if self._user is not None:
            self._user[0](src.mem, dst.mem, dst.datatype)
            return
        dtype = element_dtype(dst.datatype)
        if dtype is None:
            raise ValueError(f"Reduce_local: no element type for {dst.datatype.label}")
        a = np.frombuffer(src.mem, dtype=dtype)
        b = np.frombuffer(dst.mem, dtype=dtype)
        b[...] = self(a, b)

    def Free(self) -> None:
        """Free a user-defined operation: this object becomes ``OP_NULL``; ``ERR_OP`` for
        a predefined one or ``OP_NULL`` (a freed one)."""
        if not self:
            raise _null_op("Op.Free")
        if self._user is None:
            raise _op_error("Op.Free", f"cannot free the predefined {self.name}")
        _live_user_ops().discard(id(self._handle))
        Op.__init__(self, OP_NULL)

    def __repr__(self) -> str:
        return f"<Op {self.name}>"


def element_dtype(datatype: Any) -> np.dtype | None:
    """The numpy type of one element of *datatype* in a reduction: its own, or for a pair
    type of MINLOC/MAXLOC (``DOUBLE_INT``, ``TWOINT``, ...) a record of its value ``v`` and
    int ``i`` as the packed bytes hold them (value, then int, no padding); None for others."""
    if datatype.dtype is not None:
        return np.dtype(datatype.dtype)
    members = PAIR_MEMBERS.get(datatype.label)
    if members is None:
        return None
    value, index = (np.dtype(m.dtype) for m in members)
    return np.dtype({"names": ["v", "i"], "formats": [value, index],
                     "offsets": [0, value.itemsize], "itemsize": value.itemsize + index.itemsize})


def _loc(better: Callable[[Any, Any], bool]) -> Callable[[Any, Any], Any]:
    """MINLOC/MAXLOC of ``(value, index)`` pairs: the better value, the smaller index on a
    tie (MPI 4.0 Sec. 6.9.4)."""
    def pick(x: Any, y: Any) -> Any:
        (vx, ix), (vy, iy) = x, y
        if better(vy, vx) or (vy == vx and iy < ix):
            return (vy, iy)
        return (vx, ix)
    return pick


def _loc_arrays(better: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """:func:`_loc` elementwise on arrays of :func:`element_dtype`'s pair records."""
    def pick(x: Any, y: Any) -> Any:
        take = better(y["v"], x["v"]) | ((y["v"] == x["v"]) & (y["i"] < x["i"]))
        out = np.array(x, copy=True)
        out[take] = y[take]
        return out
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
MAXLOC = Op("MAXLOC", _loc(operator.gt), _loc_arrays(np.greater))
MINLOC = Op("MINLOC", _loc(operator.lt), _loc_arrays(np.less))
REPLACE = Op("REPLACE", lambda x, y: y, lambda x, y: y, commute=False)
NO_OP = Op("NO_OP", lambda x, y: x, lambda x, y: x, commute=False)
OP_NULL = Op("OP_NULL", lambda x, y: x)
_LIVE_OUTSIDE: set[int] = set()   # live user operations made outside a run


def _live_user_ops() -> set[int]:
    """The calling rank's live user operations, kept by its run (``engine.user_state``):
    a run that ends with operations not freed leaves nothing behind for the next."""
    vr = current_or_none()
    if vr is None:
        return _LIVE_OUTSIDE
    table: dict[int, set[int]] = vr.engine.user_state.setdefault("bsim.mpi.user_ops", {})
    return table.setdefault(vr.rank, set())


def _op_error(call: str, what: str) -> MPIUsageError:
    """``ERR_OP`` for *call*, naming the calling rank (in a simulation)."""
    vr = current_or_none()
    who = f"rank {vr.rank}: " if vr is not None else ""
    return MPIUsageError(f"{who}{call}: {what}", error_class=ERR_OP)


def _null_op(call: str) -> MPIUsageError:
    """``ERR_OP`` for ``OP_NULL`` given to *call* (MPICH's "Null MPI_Op"; a user operation
    is ``OP_NULL`` once freed).  A ``ValueError``, as mpi4py raises where a Python-object
    reduction calls a freed operation."""
    return _op_error(call, "the operation is OP_NULL (a freed or null Op)")


def as_op(op: Any) -> Op:
    """An :class:`Op` from an ``Op`` or any Python callable ``f(x, y)``; ``ERR_OP`` for
    ``OP_NULL`` (a freed operation), naming the call that was given it."""
    if isinstance(op, Op):
        if not op:
            from ...engine.failures import called_from
            raise _null_op(f"{called_from()[0] or 'a reduction'}(op=OP_NULL)")
        return op
    if callable(op):
        return Op(getattr(op, "__name__", "callable"), op, None, False)
    raise TypeError(f"expected an MPI.Op or a callable, got {op!r}")


# MPI 4.0 Sec. 6.9.2's table of the predefined operations and the types they take, as
# MPICH 4 enforces it (measured: Allreduce of every predefined op on every predefined type
# under mpiexec -n 1).  MPICH counts MPI_CHAR as a C integer; MPI_WCHAR, MPI_CHARACTER,
# MPI_PACKED and every derived datatype (even a Dup or contiguous(1) of DOUBLE) take none.
_C_INTEGER = ("AINT CHAR COUNT INT INT8_T INT16_T INT32_T INT64_T LONG LONG_LONG OFFSET SHORT "
              "SIGNED_CHAR UINT8_T UINT16_T UINT32_T UINT64_T UNSIGNED UNSIGNED_CHAR "
              "UNSIGNED_LONG UNSIGNED_LONG_LONG UNSIGNED_SHORT")
_FORTRAN_INTEGER = "INTEGER INTEGER1 INTEGER2 INTEGER4 INTEGER8 INTEGER16"
_FLOATING = "DOUBLE DOUBLE_PRECISION FLOAT FLOAT16_T LONG_DOUBLE REAL REAL2 REAL4 REAL8 REAL16"
_COMPLEX = ("COMPLEX COMPLEX4 COMPLEX8 COMPLEX16 COMPLEX32 C_COMPLEX C_DOUBLE_COMPLEX "
            "C_LONG_DOUBLE_COMPLEX CXX_FLOAT_COMPLEX CXX_DOUBLE_COMPLEX "
            "CXX_LONG_DOUBLE_COMPLEX DOUBLE_COMPLEX")
_LOGICAL = "C_BOOL CXX_BOOL LOGICAL"
_PAIRS = "SHORT_INT INT_INT LONG_INT FLOAT_INT DOUBLE_INT LONG_DOUBLE_INT"
_OP_TYPES: dict[str, str] = {
    "SUM": " ".join((_C_INTEGER, _FORTRAN_INTEGER, _FLOATING, _COMPLEX)),
    "PROD": " ".join((_C_INTEGER, _FORTRAN_INTEGER, _FLOATING, _COMPLEX)),
    "MAX": " ".join((_C_INTEGER, _FORTRAN_INTEGER, _FLOATING)),
    "MIN": " ".join((_C_INTEGER, _FORTRAN_INTEGER, _FLOATING)),
    "LAND": " ".join((_C_INTEGER, _LOGICAL)),
    "LOR": " ".join((_C_INTEGER, _LOGICAL)),
    "LXOR": " ".join((_C_INTEGER, _LOGICAL)),
    "BAND": " ".join((_C_INTEGER, _FORTRAN_INTEGER, "BYTE")),
    "BOR": " ".join((_C_INTEGER, _FORTRAN_INTEGER, "BYTE")),
    "BXOR": " ".join((_C_INTEGER, _FORTRAN_INTEGER, "BYTE")),
    "MAXLOC": _PAIRS,
    "MINLOC": _PAIRS,
    "REPLACE": "",   # one-sided accumulates only
    "NO_OP": "",
}
_C_INTEGER_OPS = ("SUM", "PROD", "MAX", "MIN", "LAND", "LOR", "LXOR", "BAND", "BOR", "BXOR")
_OP_RECORDS: dict[str, set[int]] = {}   # op name -> ids of the records it takes (lazily)


def _takes(op: Op, datatype: Any) -> bool:
    """Whether the predefined *op* is defined on *datatype* (by its MPI datatype: aliases
    such as ``INT32_T`` and ``SINT32_T`` are one)."""
    if not _OP_RECORDS:
        from ..data.datatypes import PREDEFINED
        for name, types in _OP_TYPES.items():
            _OP_RECORDS[name] = {id(PREDEFINED[t]._rec) for t in types.split()
                                 if t in PREDEFINED and PREDEFINED[t]}
    return id(datatype._rec) in _OP_RECORDS.get(op.name, set())


def check_op_type(op: Op, datatype: Any, call: str, placeholder: bool = False) -> None:
    """``ERR_OP`` (MPICH's "Invalid MPI_Op") when the predefined *op* is not defined on
    *datatype* in a reduction *call*: MPI 4.0 Sec. 6.9.2's table (SUM on numbers, LOR on
    integers and logicals, MAXLOC on the pair types, ...); a derived datatype takes no
    predefined operation, REPLACE and NO_OP only one-sided accumulates.  User-defined
    operations take any datatype.  A *placeholder* of bytes (``bsim.Buffer(nbytes)``) is
    unsigned chars, as ``bsim.buffer(n)`` is under real MPI (a uint8 array).  (A report
    of the error adds the user's file:line.)"""
    if op._user is not None or not op or _takes(op, datatype):
        return
    if placeholder and datatype.label == "BYTE" and op.name in _C_INTEGER_OPS:
        return   # every other predefined operation takes UNSIGNED_CHAR
    vr = current_or_none()
    who = f"rank {vr.rank}: " if vr is not None else ""
    why = ("a derived datatype takes user-defined operations only"
           if not datatype._rec.predefined else
           "REPLACE and NO_OP are for one-sided accumulates only"
           if op.name in ("REPLACE", "NO_OP") else "not in MPI 4.0 Sec. 6.9.2's table")
    raise MPIUsageError(f"{who}{call}: invalid operation MPI.{op.name} on datatype "
                        f"{datatype.label} ({why})", error_class=ERR_OP)


def fold(op: Op, values: list[Any]) -> Any:
    """Reduce *values* (in rank order) with *op*."""
    return reduce(op, values)


def fold_in_layout(op: Op, datatype: Any, count: int, values: list[bytes]) -> bytes:
    """Reduce the members' packed bytes (rank order) with the user-defined *op* over
    *count* elements of a datatype with gaps (a padded struct, a resized type), calling
    ``function(inbuf, inoutbuf, datatype)`` as MPICH does: each buffer in the datatype's
    own layout, ``count x extent`` bytes (more if the type reaches past its extent), the
    gaps zero.  Returns the result's packed bytes."""
    from ..data.memory import buffer
    assert op._user is not None
    function = op._user[0]
    lay = datatype.layout
    index = packed_index(lay, count)
    base = min(0, lay.true_lb)
    index = index - base
    span = max(count * lay.extent - base, int(index.max()) + 1 if index.size else 0)

    def laid_out(raw: bytes) -> np.ndarray:
        mem = np.zeros(span, dtype=np.uint8)
        mem[index] = np.frombuffer(raw, dtype=np.uint8)
        return mem
    acc = laid_out(values[0])
    for raw in values[1:]:
        nxt = laid_out(raw)   # inoutbuf = inbuf op inoutbuf: acc op next
        function(buffer.frombuffer(acc), buffer.frombuffer(nxt), datatype)
        acc = nxt
    return acc[index].tobytes()
