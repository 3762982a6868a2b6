"""File views (MPI 4.0 Sec. 14.3): which bytes of a file a rank's reads and writes reach.

A view is ``(disp, etype, filetype, datarep)``: the filetype is tiled from byte
``disp`` on, copy ``k`` at ``disp + k * extent(filetype)``, and the data a rank sees is
the bytes of the filetype's blocks (its typemap, in order) of copy 0, then copy 1, ...
An offset in a call is in etypes of that data stream: offset ``o`` is stream byte
``o * size(etype)``.  :meth:`View.segments` turns a stream range into file byte
ranges; the default view is ``(0, BYTE, BYTE, "native")``, the file as bytes.

Only the ``"native"`` representation (and ``"internal"``, which MPICH stores as native)
moves data: ``"external32"`` would convert every element to big-endian and is not
simulated.  ``MPI.Register_datarep`` registers a representation for the calling rank (a
name defined twice is ``ERR_DUP_DATAREP``), but as with MPICH's ROMIO a view cannot use
it (``ERR_UNSUPPORTED_DATAREP``).
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

from ...errors import MPIUsageError
from ..common.namespace import INT_CONSTANTS, NotSimulatedError
from ..data.datatypes import Datatype
from ..data.typemap import MAX_BLOCKS

__all__ = ["View", "DEFAULT_DATAREP", "make_view", "Register_datarep", "type_extent"]

DEFAULT_DATAREP = "native"
_ERR_TYPE = INT_CONSTANTS["ERR_TYPE"]
_ERR_ARG = INT_CONSTANTS["ERR_ARG"]
_ERR_DATAREP = INT_CONSTANTS["ERR_UNSUPPORTED_DATAREP"]
_ERR_DUP_DATAREP = INT_CONSTANTS["ERR_DUP_DATAREP"]
_STATE = "bsim.datareps"
DISPLACEMENT_CURRENT = INT_CONSTANTS["DISPLACEMENT_CURRENT"]


class View:
    """One rank's view of a file: displacement, etype, filetype, data representation."""

    __slots__ = ("disp", "etype", "filetype", "datarep", "_starts", "_blocks", "_tile",
                 "_extent", "_dense")

    def __init__(self, disp: int, etype: Datatype, filetype: Datatype,
                 datarep: str = DEFAULT_DATAREP) -> None:
        self.disp, self.etype, self.filetype, self.datarep = disp, etype, filetype, datarep
        layout = filetype.layout
        self._blocks = layout.blocks
        self._tile = layout.size          # data bytes per filetype copy
        self._extent = layout.extent
        starts, acc = [], 0
        for _, n in self._blocks:
            starts.append(acc)
            acc += n
        self._starts = starts             # stream offset of each block within a copy
        self._dense = layout.contiguous   # the file's bytes in order: one range

    @property
    def esize(self) -> int:
        """Bytes of one etype."""
        return self.etype.size

    def segments(self, start: int, nbytes: int) -> list[tuple[int, int]]:
        """File byte ranges ``(offset, length)`` of stream bytes ``start .. start+nbytes``."""
        if nbytes <= 0:
            return []
        if self._dense:
            return [(self.disp + start, nbytes)]
        out: list[tuple[int, int]] = []
        tile, blocks, starts = self._tile, self._blocks, self._starts
        if (nbytes // tile + 2) * len(blocks) > MAX_BLOCKS:
            raise ValueError(f"an access of {nbytes:,} bytes through filetype "
                             f"{self.filetype.name} touches more than {MAX_BLOCKS:,} "
                             f"separate file ranges, which is not simulated (use a "
                             f"filetype with larger blocks)")
        k, r = divmod(start, tile)
        i = bisect_right(starts, r) - 1
        left = nbytes
        while left > 0:
            off, n = blocks[i]
            within = r - starts[i]
            take = min(n - within, left)
            pos = self.disp + k * self._extent + off + within
            if out and out[-1][0] + out[-1][1] == pos:
                out[-1] = (out[-1][0], out[-1][1] + take)
            else:
                out.append((pos, take))
            left -= take
            i += 1
            r = starts[i] if i < len(blocks) else 0
            if i == len(blocks):
                i, k = 0, k + 1
        return out

    def byte_offset(self, offset: int) -> int:
        """The absolute file byte of etype offset *offset* (``File.Get_byte_offset``)."""
        seg = self.segments(offset * self.esize, 1)
        return seg[0][0] if seg else self.disp

    def end_offset(self, size: int) -> int:
        """The etype offset just past the last data of the view in a file of *size*
        bytes (``SEEK_END``): the number of etypes of the stream before byte *size*."""
        if size <= self.disp:
            return 0
        rel = size - self.disp
        if self._dense:
            return -(-rel // self.esize)
        k, rest = divmod(rel, self._extent)
        inside = sum(min(max(rest - off, 0), n) for off, n in self._blocks)
        return -(-(k * self._tile + inside) // self.esize)


def make_view(vr: Any, disp: Any, etype: Any, filetype: Any, datarep: Any,
              call: str) -> View:
    """Check ``Set_view``'s arguments (MPI 4.0 Sec. 14.3) and build the view."""
    where = f"rank {vr.rank}: File.{call}"
    if etype is None:
        etype = _byte()
    if filetype is None:
        filetype = etype
    for what, dt in (("etype", etype), ("filetype", filetype)):
        if not isinstance(dt, Datatype):
            raise MPIUsageError(f"{where}: {what} {dt!r} is not an MPI datatype",
                                error_class=_ERR_TYPE)
        if dt.size == 0:
            raise MPIUsageError(f"{where}: {what} {dt.name} is empty or DATATYPE_NULL",
                                error_class=_ERR_TYPE)
        if not getattr(dt, "committed", True):
            raise MPIUsageError(f"{where}: {what} {dt.name} is not committed (call Commit)",
                                error_class=_ERR_TYPE)
    if etype.size == 0 or filetype.size % etype.size:
        raise MPIUsageError(f"{where}: the filetype's {filetype.size} bytes are not a whole "
                            f"number of {etype.name} etypes of {etype.size} bytes",
                            error_class=_ERR_ARG)   # MPICH's class
    if filetype.extent <= 0 or any(off < 0 for off, _ in filetype.layout.blocks):
        raise MPIUsageError(f"{where}: the filetype {filetype.name} has a negative "
                            f"displacement or no positive extent", error_class=_ERR_TYPE)
    if isinstance(disp, bool) or not isinstance(disp, int) or disp < 0:
        raise MPIUsageError(f"{where}: disp must be an int >= 0, got {disp!r}",
                            error_class=_ERR_ARG)
    rep = datarep.decode() if isinstance(datarep, bytes) else str(datarep)
    if rep in _registered(vr):
        raise MPIUsageError(f"{where}: data representation {rep!r} is registered, but files "
                            f"store data only as native (as MPICH's ROMIO: use 'native')",
                            error_class=_ERR_DATAREP)
    if rep not in ("native", "internal"):
        if rep == "external32":
            raise NotSimulatedError(f"{where}: datarep 'external32' is not simulated (it "
                                    f"converts every element to big-endian); use 'native'")
        raise MPIUsageError(f"{where}: unknown data representation {datarep!r} (native, "
                            f"internal, external32)", error_class=_ERR_DATAREP)
    return View(disp, etype, filetype, rep)


def _registered(vr: Any) -> dict[str, tuple[Any, Any, Any]]:
    """The data representations the calling rank registered."""
    table: dict[int, dict[str, tuple[Any, Any, Any]]] = \
        vr.engine.user_state.setdefault(_STATE, {})
    return table.setdefault(vr.rank, {})


def Register_datarep(datarep: str, read_fn: Any, write_fn: Any, extent_fn: Any) -> None:
    """Register a data representation for the calling rank (see the module docstring)."""
    from ...engine.rank import current
    vr = current()
    name = datarep if isinstance(datarep, str) else str(datarep)
    mine = _registered(vr)
    if name in mine:   # MPICH accepts the predefined names ("native", ...) as new ones
        raise MPIUsageError(f"rank {vr.rank}: MPI.Register_datarep: data representation "
                            f"{name!r} is already defined", error_class=_ERR_DUP_DATAREP)
    for what, fn in (("read_fn", read_fn), ("write_fn", write_fn), ("extent_fn", extent_fn)):
        if fn is not None and not callable(fn):
            raise TypeError(f"Register_datarep: {what} must be callable or None, got "
                            f"{type(fn).__name__}")
    mine[name] = (read_fn, write_fn, extent_fn)


def type_extent(vr: Any, view: View, datatype: Any) -> int:
    """``File.Get_type_extent``: *datatype*'s extent in the file (``native``: in memory)."""
    if not isinstance(datatype, Datatype):
        raise MPIUsageError(f"rank {vr.rank}: File.Get_type_extent: {datatype!r} is not an "
                            f"MPI datatype", error_class=_ERR_TYPE)
    return int(datatype.extent)


def _byte() -> Datatype:
    from ..data.datatypes import PREDEFINED
    dt: Datatype = PREDEFINED["BYTE"]
    return dt
