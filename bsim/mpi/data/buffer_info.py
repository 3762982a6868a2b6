# cython: annotation_typing=False
"""``BufInfo``: a parsed buffer spec, what an uppercase call's buffer is reduced to.

Its own module so that a compiled build makes it an extension type
(``buffer_info.pxd``, ``bsim.engine.compiled.TYPED``) whose fields the hot path reads as C
fields: the flattened calls (``bsim/mpi/p2p/calls.py``) take a placeholder's size from
it and the matching (``bsim/engine/matching.py``) a receive buffer's size and memory.
:class:`~bsim.mpi.data.buffers.Buffer`, the placeholder, is a Python subclass; the specs
are parsed in ``buffers.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .datatypes import Datatype
    from .typemap import GatherView

__all__ = ["BufInfo"]


class BufInfo:
    """A parsed buffer spec: size in bytes, element count, datatype, memory or None."""

    __slots__ = ("nbytes", "count", "datatype", "mem")

    def __init__(self, nbytes: int, count: int, datatype: Datatype,
                 mem: memoryview | GatherView | None):
        self.nbytes = nbytes
        self.count = count
        self.datatype = datatype
        self.mem = mem

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle the spec without its memory (shipped with collective arrivals)."""
        return (BufInfo, (self.nbytes, self.count, self.datatype, None))
