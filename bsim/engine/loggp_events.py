"""The ``loggp`` protocol's rendezvous events: clear-to-send and data arrival.

Both are :class:`~bsim.engine.events.NetEvent` objects: within one process they hold
references to the requests and message, and ``to_wire``/``from_wire`` give the form
shipped to another host process (``bsim/engine/distributed.py``).  The timing rules
that create them are in :class:`bsim.engine.protocols.LogGPProtocol`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .events import NetEvent

if TYPE_CHECKING:
    from .surface import Request
    from .core import Engine
    from .matching import Message

__all__ = ["ClearToSend", "DataArrival"]


class ClearToSend(NetEvent):
    """``loggp`` rendezvous: the receiver's clear-to-send reaches the sender's NIC.

    Runs on the sender's host; ``msg``, ``sreq`` and ``req`` are references
    within one process, replaced by keys when shipped (``key`` is this
    event's, naming the receive request; ``msg_key`` the message's, naming
    the send request).
    """

    __slots__ = ("src", "dst", "nbytes", "t_send", "t_post", "o_r", "key", "msg_key",
                 "msg", "sreq", "req")

    def __init__(self, msg: Message | None, req: Request | None, o_r: float, key: int) -> None:
        if msg is not None:
            self.src, self.dst, self.nbytes = msg.src, msg.dst, msg.nbytes
            self.t_send, self.msg_key, self.sreq = msg.t_send, msg.key, msg.sreq
        self.msg = msg
        self.req = req
        self.t_post = req.t_post if req is not None else 0.0
        self.o_r = o_r
        self.key = key

    def run(self, engine: Engine) -> None:
        engine.protocol._inject(self)

    def to_wire(self, engine: Engine) -> tuple[Any, ...]:
        engine.handles[self.key] = self.req
        return ("C", self.src, self.dst, self.nbytes, self.t_send, self.t_post, self.o_r,
                self.key, self.msg_key)

    @classmethod
    def from_wire(cls, data: tuple[Any, ...]) -> ClearToSend:
        cts = cls(None, None, data[6], data[7])
        (_, cts.src, cts.dst, cts.nbytes, cts.t_send, cts.t_post, _, _, cts.msg_key) = data
        cts.sreq = None
        return cts


class DataArrival(NetEvent):
    """``loggp`` rendezvous: the data reaches the receiver; its receive resolves."""

    __slots__ = ("req", "key", "arrival", "o_r", "t_send")

    def __init__(self, req: Request | None, key: int, arrival: float, o_r: float,
                 t_send: float) -> None:
        self.req, self.key, self.arrival, self.o_r, self.t_send = req, key, arrival, o_r, t_send

    def run(self, engine: Engine) -> None:
        req = self.req if self.req is not None else engine.handles.pop(self.key)
        req.resolve(self.arrival, self.o_r, self.t_send)

    def to_wire(self, engine: Engine) -> tuple[Any, ...]:
        return ("D", self.key, self.arrival, self.o_r, self.t_send)

    @classmethod
    def from_wire(cls, data: tuple[Any, ...]) -> DataArrival:
        return cls(None, data[1], data[2], data[3], data[4])
