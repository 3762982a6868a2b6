"""The ``loggops`` protocol: LogGOPS (Hoefler, Schneider, Lumsdaine, HPDC 2010).

LogGOPS is LogGP with a per-byte CPU overhead ``O`` and a rendezvous threshold ``S``.  The
rules are those of the authors' simulator (LogGOPSim's send, message and receive events),
written out with a hand-derived case each in ``docs/protocols.md``.  With ``s`` the size
(plus the protocol's envelope), ``(s-1)`` read as ``max(s-1, 0)``:

* **Send** at CPU time ``t``: it starts at ``start = max(t, nic_free)`` (the sending NIC
  free again); the CPU is busy ``o + (s-1)O``; the NIC is busy ``g + (s-1)G``, so
  back-to-back sends are spaced ``max(o + (s-1)O, g + (s-1)G)``.  The first byte reaches
  the receiver at ``A = start + o + L``.
* **Reception**: the receiver handles the message at ``h = max(A, CPU free, receiving NIC
  free)``: its CPU is busy ``o + max((s-1)O, (s-1)G)`` (the bytes stream in while it
  receives) and its NIC ``g + (s-1)G``.  A CPU that is computing is not free: bsim's rank
  handles messages when it waits for (or tests) their receives, in order of ``A``, so a
  message that arrived during ``add_time`` is handled when the computation ends.
* **Rendezvous** (``s > S``, and every synchronous send): the data moves as an eager
  message's; the sender's request completes at the match, when the receiver handles the
  message (LogGOPSim frees the sender's operation at the match, without a message back).
* The network model gives ``L = wire(src, dst, 1)``, ``(s-1)G = wire(s) - wire(1)``,
  ``g = gap(src, 1)`` and the overheads ``o`` (``pair_send_overhead``,
  ``pair_recv_overhead``): on ``--network loggp:L=..,o=..,g=..,G=..`` exactly LogGOPS's
  parameters.  Between two ranks of one node (and to oneself) no NIC is used.
* **Contention** (``--contention fluid``): the bytes are a flow from ``start + o`` (no
  earlier than the lookahead before the engine's time, when the rank's clock trails it);
  the first byte is taken to arrive ``delay`` later than alone (``delay``: what sharing
  added).

Where bsim departs from LogGOPSim: a message is handled when its receive is waited for, not
as soon as the CPU idles while waiting for another message (they agree when the receives
of a phase are in one ``Waitall``, or taken in arrival order); a 0-byte message costs as a
1-byte one (LogGOPSim's unsigned ``s - 1`` wraps around at 0).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .matching import Message, transfer_payload
from .protocol_base import DEFERRED, Protocol

if TYPE_CHECKING:
    from netmodels.base import NetworkModel

    from .surface import Request
    from .core import Engine
    from .rank import VirtualRank

__all__ = ["LogGOPSProtocol"]


class LogGOPSProtocol(Protocol):
    """LogGOPS: CPU and NIC as separate resources at both ends, per-byte ``O``, threshold ``S``."""

    name = "loggops"
    overlaps = True    # nonblocking calls, collectives included, overlap add_time
    parameters = {"O": "CPU overhead per byte, seconds/byte (LogGOPS's O; default 0)",
                  "S": "largest eager message, bytes (LogGOPS's S; larger: rendezvous)",
                  "poll_time": "seconds charged to a test/iprobe that finds nothing",
                  "envelope": "bytes of header added to every message on the wire (default 0)"}

    def __init__(self, O: float = 0.0, S: int = 65536, poll_time: float = 1e-6,  # noqa: E741
                 envelope: int = 0) -> None:
        super().__init__(poll_time, envelope)
        if isinstance(O, bool) or not isinstance(O, (int, float)) \
                or not 0 <= O < float("inf"):
            raise ValueError(f"loggops protocol: O must be finite seconds per byte >= 0, "
                             f"got {O!r}")
        if isinstance(S, bool) or not isinstance(S, (int, float)) \
                or not (S >= 0 and float(S).is_integer()):
            raise ValueError(f"loggops protocol: S must be a whole number of bytes >= 0, "
                             f"got {S!r}")
        self.O = float(O)
        self.S = int(S)
        self._rx_free: dict[int, float] = {}    # receiving NIC free again, per rank
        self._first: dict[Message, float] = {}  # first byte's arrival, per message in flight
        self._on_flow = self._flow_done         # bound once

    def bind(self, engine: Engine) -> None:
        super().bind(engine)
        engine.defers = True   # a receive's cost is known when the rank handles it
        self._placement = engine.network.placement

    def lookahead(self, net: NetworkModel) -> float:
        """``min_wire()``: no first byte arrives sooner after its send's overhead."""
        return float(net.min_wire())

    # -- the LogGOPS terms of one message -----------------------------------------
    def _nic(self, src: int, dst: int) -> bool:
        """Whether the message goes through the NICs (not on one node, nor to oneself)."""
        if src == dst:
            return False
        nodes = self._placement()
        return nodes is None or nodes[src] != nodes[dst]

    def _terms(self, src: int, dst: int, nbytes: int) -> tuple[float, float, float]:
        """``(L, (s-1)G, (s-1)O)`` of *nbytes* (the envelope added) from *src* to *dst*."""
        net = self.engine.network
        s = nbytes + self.envelope
        lat = float(net.wire(src, dst, 1))
        per_byte = float(net.wire(src, dst, s)) - lat if s > 1 else 0.0
        return lat, max(per_byte, 0.0), self.O * max(s - 1, 0)

    def message_time(self, net: NetworkModel, src: int, dst: int, nbytes: int) -> float:
        """A lone message from the send to the end of its reception:
        ``o_s + L + o_r + max((s-1)O, (s-1)G)`` (a rendezvous adds nothing: the data
        moves as an eager message's)."""
        s = nbytes + self.envelope
        lat = float(net.wire(src, dst, 1))
        per_byte = max(float(net.wire(src, dst, s)) - lat, 0.0) if s > 1 else 0.0
        return float(net.pair_send_overhead(src, dst, s) + lat
                     + net.pair_recv_overhead(src, dst, s)
                     + max(per_byte, self.O * max(s - 1, 0)))

    # -- send ---------------------------------------------------------------------
    def send(self, vr: VirtualRank, dst: VirtualRank, msg: Message, req: Request,
             synchronous: bool) -> None:
        eng = vr.engine
        if eng.host_of is not None:
            raise NotImplementedError("the loggops protocol needs one host process: a "
                                      "receive's cost is known only when its rank handles "
                                      "it (run without mpiexec)")
        src, to, n = vr.rank, dst.rank, msg.nbytes
        net = self.engine.network
        s = n + self.envelope
        lat, per_byte, cpu_bytes = self._terms(src, to, n)
        o = float(net.pair_send_overhead(src, to, s))
        t = vr.clock
        start = t
        nic = self._nic(src, to)
        if nic:
            if vr.nic_free > start:
                start = vr.nic_free
            vr.nic_free = start + float(net.gap(src, 1)) + per_byte
        busy = o + cpu_bytes
        vr.comm += start - t + busy
        vr.clock = start + busy
        if eng.tracer is not None and vr.clock > t:
            eng.tracer.span(vr.rank, "comm", req.call, t, vr.clock)
        msg.t_send = t
        if n <= self.S and not synchronous:
            req.resolve(start + busy, 0.0, t)
        else:   # rendezvous: complete at the match (transfer)
            msg.rendezvous = True
            msg.sreq = req
        if self.fabric is not None and nic:
            # a rank's clock may trail the engine after a wait whose messages' first bytes
            # came before their flows ended: the flow enters no earlier than the fabric
            # accepts (the lookahead before now)
            begin = max(start + o, eng._now - eng.lookahead)
            self.fabric.start_flow(begin, src, to, s, self._on_flow, (msg, lat, per_byte),
                                   ordered=True)
            return
        self._deliver(vr, to, msg, start + o + lat, start + o + lat)

    def _deliver(self, vr: VirtualRank, dst: int, msg: Message, first: float,
                 visible: float) -> None:
        """The first byte of *msg* reaches *dst* at *first*; it is visible at *visible*."""
        last = vr.last_arrival
        if last is None:
            last = vr.last_arrival = {}
        prev = last.get(dst, 0.0)   # messages of one pair never overtake each other
        if visible < prev:
            visible = prev
        if first < prev:
            first = prev
        last[dst] = visible
        self._first[msg] = first
        vr.seq += 1
        msg.key = vr.keybase | vr.seq
        vr.engine.post(visible, msg.key, msg, dst)

    def _flow_done(self, done: float, delay: float, start: float,
                   payload: tuple[Message, float, float]) -> None:
        """Contention: the bytes have crossed; the first arrived ``delay`` late."""
        msg, lat, per_byte = payload
        first = start + lat + delay
        if first < done - per_byte:
            first = done - per_byte
        self._deliver(self.engine.ranks[msg.src], msg.dst, msg, first, max(first, done))

    # -- reception ----------------------------------------------------------------
    def matched(self, req: Request, msg: Message) -> None:
        transfer_payload(req, msg)
        req.flow = msg
        req.resolve(self._first.pop(msg, msg.visible), DEFERRED, msg.t_send)

    def transfer(self, vr: VirtualRank, req: Request, start: float, call: str) -> float:
        """The rank handles *req*'s message from *start* (``max(CPU free, A)``): at
        ``h = max(start, receiving NIC free)`` the CPU is busy ``o + max((s-1)O, (s-1)G)``
        and the NIC ``g + (s-1)G``; a rendezvous sender completes at ``h``.  The end."""
        msg = req.flow
        assert msg is not None
        src, dst, n = msg.src, msg.dst, msg.nbytes
        net = self.engine.network
        lat, per_byte, cpu_bytes = self._terms(src, dst, n)
        h = start
        if self._nic(src, dst):
            free = self._rx_free.get(dst, 0.0)
            if free > h:
                h = free
            self._rx_free[dst] = h + float(net.gap(dst, 1)) + per_byte
        sreq = msg.sreq
        if msg.rendezvous and sreq is not None:
            msg.sreq = None
            sreq.resolve(h, 0.0, req.t_post)
        return h + float(net.pair_recv_overhead(src, dst, n + self.envelope)) \
            + max(cpu_bytes, per_byte)
