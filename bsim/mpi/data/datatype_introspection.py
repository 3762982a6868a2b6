"""Decoding datatypes: envelope, contents, ``decode`` and the typecodes (MPI 4.1, 5.1.13).

:class:`DatatypeIntrospection` is mixed into :class:`bsim.mpi.data.datatypes.Datatype`.
``Get_envelope``/``Get_contents`` return what the constructor recorded
(``bsim/mpi/data/datatype_constructors.py``), in MPI's large-count form as MPICH gives it
to mpi4py 4.1.2; ``decode`` turns that into mpi4py's ``(base, combiner name, keyword
arguments)``, the arguments the constructor takes again.  ``typechar``, ``typestr`` and
``tocode`` follow mpi4py's ``typestr.pxi`` (predefined datatypes from the generated table,
duplicates see through to their base, Fortran 90 kinds by size, others ``"V"`` and
``"V<extent>"``).  Pure queries: no simulated time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from ...constants import ERR_ARG
from .datatype_records import (
    COMBINER,
    COMBINER_NAMES,
    NULL_REC,
    DatatypeBase,
    TypeRecord,
    type_error,
)

if TYPE_CHECKING:
    from .datatypes import Datatype

__all__ = ["DatatypeIntrospection", "typecode_of", "typealign_of"]

_DUP, _NAMED = COMBINER["DUP"], COMBINER["NAMED"]
_F90 = {COMBINER["F90_INTEGER"], COMBINER["F90_REAL"], COMBINER["F90_COMPLEX"]}


def _through_dups(rec: TypeRecord) -> TypeRecord:
    while rec.combiner == _DUP:
        rec = rec.types[0]
    return rec


def typecode_of(rec: TypeRecord) -> str | None:
    """mpi4py's ``DatatypeCode``: the typecode of a predefined (or duplicated) datatype."""
    if rec is NULL_REC:
        return None
    rec = _through_dups(rec)
    return rec.code if (rec.combiner == _NAMED or rec.combiner in _F90) else None


def typealign_of(rec: TypeRecord) -> int | None:
    """mpi4py's ``MPI._typealign``: the alignment of a predefined datatype, else None."""
    if rec is NULL_REC:
        return None
    rec = _through_dups(rec)
    if rec.combiner == _NAMED or rec.combiner in _F90:
        return rec.align or None
    return None


class DatatypeIntrospection(DatatypeBase):
    """Envelope, contents, ``decode``, combiner predicates and typecodes."""

    __slots__ = ()
    _null: ClassVar[Any]


    def Get_envelope(self) -> tuple[int, int, int, int, int]:
        """``(ni, na, nc, nd, combiner)``: how many integers, addresses, large counts
        and datatypes made this datatype, and its combiner (``COMBINER_*``)."""
        return self._live("Get_envelope").envelope()

    envelope = property(Get_envelope, doc="``Get_envelope()``")

    def Get_contents(self) -> tuple[list[int], list[int], list[int], list[Datatype]]:
        """The integers, addresses, large counts and datatypes that made this datatype
        (``ERR_ARG`` for a named one); the datatypes are new handles."""
        rec = self._live("Get_contents")
        if rec.combiner == _NAMED:
            raise type_error("Get_contents", f"{rec.label} is a named datatype", ERR_ARG)
        plain = type(self._null)   # Datatype itself: contents are plain new handles
        return (list(rec.ints), list(rec.addrs), list(rec.counts),
                [plain._wrap(t) for t in rec.types])

    contents = property(Get_contents, doc="``Get_contents()``")

    @property
    def combiner(self) -> int:
        """The combiner (``COMBINER_NAMED`` for a predefined datatype)."""
        return self._live("combiner").combiner

    @property
    def is_named(self) -> bool:
        """Whether this is a named (predefined) datatype."""
        return self.combiner == _NAMED

    @property
    def is_predefined(self) -> bool:
        """Named, value-index or Fortran 90 kind (``DATATYPE_NULL`` too, as in mpi4py)."""
        rec = self._rec
        return rec is NULL_REC or rec.predefined

    def decode(self) -> tuple[Any, str, dict[str, Any]]:
        """``(base datatype, combiner name, constructor keyword arguments)``."""
        rec = self._live("decode")
        name = COMBINER_NAMES[rec.combiner]
        if rec.combiner == _NAMED:
            return self, name, {}
        plain = type(self._null)   # Datatype itself: new handles of the old datatypes
        types = [plain._wrap(t) for t in rec.types]
        base = types[0] if len(types) == 1 else self._null
        params = rec.params   # the record never changes: its arguments are decoded once
        if params is None:
            params = rec.params = _params(rec, types)
        params = dict(params)   # a new dict (its lists are shared: read them, not modify)
        if "datatypes" in params:
            params["datatypes"] = types
        elif "value" in params:
            params["value"], params["index"] = types
        return base, name, params

    @property
    def typechar(self) -> str:
        """One-character typecode (``""`` for null, ``"V"`` for a derived datatype)."""
        rec = self._rec
        if rec is NULL_REC:
            return ""
        rec = _through_dups(rec)
        return rec.typechar or "V"

    @property
    def typestr(self) -> str:
        """numpy type string (``""`` for null, ``"V<extent>"`` for a derived datatype)."""
        rec = self._rec
        if rec is NULL_REC:
            return ""
        inner = _through_dups(rec)
        return inner.typestr if inner.typestr else f"V{self.extent}"

    def tocode(self) -> str:
        """The typecode of a predefined datatype (``ValueError`` for the others)."""
        code = typecode_of(self._rec)
        if code is None:
            raise ValueError("cannot map to character code or type string")
        return code


def _params(rec: TypeRecord, types: list[Any]) -> dict[str, Any]:
    """mpi4py's ``datatype_decode`` keyword arguments from the large-count contents."""
    kind, i, c = COMBINER_NAMES[rec.combiner], list(rec.ints), list(rec.counts)
    n = c[0] if c else 0
    if kind == "CONTIGUOUS":
        return {"count": c[0]}
    if kind in ("VECTOR", "HVECTOR"):
        return {"count": c[0], "blocklength": c[1], "stride": c[2]}
    if kind in ("INDEXED", "HINDEXED"):
        return {"blocklengths": c[1:n + 1], "displacements": c[n + 1:2 * n + 1]}
    if kind in ("INDEXED_BLOCK", "HINDEXED_BLOCK"):
        return {"blocklength": c[1], "displacements": c[2:n + 2]}
    if kind == "STRUCT":
        return {"blocklengths": c[1:n + 1], "displacements": c[n + 1:2 * n + 1],
                "datatypes": types}
    if kind == "SUBARRAY":
        nd = i[0]
        return {"sizes": c[:nd], "subsizes": c[nd:2 * nd], "starts": c[2 * nd:3 * nd],
                "order": i[1]}
    if kind == "DARRAY":
        nd = i[2]
        return {"size": i[0], "rank": i[1], "gsizes": c[:nd], "distribs": i[3:3 + nd],
                "dargs": i[3 + nd:3 + 2 * nd], "psizes": i[3 + 2 * nd:3 + 3 * nd],
                "order": i[3 + 3 * nd]}
    if kind == "RESIZED":
        return {"lb": c[0], "extent": c[1]}
    if kind == "VALUE_INDEX":
        return {"value": types[0], "index": types[1]}
    if kind == "F90_INTEGER":
        return {"r": i[0]}
    if kind in ("F90_REAL", "F90_COMPLEX"):
        return {"p": i[0], "r": i[1]}
    return {}   # DUP
