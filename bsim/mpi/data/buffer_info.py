# cython: annotation_typing=False
"""``BufInfo``: a parsed buffer spec, what an uppercase call's buffer is reduced to.

Its own module so that a compiled build makes it an extension type
(``buffer_info.pxd``, ``bsim.engine.compiled.TYPED``) whose fields the hot path reads as C
fields: the flattened calls (``bsim/mpi/p2p/calls.py``) take a placeholder's size from
it and the matching (``bsim/engine/matching.py``) a receive buffer's size and memory.
:class:`~bsim.mpi.data.placeholder.Buffer`, the placeholder, is an extension subclass
(``placeholder.pxd``) without fields of its own, so that a skeleton's ``Buffer`` per call
comes from ``BufInfo``'s free list; the specs are parsed in ``buffers.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .datatypes import Datatype
    from .typemap import GatherView

try:   # compiled or not (bsim/engine/compiled.py, TYPED)
    import cython
except ImportError:
    from ...engine import pure_cython as cython

__all__ = ["BufInfo"]


@cython.freelist(64)   # compiled, a dropped spec's memory is the next one's (and a Buffer's)
@cython.cclass
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
