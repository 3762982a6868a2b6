"""Buffered-mode sends and attached buffers (MPI 4.1, Sec. 3.6).

``MPI.Attach_buffer(buf)`` (or ``comm.Attach_buffer``, for one communicator)
gives the calling rank a buffer of ``len(buf)`` bytes, or an unbounded one with
``MPI.BUFFER_AUTOMATIC``.  A buffered send (``Bsend``, ``Ibsend``, ``bsend``,
``ibsend``, ``Bsend_init``) copies its message into that buffer and completes at
once; the copy occupies ``nbytes + BSEND_OVERHEAD`` bytes until the message has
left it.  MPI's rules, as bsim enforces them:

* a buffered send needs an attached buffer (the communicator's, else the
  process's): without one it is an error, as in MPICH;
* the space must be free: the rank first takes back the space of the messages
  that have left (after a synchronisation when that is what decides), and a
  message that still does not fit is an error naming both sizes;
* ``Detach_buffer``, ``Flush_buffer`` block until every message in the buffer
  has left; ``Iflush_buffer`` is their nonblocking form; attaching a second
  buffer to one scope is an error; a read-only buffer is a ``BufferError``.

Timing: the message leaves the buffer as a standard send from the buffer,
made at the call: it costs the caller what a ``Send`` costs (``bsim``:
``send_cost``; ``loggp``: ``o_s``), the receiver is charged as for any message,
and the space is freed when that standard send completes (``bsim``: at the
call; ``loggp``: at the end of injection, after the rendezvous handshake above
``eager_limit``).  ``Detach_buffer``/``Flush_buffer`` wait for that, as
``Waitall`` on those sends would (``docs/protocols.md``).  The copy itself is
memory traffic, not communication, and is not charged.
"""

from __future__ import annotations

import pickle
from typing import TYPE_CHECKING, Any

from ...constants import PROC_NULL
from ...engine.rank import VirtualRank, current
from ...errors import MPIUsageError
from ..data.buffers import parse_buffer
from ..data.pickling import buffer
from ..requests.request import SEND, Prequest, Request, hand_out
from .calls import _as_int, _isend

if TYPE_CHECKING:
    from ..comms.comm import Comm

__all__ = ["BufferAutomaticType", "BUFFER_AUTOMATIC", "BSEND_OVERHEAD", "Attach_buffer",
           "Detach_buffer", "Flush_buffer", "Iflush_buffer", "Bsend", "Ibsend", "bsend",
           "ibsend", "Bsend_init"]

BSEND_OVERHEAD = 96
"""Bytes of bookkeeping per buffered message (MPICH's ``MPI_BSEND_OVERHEAD``)."""


class BufferAutomaticType(int):
    """mpi4py's type of ``MPI.BUFFER_AUTOMATIC``: a buffer that grows as needed."""

    def __repr__(self) -> str:
        return "BUFFER_AUTOMATIC"

    def __reduce__(self) -> str:
        return "BUFFER_AUTOMATIC"


BUFFER_AUTOMATIC = BufferAutomaticType(0)

_STATE = "bsim.mpi.p2p.bsend"


class _Attached:
    """A rank's attached buffer: its memory, size (None: automatic), messages in it."""

    __slots__ = ("mem", "size", "pending", "flushes")

    def __init__(self, mem: Any, size: int | None) -> None:
        self.mem = mem
        self.size = size
        self.pending: list[tuple[Request, int]] = []       # (send from the buffer, bytes)
        self.flushes: list[tuple[Request, list[Request]]] = []   # Iflush_buffer requests

    def used(self) -> int:
        return sum(n for _, n in self.pending)

    def reclaim(self, now: float) -> None:
        """Free the space of the messages that have left the buffer by *now*."""
        self.pending = [(r, n) for r, n in self.pending
                        if r.avail is None or r.avail > now]

    def drained(self) -> None:
        """A send from the buffer completed: resolve the flushes now complete."""
        still = []
        for freq, reqs in self.flushes:
            if all(r.avail is not None for r in reqs):
                _resolve_all(freq, reqs)
            else:
                still.append((freq, reqs))
        self.flushes = still


class _FromBuffer(Prequest):
    """The standard send that carries a buffered message: tells its buffer when done."""

    __slots__ = ("attached",)

    def __init__(self, vr: VirtualRank, call: str, attached: _Attached) -> None:
        super().__init__(vr, SEND, call, None)
        self.attached = attached

    def resolve(self, avail: float, cost: float, partner: float) -> None:
        Request.resolve(self, avail, cost, partner)
        if self.attached.flushes:
            self.attached.drained()


def _resolve_all(req: Request, reqs: list[Request]) -> None:
    """Resolve *req* as done when the last of *reqs* (all known) completes."""
    if not reqs:
        req.resolve(req.owner.clock, 0.0, req.owner.clock)
        return
    last = max(reqs, key=lambda r: r.avail or 0.0)
    req.resolve(last.avail or 0.0, last.cost, last.partner)


def _table(vr: VirtualRank) -> dict[Any, _Attached]:
    table: dict[Any, _Attached] = vr.engine.user_state.setdefault(_STATE, {})
    return table


def _scope(comm: Comm | None) -> Any:
    return "process" if comm is None else ("comm", comm.context)


def _attach(vr: VirtualRank, comm: Comm | None, buf: Any, call: str) -> None:
    table = _table(vr)
    key = (vr.rank, _scope(comm))
    if key in table:
        raise MPIUsageError(f"rank {vr.rank}: {call}: a buffer is already attached "
                            f"(Detach_buffer it first)")
    if buf is BUFFER_AUTOMATIC:
        table[key] = _Attached(buf, None)
        return
    info = parse_buffer(vr, buf, call)
    if info.mem is not None and getattr(info.mem, "readonly", False):
        raise BufferError(f"rank {vr.rank}: {call}: the buffer is read-only")
    table[key] = _Attached(buf, info.nbytes)


def _detach(vr: VirtualRank, comm: Comm | None, call: str) -> Any:
    att = _table(vr).get((vr.rank, _scope(comm)))
    if att is None:   # nothing attached: an empty buffer, as MPICH returns
        return buffer()
    _flush(vr, att, call)
    del _table(vr)[(vr.rank, _scope(comm))]
    return att.mem


def _flush(vr: VirtualRank, att: _Attached | None, call: str) -> None:
    if att is None or not att.pending:
        return
    vr.ops += 1
    vr.settle([r for r, _ in att.pending], call)
    att.pending = []


def _iflush(vr: VirtualRank, att: _Attached | None, call: str) -> Request:
    req = Request(vr, SEND, call)
    vr.ops += 1
    reqs = [r for r, _ in att.pending] if att is not None else []
    if att is not None and any(r.avail is None for r in reqs):
        att.flushes.append((req, reqs))
    else:
        _resolve_all(req, reqs)
    return hand_out(req)


def Attach_buffer(buf: Any) -> None:
    """Attach *buf* (or ``BUFFER_AUTOMATIC``) to the calling rank for buffered sends."""
    vr = current()
    _attach(vr, None, buf, "MPI.Attach_buffer")


def Detach_buffer() -> Any:
    """Wait until the rank's buffered messages have left; detach and return the buffer."""
    vr = current()
    return _detach(vr, None, "MPI.Detach_buffer")


def Flush_buffer() -> None:
    """Wait until every message in the rank's buffer has left it."""
    vr = current()
    _flush(vr, _table(vr).get((vr.rank, "process")), "MPI.Flush_buffer")


def Iflush_buffer() -> Request:
    """Nonblocking :func:`Flush_buffer`: a request done when the buffer is empty."""
    vr = current()
    return _iflush(vr, _table(vr).get((vr.rank, "process")), "MPI.Iflush_buffer")


def comm_attach_buffer(comm: Comm, buf: Any) -> None:
    """Attach *buf* to this communicator for buffered sends (MPI 4.1)."""
    _attach(current(), comm, buf, "Comm.Attach_buffer")


def comm_detach_buffer(comm: Comm) -> Any:
    """Detach the communicator's buffer once its messages have left; return it."""
    return _detach(current(), comm, "Comm.Detach_buffer")


def comm_flush_buffer(comm: Comm) -> None:
    """Wait until every message in the communicator's buffer has left it."""
    vr = current()
    _flush(vr, _table(vr).get((vr.rank, _scope(comm))), "Comm.Flush_buffer")


def comm_iflush_buffer(comm: Comm) -> Request:
    """Nonblocking ``Comm.Flush_buffer``."""
    vr = current()
    return _iflush(vr, _table(vr).get((vr.rank, _scope(comm))), "Comm.Iflush_buffer")


def _buffered(comm: Comm, vr: VirtualRank, nbytes: int, payload: Any, lower: bool, dest: Any,
              tag: int, call: str, started: Prequest | None = None) -> Request:
    """Copy the message into the attached buffer and send it from there; the returned
    request is complete (the caller may reuse its buffer)."""
    req: Request
    if started is None:
        req = Request(vr, SEND, call)
    else:
        started.reset(SEND)
        req = started
    if _as_int(dest) == PROC_NULL:
        vr.ops += 1
        req.resolve(vr.clock, 0.0, vr.clock)
        return req
    table = _table(vr)
    att = table.get((vr.rank, _scope(comm))) or table.get((vr.rank, "process"))
    if att is None:
        raise MPIUsageError(f"rank {vr.rank}: {call}(dest={dest!r}, tag={tag!r}): no buffer "
                            f"is attached for a buffered-mode send (MPI.Attach_buffer)")
    need = nbytes + BSEND_OVERHEAD
    if att.size is not None:
        att.reclaim(vr.clock)
        if att.used() + need > att.size and any(r.avail is None or r.avail > vr.clock
                                                for r, _ in att.pending):
            vr.sync(call)   # what has left by now decides
            att.reclaim(vr.engine.now)
        if att.used() + need > att.size:
            raise MPIUsageError(
                f"rank {vr.rank}: {call}(dest={dest!r}, tag={tag!r}): insufficient space in "
                f"the attached buffer: the message needs {need} bytes ({nbytes} + "
                f"BSEND_OVERHEAD {BSEND_OVERHEAD}), {att.size - att.used()} of {att.size} "
                f"are free")
    inner = _FromBuffer(vr, call, att)
    _isend(comm, vr, nbytes, payload, lower, dest, tag, call, False, inner)
    att.pending.append((inner, need))
    req.resolve(vr.clock, 0.0, vr.clock)
    return req


def _buf(comm: Comm, buf: Any, dest: int, tag: int, call: str,
         started: Prequest | None = None) -> Request:
    vr = current()
    info = parse_buffer(vr, buf, call)
    payload = bytes(info.mem) if info.mem is not None else None
    return _buffered(comm, vr, info.nbytes, payload, False, dest, tag, call, started)


def _obj(comm: Comm, obj: Any, dest: int, tag: int, call: str) -> Request:
    vr = current()
    payload = pickle.dumps(obj, pickle.HIGHEST_PROTOCOL)
    return _buffered(comm, vr, len(payload), payload, True, dest, tag, call)


def Bsend(comm: Comm, buf: Any, dest: int, tag: int = 0) -> None:
    """Blocking send in buffered mode (returns once the message is in the buffer)."""
    _buf(comm, buf, dest, tag, "Bsend").finish(None)


def Ibsend(comm: Comm, buf: Any, dest: int, tag: int = 0) -> Request:
    """Nonblocking send in buffered mode."""
    return hand_out(_buf(comm, buf, dest, tag, "Ibsend"))


def bsend(comm: Comm, obj: Any, dest: int, tag: int = 0) -> None:
    """Send a Python object in buffered mode."""
    _obj(comm, obj, dest, tag, "bsend").finish(None)


def ibsend(comm: Comm, obj: Any, dest: int, tag: int = 0) -> Request:
    """Nonblocking send of a Python object in buffered mode."""
    return hand_out(_obj(comm, obj, dest, tag, "ibsend"))


def Bsend_init(comm: Comm, buf: Any, dest: int, tag: int = 0) -> Prequest:
    """Persistent buffered-mode send (each ``Start`` copies into the attached buffer)."""
    return Prequest(current(), SEND, "Bsend_init",
                    lambda req: _buf(comm, buf, dest, tag, "Bsend_init", req))
