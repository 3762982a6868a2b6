"""mpi4py's pickling helpers and the internals its pure-Python utilities call.

``mpi4py.util.pkl5`` (and programs that configure ``MPI.pickle``) need, besides the
public API: :class:`Pickle` with out-of-band buffers (pickle protocol 5, PEP 574),
:class:`buffer` (``MPI.buffer.allocate``), and three private helpers of
``mpi4py.MPI``: ``_comm_lock`` (a lock per communicator and key),
``_commctx_intra`` (a duplicate communicator and a fresh tag per call, for
collectives built from point-to-point messages) and ``_commctx_inter``.

In bsim every virtual rank is a greenlet of one host thread, and one communicator
object is shared by its members, so the locks and the duplicate-communicator
contexts are kept **per virtual rank** (``engine.user_state``): a lock held by one
rank across a blocking call never blocks another rank's greenlet, as it would not
block another process.
"""

from __future__ import annotations

import pickle as _pickle
import threading
from collections.abc import Callable, Hashable
from typing import Any

from ...constants import TAG_UB
from ...engine.rank import current
from ...errors import MPIUsageError
from .memory import buffer

__all__ = ["Pickle", "buffer", "pickle", "Alloc_mem", "Free_mem", "_comm_lock", "_comm_lock_table",
           "_commctx_intra", "_commctx_inter", "_set_abort_status"]

_LOCKS = "bsim.mpi.comm_locks"
_CONTEXTS = "bsim.mpi.comm_contexts"


class Pickle:
    """Serialization of Python objects for the lowercase methods (mpi4py's ``Pickle``).

    ``dumps_oob`` keeps buffers of at least ``THRESHOLD`` bytes out of band (pickle
    protocol 5); ``loads_oob`` takes them back.
    """

    def __init__(self, dumps: Callable[..., bytes] = _pickle.dumps,
                 loads: Callable[..., Any] = _pickle.loads,
                 protocol: int | None = None, threshold: int | None = None) -> None:
        self._dumps, self._loads = dumps, loads
        self.PROTOCOL = protocol
        self.THRESHOLD = threshold

    @property
    def PROTOCOL(self) -> int | None:  # noqa: N802 - mpi4py's name
        """Pickle protocol (None: the highest for :mod:`pickle`'s own ``dumps``; for
        another serializer, None calls its ``dumps(obj)`` without one, as mpi4py does)."""
        return self._protocol

    @PROTOCOL.setter
    def PROTOCOL(self, value: int | None) -> None:  # noqa: N802
        if value is None:
            self._protocol = _pickle.HIGHEST_PROTOCOL if self._dumps is _pickle.dumps else None
        else:
            self._protocol = int(value)

    @property
    def THRESHOLD(self) -> int:  # noqa: N802 - mpi4py's name
        """Smallest buffer sent out of band, bytes (None sets 256 KiB)."""
        return self._threshold

    @THRESHOLD.setter
    def THRESHOLD(self, value: int | None) -> None:  # noqa: N802
        self._threshold = 256 * 1024 if value is None else int(value)

    def dumps(self, obj: Any) -> bytes:
        """Serialize *obj* in band."""
        if self._protocol is None:
            return self._dumps(obj)
        return self._dumps(obj, self._protocol)

    def loads(self, data: Any) -> Any:
        """Deserialize *data*."""
        return self._loads(data)

    def dumps_oob(self, obj: Any) -> tuple[bytes, list[buffer]]:
        """Serialize *obj* with protocol 5 or higher (as mpi4py, whatever ``PROTOCOL``);
        buffers of at least ``THRESHOLD`` bytes are returned apart (copied)."""
        bufs: list[buffer] = []

        def keep(pb: _pickle.PickleBuffer) -> bool:
            raw = pb.raw()
            if raw.nbytes < self.THRESHOLD:
                return True        # small: serialized in band
            bufs.append(buffer(raw))   # mpi4py hands them out as MPI.buffer
            return False

        return self._dumps(obj, max(self._protocol or 0, 5), buffer_callback=keep), bufs

    def loads_oob(self, data: Any, bufs: Any) -> Any:
        """Deserialize *data* with its out-of-band buffers *bufs*."""
        return self._loads(data, buffers=bufs)


pickle = Pickle()


def Alloc_mem(size: int, info: Any = None) -> buffer:  # noqa: N802 - mpi4py's name
    """Memory for MPI (``MPI.Alloc_mem``): a zero-filled :class:`buffer`."""
    return buffer.allocate(size)


def Free_mem(mem: Any) -> None:  # noqa: N802 - mpi4py's name
    """Release memory from :func:`Alloc_mem`: the buffer reads as empty afterwards (Python
    frees the bytes)."""
    if isinstance(mem, buffer):
        mem.release()


def _key(comm: Any) -> int:
    """A communicator's key in the per-rank tables (handles are unhashable, as mpi4py's;
    copies of one handle share it, and the table keeps it alive so the id stays its own)."""
    handle = getattr(comm, "_handle", comm)
    current().engine.user_state.setdefault(_KEPT, {})[id(handle)] = handle
    return id(handle)


_KEPT = "bsim.pickling.kept"


def _per_rank(key: str) -> tuple[int, dict[Any, Any]]:
    vr = current()
    table = vr.engine.user_state.setdefault(key, {})
    return vr.rank, table


def _comm_lock_table(comm: Any) -> dict[Hashable, threading.Lock]:
    """The calling rank's locks of *comm*, by key."""
    rank, table = _per_rank(_LOCKS)
    return table.setdefault((rank, _key(comm)), {})


def _comm_lock(comm: Any, key: Hashable | None = None) -> threading.Lock:
    """The calling rank's lock of *comm* for *key*."""
    locks = _comm_lock_table(comm)
    lock = locks.get(key)
    if lock is None:
        lock = locks[key] = threading.Lock()
    return lock


def _commctx_intra(comm: Any) -> tuple[Any, int]:
    """``(duplicate of comm, tag)``: the duplicate is made once per rank and
    communicator (collectively, at the first call); each call gives the next tag."""
    rank, table = _per_rank(_CONTEXTS)
    ctx = table.get((rank, _key(comm)))
    if ctx is None:
        ctx = table[(rank, _key(comm))] = [comm.Dup(), 0]
    tag = ctx[1]
    ctx[1] = (tag + 1) % (TAG_UB + 1)
    return ctx[0], tag


def _commctx_inter(comm: Any) -> tuple[Any, int, Any, bool]:
    """``(duplicate of comm, tag, local intracommunicator, low group)`` for an
    intercommunicator: made once per rank and intercommunicator (collectively, at the
    first call; the local communicator duplicates its group's); each call gives the next
    tag.  The low group is side 0 (the same answer on every member of a group)."""
    rank, table = _per_rank(_CONTEXTS)
    ctx = table.get((rank, _key(comm)))
    if ctx is None:
        if not comm.Is_inter():
            raise MPIUsageError(f"rank {rank}: {comm!r} is not an intercommunicator")
        dup = comm.Dup()
        side = dup.side_of[rank]
        ctx = table[(rank, _key(comm))] = [dup, 0, dup.local_comms[side].Dup(), side == 0]
    tag = ctx[1]
    ctx[1] = (tag + 1) % (TAG_UB + 1)
    return ctx[0], tag, ctx[2], ctx[3]


def _set_abort_status(status: int) -> None:
    """mpi4py's hook for ``mpi4py.run``: the exit status a failing rank would abort the job
    with.  Kept per rank (``user_state``); the failure itself ends the run."""
    rank, table = _per_rank("bsim.mpi.abort_status")
    table[rank] = status
