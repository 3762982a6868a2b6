"""Nonblocking send-receive: ``Isendrecv`` and ``Isendrecv_replace`` (MPI 4.0, Sec. 3.10).

Each posts a receive and a send as ``Irecv`` + ``Isend`` would and returns one
request that completes when both have.  Timing: a rank handling the two parts
one after the other from clock ``t`` (the rule of ``Waitall``,
``docs/protocols.md``) ends at ``max(max(t, a_r) + c_r, a_s)``, where the
receive is known by ``(a_r, c_r)`` and the send by ``(a_s, 0)`` (every
protocol's send requests have cost 0).  That is ``max(t, A) + c_r`` with
``A = max(a_r, a_s - c_r)``, so the joined request carries ``avail = A``,
``cost = c_r`` and the receive's ``partner``: waiting on it charges exactly
what waiting on both parts would.  Under ``bsim`` with contention (receive
cost deferred to the transfer) the send has completed at its call, and the
joined request is the receive's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..constants import ANY_SOURCE, ANY_TAG, ReqKind
from ..engine.protocols import DEFERRED
from ..engine.rank import current
from .buffers import parse_buffer
from .p2p import _buf_send, _irecv
from .requests import Prequest, Request, hand_out

if TYPE_CHECKING:
    from .comm import Comm

__all__ = ["Isendrecv", "Isendrecv_replace", "JoinedRequest"]


class JoinedRequest(Request):
    """One request for a send and a receive: known once both parts are."""

    __slots__ = ("parts", "known")
    parts: tuple[Request, Request]
    known: int

    def part_known(self) -> None:
        """A part resolved: once both have, resolve this request (module docstring)."""
        self.known += 1
        if self.known < 2:
            return
        send, recv = self.parts
        self.envelope = recv.envelope
        self.error = recv.error if recv.error is not None else send.error
        self.flow = recv.flow
        a_r, c_r, a_s = recv.avail, recv.cost, send.avail
        assert a_r is not None and a_s is not None
        if c_r == DEFERRED or a_s - c_r <= a_r:
            self.resolve(a_r, c_r, recv.partner)
        else:
            self.resolve(a_s - c_r, c_r, recv.partner)


class _Part(Prequest):
    """A part of a :class:`JoinedRequest`: tells it when the engine resolves it."""

    __slots__ = ("parent",)

    def __init__(self, parent: JoinedRequest, kind: ReqKind) -> None:
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
    send, recv = _Part(req, ReqKind.SEND), _Part(req, ReqKind.RECV)
    req.parts = (send, recv)
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
    send, recv = _Part(req, ReqKind.SEND), _Part(req, ReqKind.RECV)
    req.parts = (send, recv)
    _buf_send(comm, buf, dest, sendtag, call, False, send)   # payload copied before receiving
    vr.ops -= 1
    _irecv(comm, vr, parse_buffer(vr, buf, call), False, source, recvtag, call, recv)
    return hand_out(req)
