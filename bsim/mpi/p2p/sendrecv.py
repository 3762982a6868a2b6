"""Nonblocking send-receive: ``Isendrecv`` and ``Isendrecv_replace`` (MPI 4.0, Sec. 3.10).

Each posts a receive and a send as ``Irecv`` + ``Isend`` would and returns one
request that completes when both have.  Timing: a rank handling the two parts
one after the other from clock ``t`` (the rule of ``Waitall``,
``docs/protocols.md``) ends at ``max(max(t, a_r) + c_r, a_s)``, where the
receive is known by ``(a_r, c_r)`` and the send by ``(a_s, 0)`` (every
protocol's send requests have cost 0).  That is ``max(t, A) + c_r`` with
``A = max(a_r, a_s - c_r)``, so the joined request carries ``avail = A``,
``cost = c_r`` and the receive's ``partner``: waiting on it charges exactly
what waiting on both parts would (:func:`combine`, for any number of parts).
Under ``bsim`` with contention (receive cost deferred to the transfer) the
send has completed at its call, and the joined request is the receive's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...constants import ANY_SOURCE, ANY_TAG, ReqKind
from ...engine.protocols import DEFERRED
from ...engine.rank import current
from ..data.buffers import parse_buffer
from ..requests.request import Prequest, Request, hand_out
from .calls import _buf_send, _irecv

if TYPE_CHECKING:
    from ..comms.comm import Comm

__all__ = ["Isendrecv", "Isendrecv_replace", "JoinedRequest", "Part", "combine",
           "resolve_joined"]


def combine(parts: list[Request], net: Any) -> tuple[float, float, float]:
    """``(avail, cost, partner)`` of one request standing for *parts*, all known.

    Handling the parts in order of ``avail`` from clock ``t`` (``settle``'s rule)
    ends at ``max(t, A) + C`` with ``C`` the sum of the costs and
    ``A = max_j (a_j - sum of the costs before j)``; ``partner`` is that of the part
    that sets ``A``.  A cost deferred to a contended transfer (``bsim`` with
    contention) counts as the message's uncontended cost.
    """
    before = 0.0
    best: tuple[float, float] | None = None
    for r in sorted(parts, key=lambda r: r.avail or 0.0):   # stable: ties by position
        assert r.avail is not None
        cost = r.cost
        if cost == DEFERRED:
            m = r.flow
            cost = net.cost(m.src, m.dst, m.nbytes)
        start = r.avail - before
        if best is None or start > best[0]:
            best = (start, r.partner)
        before += cost
    assert best is not None
    return best[0], before, best[1]


class JoinedRequest(Request):
    """One request for several parts (a send and a receive): known once all parts are."""

    __slots__ = ("parts", "known")
    parts: list[Request]
    known: int

    def part_known(self) -> None:
        """A part resolved: once all have, resolve this request (:func:`combine`)."""
        self.known += 1
        if self.known == len(self.parts):
            resolve_joined(self, self.parts)


def resolve_joined(req: Request, parts: list[Request]) -> None:
    """Resolve *req*, standing for *parts* (all known), by :func:`combine`."""
    recv = next((r for r in parts if r.kind == ReqKind.RECV), parts[0])
    req.envelope = recv.envelope
    req.error = next((r.error for r in parts if r.error is not None), None)
    deferred = [r for r in parts if r.cost == DEFERRED]
    if len(deferred) == 1 and all(r.cost == 0.0 and r.avail is not None
                                  and r.avail <= req.owner.clock
                                  for r in parts if r is not deferred[0]):
        # the other parts (sends) ended before any wait: the contended transfer decides
        r = deferred[0]
        assert r.avail is not None
        req.flow = r.flow
        req.resolve(r.avail, DEFERRED, r.partner)
        return
    req.resolve(*combine(parts, req.owner.engine.protocol.net))


class Part(Prequest):
    """A part of a :class:`JoinedRequest`: tells it when the engine resolves it."""

    __slots__ = ("parent",)

    def __init__(self, parent: Any, kind: ReqKind) -> None:
        super().__init__(parent.owner, kind, parent.call, None)
        self.parent = parent

    def resolve(self, avail: float, cost: float, partner: float) -> None:
        Request.resolve(self, avail, cost, partner)
        self.parent.part_known()


def _joined(comm: Comm, sendbuf: Any, dest: int, sendtag: int, recvbuf: Any, source: int,
            recvtag: int, call: str) -> Request:
    vr = current()
    req = JoinedRequest(vr, ReqKind.RECV, call)
    req.known = 0
    send, recv = Part(req, ReqKind.SEND), Part(req, ReqKind.RECV)
    req.parts = [send, recv]
    info = parse_buffer(vr, recvbuf, call) if recvbuf is not None else None
    _irecv(comm, vr, info, False, source, recvtag, call, recv)
    vr.ops -= 1   # one operation, counted by the send
    _buf_send(comm, sendbuf, dest, sendtag, call, False, send)
    return hand_out(req)


def Isendrecv(comm: Comm, sendbuf: Any, dest: int, sendtag: int = 0, recvbuf: Any = None,
              source: int = ANY_SOURCE, recvtag: int = ANY_TAG) -> Request:
    """Nonblocking send and receive: one request for both."""
    return _joined(comm, sendbuf, dest, sendtag, recvbuf, source, recvtag, "Isendrecv")


def Isendrecv_replace(comm: Comm, buf: Any, dest: int, sendtag: int = 0,
                      source: int = ANY_SOURCE, recvtag: int = ANY_TAG) -> Request:
    """Nonblocking send and receive through one buffer (the data sent is copied first)."""
    vr = current()
    call = "Isendrecv_replace"
    req = JoinedRequest(vr, ReqKind.RECV, call)
    req.known = 0
    send, recv = Part(req, ReqKind.SEND), Part(req, ReqKind.RECV)
    req.parts = [send, recv]
    _buf_send(comm, buf, dest, sendtag, call, False, send)   # payload copied before receiving
    vr.ops -= 1
    _irecv(comm, vr, parse_buffer(vr, buf, call), False, source, recvtag, call, recv)
    return hand_out(req)
