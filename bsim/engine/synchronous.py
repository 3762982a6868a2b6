"""Synchronous sends under the ``bsim`` protocol: the sender learns of the match.

MPI (4.1, Sec. 3.4) lets a synchronous-mode send (``Ssend``, ``Issend``,
``Ssend_init``) complete only once the matching receive has started.  The
BSIM paper's protocol has asynchronous sends, so it gives synchronous ones
the cheapest physical rule that keeps that guarantee: a zero-byte envelope
goes to the receiver, and a zero-byte acknowledgement comes back once the
receive is posted.  With ``c(a, b) = cost(a, b, 0)`` of the run's network:

* the envelope reaches the receiver at ``ts + c(src, dst)``;
* the receive matches at ``m = max(ts + c(src, dst), tp)`` (``tp``: the
  receiver's post time);
* the acknowledgement reaches the sender at ``m + c(dst, src)``: the send
  request completes then (``avail``; ``cost`` 0), and its idle time before
  ``tp`` is wait (the receiver was late), the rest comm.

The receiver is charged as for any ``bsim`` receive (``max(tp, ts) + cost``):
only the sender's completion moves.

A rank's message **to itself** of more than :data:`SELF_EAGER_LIMIT` bytes is sent as a
synchronous one, whatever the call's mode and the protocol (``bsim/mpi/p2p/calls.py``):
MPICH moves a large message to the same process only
once its receive is posted, so a blocking ``Send`` to itself before its ``Recv`` is a
deadlock there, and is reported as one here (an ``Isend``/``Recv``/``Wait`` is fine).  The acknowledgement is an event at
least the network's lookahead after the match (``c >= min_cost()``), so a run
over several host processes gives the same result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .events import NetEvent

if TYPE_CHECKING:
    from .surface import Request
    from .core import Engine
    from .matching import Message

__all__ = ["SyncAck", "acknowledge", "SELF_EAGER_LIMIT"]

SELF_EAGER_LIMIT = 8000
"""Bytes above which a message to the sender itself waits for its receive.  Measured
with the ``mpich`` wheel (MPICH 5.0.2, ``mpiexec -n 2``, one blocking ``Send`` of a
float64 array to itself, then its ``Recv``, under ``timeout``): 8,000 and 8,032 bytes
complete, 8,064 and 8,096 complete on some runs only, 8,128 bytes and more (8 KiB,
64 KiB, 1 MiB, 8 MiB) never; a one-process job (``mpiexec -n 1``) deadlocks at any
size, even 8 bytes (docs/protocols.md)."""


def acknowledge(engine: Engine, net: Any, req: Request, msg: Message) -> None:
    """*msg*, sent synchronously, matched the receive *req*: send the acknowledgement."""
    reached = msg.t_send + net.cost(msg.src, msg.dst, 0)
    if req.t_post > reached:
        reached = req.t_post
    ack = reached + net.cost(msg.dst, msg.src, 0)
    receiver = req.owner
    receiver.seq += 1
    key = receiver.keybase | receiver.seq
    sreq, msg.sreq = msg.sreq, None
    now = engine._now
    engine.post(ack if ack > now else now, key, SyncAck(sreq, msg.key, ack, req.t_post),
                msg.src)


class SyncAck(NetEvent):
    """The acknowledgement of a synchronous send reaches the sender: its request completes.

    ``sreq`` is the send request within one process; shipped to another host
    it is named by ``msg_key`` (``Message.to_wire`` registered it there).
    """

    __slots__ = ("sreq", "msg_key", "arrival", "t_post")

    def __init__(self, sreq: Request | None, msg_key: int, arrival: float,
                 t_post: float) -> None:
        self.sreq, self.msg_key, self.arrival, self.t_post = sreq, msg_key, arrival, t_post

    def run(self, engine: Engine) -> None:
        sreq = self.sreq if self.sreq is not None else engine.handles.pop(self.msg_key)
        sreq.resolve(self.arrival, 0.0, self.t_post)

    def to_wire(self, engine: Engine) -> tuple[Any, ...]:
        return ("S", self.msg_key, self.arrival, self.t_post)

    @classmethod
    def from_wire(cls, data: tuple[Any, ...]) -> SyncAck:
        """Rebuild an acknowledgement shipped by :meth:`to_wire`."""
        return cls(None, data[1], data[2], data[3])
