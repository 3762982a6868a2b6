"""Partitioned point-to-point communication (MPI 4.0, Chapter 4).

``comm.Psend_init(buf, partitions, dest, tag)`` and
``comm.Precv_init(buf, partitions, source, tag)`` make persistent requests whose
buffer is cut into ``partitions`` equal parts.  After ``Start``, the sender
marks parts ready (``Pready``, ``Pready_range``, ``Pready_list``) and the
receiver may ask whether a part has arrived (``Parrived``).  The k-th
``Psend_init`` of a rank to ``(dest, tag)`` on a communicator pairs with the
k-th ``Precv_init`` of ``dest`` from ``(source, tag)`` (MPI matches partitioned
operations in the order they are initialised); wildcards are not allowed.

Timing rule: each part is one message of ``nbytes / partitions`` bytes under
the run's protocol (``docs/protocols.md``): sent at the sender's clock when it
calls ``Pready`` for that part, received by a receive posted at the
receiver's ``Start``.  ``Parrived(i)`` is a ``Test`` of part ``i`` that does not
complete it (a poll when false, so a loop on it ends); ``Wait`` on either
request charges what ``Waitall`` on its parts would (the request stands for its parts, see
:func:`~bsim.mpi.p2p.sendrecv.combine`).  Parts travel on a context of their own
(the communicator's, the pairing's ordinal and the part's index), so they never
match other receives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...constants import ANY_SOURCE, ANY_TAG, PROC_NULL, ReqKind
from ...engine.rank import VirtualRank, current
from ...errors import MPIUsageError
from ..data.buffers import BufInfo, parse_buffer
from ..requests.request import Prequest
from .calls import _as_int, _irecv, _isend
from .sendrecv import Part, resolve_joined

if TYPE_CHECKING:
    from ..comms.comm import Comm

__all__ = ["PartitionedRequest", "Psend_init", "Precv_init"]

_STATE = "bsim.mpi.p2p.partitioned"


class _Channel:
    """The communicator as seen by one part: its own matching context."""

    __slots__ = ("comm", "context")

    def __init__(self, comm: Comm, context: Any) -> None:
        self.comm, self.context = comm, context

    def size_of(self, vr: VirtualRank) -> int:
        return self.comm.size_of(vr)

    def peer_size(self, vr: VirtualRank) -> int:
        return self.comm.peer_size(vr)

    def world_rank(self, rank: int, vr: VirtualRank) -> int:
        return self.comm.world_rank(rank, vr)

    def rank_of(self, vr: VirtualRank) -> int:
        return self.comm.rank_of(vr)


class PartitionedRequest(Prequest):
    """A persistent partitioned send or receive (``Psend_init`` / ``Precv_init``).

    Once started it stands for its parts' requests (``parts``): it resolves when
    they all have (:func:`~bsim.mpi.p2p.sendrecv.resolve_joined`).
    """

    __slots__ = ("channels", "infos", "peer", "ptag", "side", "parts", "known", "ready")

    def __init__(self, vr: VirtualRank, side: ReqKind, call: str, comm: Comm, info: BufInfo,
                 partitions: int, peer: int, tag: int) -> None:
        super().__init__(vr, side, call, None)
        self._freed = False
        self._issue = self._start
        self.side = side
        self.peer, self.ptag = peer, tag
        self.infos = _split(vr, info, partitions, call)
        ordinal = 0
        if peer != PROC_NULL:
            table: dict[Any, int] = vr.engine.user_state.setdefault(_STATE, {})
            key = (vr.rank, comm.context, side, comm.world_rank(peer, vr), tag)
            ordinal = table.get(key, 0)
            table[key] = ordinal + 1
        self.channels: list[Any] = [_Channel(comm, ("partitioned", comm.context, ordinal, i))
                                    for i in range(partitions)]
        self.parts: list[Prequest] = []
        self.known = 0
        self.ready: list[bool] = []

    def _start(self, _: Prequest) -> None:
        vr = self.owner
        vr.ops += 1
        self.reset(self.side)
        n = len(self.channels)
        self.known = 0
        self.parts = [Part(self, self.side) for _ in range(n)]
        self.ready = [False] * n
        if self.peer == PROC_NULL:
            self.resolve(vr.clock, 0.0, vr.clock)
            return
        if self.side == ReqKind.RECV:
            for ch, info, part in zip(self.channels, self.infos, self.parts):
                _irecv(ch, vr, info, False, self.peer, self.ptag, self.call, part)
                vr.ops -= 1

    def part_known(self) -> None:
        """A part resolved: once all have, so does this request."""
        self.known += 1
        if self.known == len(self.parts):
            resolve_joined(self, list(self.parts))

    # -- the sender's side -------------------------------------------------------------
    def Pready(self, partition: int) -> None:
        """Mark part *partition* ready: its message leaves now."""
        self.Pready_list([partition])

    def Pready_range(self, partition_low: int, partition_high: int) -> None:
        """Mark parts ``partition_low..partition_high`` (inclusive) ready."""
        self.Pready_list(list(range(_as_int(partition_low), _as_int(partition_high) + 1)))

    def Pready_list(self, partitions: list[int]) -> None:
        """Mark every part of *partitions* ready, in the order given."""
        vr = current()
        for p in partitions:
            i = self._part(vr, p, "Pready", ReqKind.SEND)
            if self.ready[i]:
                raise MPIUsageError(f"rank {vr.rank}: Pready({i}): partition {i} is "
                                    f"already ready in this round")
            self.ready[i] = True
            if self.peer == PROC_NULL:
                continue
            info = self.infos[i]
            payload = bytes(info.mem) if info.mem is not None else None
            _isend(self.channels[i], vr, info.nbytes, payload, False, self.peer, self.ptag,
                   "Pready", False, self.parts[i])

    # -- the receiver's side -----------------------------------------------------------
    def Parrived(self, partition: int) -> bool:
        """Whether part *partition* has arrived (a poll when not)."""
        vr = current()
        i = self._part(vr, partition, "Parrived", ReqKind.RECV)
        if self.peer == PROC_NULL:
            return True
        part = self.parts[i]
        vr.ops += 1
        vr.sync("Parrived", True)
        if part.avail is not None and part.avail <= vr.engine.now:
            return True
        vr.engine.protocol.poll(vr, "Parrived")
        return False

    def _part(self, vr: VirtualRank, partition: Any, call: str, side: ReqKind) -> int:
        if self.side != side:
            what = "partitioned send" if side == ReqKind.SEND else "partitioned receive"
            raise MPIUsageError(f"rank {vr.rank}: {call}: not a {what} request ({self.call})")
        if self.owner is not vr:
            raise MPIUsageError(f"rank {vr.rank}: {call}: the request belongs to rank "
                                f"{self.owner.rank}")
        if not self.parts or self.kind == ReqKind.DONE:
            raise MPIUsageError(f"rank {vr.rank}: {call}({partition!r}): the request is "
                                f"not active (Start it first)")
        i = _as_int(partition)
        if not isinstance(i, int) or not 0 <= i < len(self.channels):
            raise MPIUsageError(f"rank {vr.rank}: {call}({partition!r}): invalid partition "
                                f"(valid: 0..{len(self.channels) - 1})")
        return i


def _split(vr: VirtualRank, info: BufInfo, partitions: int, call: str) -> list[BufInfo]:
    """*info* cut into *partitions* equal parts (by elements)."""
    if info.count % partitions:
        raise MPIUsageError(f"rank {vr.rank}: {call}: {info.count} elements do not split "
                            f"into {partitions} equal partitions")
    per = info.count // partitions
    size = per * info.datatype.size
    mem = info.mem
    if mem is not None and not isinstance(mem, memoryview):
        raise MPIUsageError(f"rank {vr.rank}: {call}: partitioned buffers of a derived "
                            f"datatype with gaps are not simulated with data (pack them)")
    return [BufInfo(size, per, info.datatype,
                    mem[i * size:(i + 1) * size] if mem is not None else None)
            for i in range(partitions)]


def _init(comm: Comm, buf: Any, partitions: Any, peer: Any, tag: Any, call: str,
          kind: ReqKind) -> PartitionedRequest:
    vr = current()
    n = _as_int(partitions)
    if not isinstance(n, int) or n < 1:
        raise MPIUsageError(f"rank {vr.rank}: {call}: partitions must be an int >= 1, "
                            f"got {partitions!r}")
    peer, tag = _as_int(peer), _as_int(tag)
    if peer == ANY_SOURCE or tag == ANY_TAG:
        raise MPIUsageError(f"rank {vr.rank}: {call}(source={peer!r}, tag={tag!r}): "
                            f"partitioned communication takes no wildcards")
    size = comm.peer_size(vr)
    if peer != PROC_NULL and not (isinstance(peer, int) and 0 <= peer < size):
        raise MPIUsageError(f"rank {vr.rank}: {call}: invalid rank {peer!r} for {comm!r} "
                            f"(valid: 0..{size - 1} or PROC_NULL)")
    return PartitionedRequest(vr, kind, call, comm, parse_buffer(vr, buf, call), n, peer, tag)


def Psend_init(comm: Comm, buf: Any, partitions: int, dest: int,
               tag: int = 0) -> PartitionedRequest:
    """Persistent partitioned send of *buf* in *partitions* equal parts."""
    return _init(comm, buf, partitions, dest, tag, "Psend_init", ReqKind.SEND)


def Precv_init(comm: Comm, buf: Any, partitions: int, source: int,
               tag: int = 0) -> PartitionedRequest:
    """Persistent partitioned receive into *buf* in *partitions* equal parts."""
    return _init(comm, buf, partitions, source, tag, "Precv_init", ReqKind.RECV)
