# cython: annotation_typing=False
"""Point-to-point protocols: when a message is visible, and what each side is charged.

Two protocols here, selected per run (the third, ``loggops``, is :mod:`bsim.engine.loggops`;
the interface, :class:`Protocol`, is :mod:`bsim.engine.protocol_base`); their formulas are
written out in ``docs/protocols.md``.

``bsim`` (BSIM paper, Sec. 2.C and 3.C): sends are asynchronous and cost
``send_cost`` (default 0); a synchronous send completes on the receiver's
acknowledgement (:mod:`bsim.engine.synchronous`).  A receive that blocks at
``tp`` completes at ``max(tp, ts) + cost(src, dst, s)``; ``max(0, ts - tp)``
is wait and ``cost`` comm.  ``irecv`` + ``wait`` is a receive blocking at ``wait``.

``loggp`` (LogGP, Alexandrov et al.; the MILC paper Sec. IV): the sender pays
``o_s``; an eager message (``s <= eager_limit``) departs at
``max(ts + o_s, NIC free)``, keeps the NIC busy ``gap`` (``max(g, (s-1)G)``)
and arrives ``wire`` later; the receive completes at
``max(tp, arrival) + o_r``.  Above ``eager_limit`` (and for ``Ssend``) the
rendezvous protocol applies: a request-to-send reaches the receiver after
``o_s + wire(0)``; once the receive is posted a clear-to-send travels back
(``wire(0)``), then the data is injected; the sender's request completes when
injection ends, so the sender waits for a late receiver.  Messages between
one pair of ranks never overtake each other (arrival times are made
non-decreasing).

Visibility (docs/distributed.md): a message is visible to the receiver,
and can be matched, probed or tested, at ``visible``: ``ts + lookahead``
under ``bsim`` (``lookahead`` = the network's ``min_cost()``; a message to
oneself at ``ts + min(lookahead, cost(0))``) and at its arrival under ``loggp``.  Every effect
of one rank on another is such an event, at least the lookahead after the
moment it is created, which is what lets a run be split over host processes
with identical results.  Timing is unchanged: a ``bsim`` receive still
completes at ``max(tp, ts) + cost``.

Contention (:mod:`bsim.engine.fabric`; ``docs/protocols.md``, "Contention"): each message's
bytes are a flow and the time sharing adds, ``delay``, is charged with the transfer.  Under
``bsim`` the bytes move when the receiver handles the receive (``cost = DEFERRED``,
:meth:`BsimProtocol.transfer`): it ends at ``max(t, ts) + cost(src, dst, s) + delay``.
Under ``loggp`` the injection (``data=match``: the match) starts the flow; the data
arrives at ``start + wire(s) + delay``.
"""

from __future__ import annotations

from heapq import heappush
from typing import TYPE_CHECKING

from netmodels.base import overhead_free
from netmodels.registry import Registry
from netmodels.spec import SpecError, parse_spec

from .events import PRIO_NET, Deliveries
from .loggops import LogGOPSProtocol
from .loggp_events import ClearToSend, DataArrival
from .matching import Message, bsim_matched, note_in_flight, transfer_payload
from .protocol_base import DEFERRED, Protocol

if TYPE_CHECKING:
    from netmodels.base import NetworkModel

    from .core import Engine
    from .rank import VirtualRank
    from .surface import Request

try:   # C types of the hot path's locals when compiled (bsim/engine/compiled.py, TYPED)
    import cython
except ImportError:
    from . import pure_cython as cython

__all__ = ["Protocol", "BsimProtocol", "bsim_send", "LogGPProtocol", "LogGOPSProtocol",
           "build_protocol", "PROTOCOLS", "DEFERRED"]

class BsimProtocol(Protocol):
    """The BSIM paper's rules: asynchronous sends, whole message cost charged at the receiver."""

    name = "bsim"
    overlaps = False   # a nonblocking call completes as if blocking at its Wait (seed's rule)
    parameters = {"send_cost": "seconds charged to every send (BSIM paper: 0), or 'network': "
                               "the message's network cost, as the tutorial's models count",
                  "poll_time": "seconds charged to a test/iprobe that finds nothing",
                  "envelope": "bytes of header added to every message on the wire (default 0)"}

    def __init__(self, send_cost: float | str = 0.0, poll_time: float = 1e-6,
                 envelope: int = 0) -> None:
        super().__init__(poll_time, envelope)
        self.send_network = send_cost == "network"
        if not self.send_network:
            if isinstance(send_cost, (str, bool)) or not 0 <= send_cost < float("inf"):
                raise ValueError(f"bsim protocol: send_cost must be finite seconds >= 0 or "
                                 f"'network', got {send_cost!r}")
        self.send_cost: float | str = send_cost if self.send_network else float(send_cost)
        self.send_seconds = 0.0 if self.send_network else float(send_cost)
        # a subclass may override a step: then its methods run, not the module functions
        self.exact_bsim = type(self) is BsimProtocol
        self._on_flow = self._on_transfer                # bound once (contention hot path)

    def bind(self, engine: Engine) -> None:
        super().bind(engine)
        engine.defers = self.fabric is not None   # receives: cost DEFERRED (see transfer)

    def lookahead(self, net: NetworkModel) -> float:
        """``min_cost()``: no message between two ranks costs less (base.py)."""
        return float(net.min_cost())

    def send(self, vr: VirtualRank, dst: VirtualRank, msg: Message, req: Request,
             synchronous: bool) -> None:
        """Send *msg* from *vr* to *dst* (:func:`bsim_send`)."""
        bsim_send(self, vr, dst, msg, req, synchronous)

    def probed(self, msg: Message, t_probe: float) -> None:
        """Credit a blocking probe's wait to the receive that takes *msg*: the probe,
        posted at ``tp``, saw it only at ``ts + δ``, so ``c = ts + δ - max(tp, ts)`` of the
        transfer is spent; the receive charges ``cost - c`` and ``Probe`` + ``Recv`` ends at
        ``max(tp, ts) + cost`` as a ``Recv`` posted at ``tp`` (``docs/protocols.md``)."""
        self._credit(msg, msg.visible - max(t_probe, msg.t_send))

    def matched(self, req: Request, msg: Message) -> None:
        """*msg* matched the receive *req* (:func:`~bsim.engine.matching.bsim_matched`)."""
        bsim_matched(self, req, msg)

    def transfer(self, vr: VirtualRank, req: Request, start: float, call: str) -> float:
        """Contention: move *req*'s message from *start* (the receiver handles it); its end.

        The receive ends at ``start + cost(src, dst, s) + delay`` (never before
        the flow ends), where ``delay`` is what sharing the links added to the
        lone transfer, so a lone message costs exactly ``cost``.  A receiver
        already blocked learns of a message only when it becomes visible, at
        most the lookahead after it was sent: the flow then enters the network
        late (``ContentionLayer.start_flow``) but is charged from *start*.  The
        receiving rank sleeps until the end (``settle`` calls this once per
        request).
        """
        msg = req.flow
        fabric = self.fabric
        assert msg is not None and fabric is not None
        if self.credits:   # a probe waited for it: its transfer began then (see probed)
            start -= self.credits.pop(msg, 0.0)
        fabric.start_flow(start, msg.src, msg.dst, msg.nbytes + self.envelope, self._on_flow,
                          req)
        vr.suspend(call)
        return vr.engine._now

    def _on_transfer(self, done: float, delay: float, start: float, req: Request) -> None:
        """The flow of a received message has ended: wake the receiver at the arrival."""
        msg = req.flow
        arrival = start + self.net.cost(msg.src, msg.dst, msg.nbytes) + delay
        if arrival < done:
            arrival = done
        req.owner.wake(arrival)


def bsim_send(p: BsimProtocol, vr: VirtualRank, dst: VirtualRank, msg: Message, req: Request,
              synchronous: bool) -> None:
    """:meth:`BsimProtocol.send`: the message is sent at the sender's clock ``ts`` and is
    visible at ``ts + lookahead``; the sender pays ``send_cost``.  A function, so that the
    compiled send path (``mpi/p2p/fast_path.py``) calls it in C when the run's protocol is
    exactly :class:`BsimProtocol` (``protocols.pxd``)."""
    t = vr.clock
    msg.t_send = t
    eng = vr.engine
    lag = eng.lookahead
    if dst is vr and lag:   # to itself: visible once the copy's fixed cost is paid, the
        # same for every size, so that a later message never overtakes an earlier one
        lag = min(lag, p.net_cost(vr.rank, vr.rank, 0))
    vr.seq += 1
    key = msg.key = vr.keybase | vr.seq
    if synchronous:   # completes on the receiver's acknowledgement (engine/synchronous.py)
        msg.rendezvous = True
        msg.sreq = req
    visible = t + lag
    if eng.host_of is None:   # one process: Engine.deliver_at inlined (hot path)
        batch = eng.last_batch   # the batch the last send joined, if of this time
        if batch is None or eng.last_batch_time != visible:
            batch = eng.deliveries.get(visible)
            if batch is None:
                batch = eng.deliveries[visible] = Deliveries()
                heappush(eng.queue, (visible, PRIO_NET, -1, batch))
            eng.last_batch = batch
            eng.last_batch_time = visible
        if cython.compiled:   # list's own append in C (a subclass's is a Python-level call)
            cython.cast(list, batch).append(msg)
        else:
            batch.append(msg)
        if eng.early_match and dst is not vr:   # a blocking receive may take it before
            note_in_flight(vr, msg)             # it is visible (matching.py)
    else:
        eng.post(visible, key, msg, dst.rank)
    sc = (p.net_cost(vr.rank, dst.rank, msg.nbytes)
          if p.send_network else p.send_seconds)
    if sc:
        vr.comm += sc
        vr.clock = t + sc
        if vr.engine.tracer is not None:
            vr.engine.tracer.span(vr.rank, "comm", req.call, t, t + sc)
    if not synchronous:
        req.resolve(t, 0.0, t)


class LogGPProtocol(Protocol):
    """Physical point-to-point: overheads, serialized injection, eager and rendezvous."""

    name = "loggp"
    overlaps = True    # nonblocking calls, collectives included, overlap add_time
    parameters = {"eager_limit": "largest eager message, bytes (larger: rendezvous)",
                  "poll_time": "seconds charged to a test/iprobe that finds nothing",
                  "envelope": "bytes of header added to every message on the wire (default 0)",
                  "injection": "serial: a rank's NIC injects one message at a time (LogGP's "
                               "gap, default); parallel: no per-rank queue (the links share)",
                  "data": "when bytes move: inject (eager at the send, LogGP; rendezvous "
                          "after a handshake; default) or match (once the receive is posted, "
                          "no handshake; above eager_limit the sender waits for the data: "
                          "SMPI's rule)"}

    def __init__(self, eager_limit: int = 65536, poll_time: float = 1e-6, envelope: int = 0,
                 injection: str = "serial", data: str = "inject") -> None:
        super().__init__(poll_time, envelope)
        if isinstance(eager_limit, bool) or not isinstance(eager_limit, (int, float)) \
                or not (eager_limit >= 0 and float(eager_limit).is_integer()):
            raise ValueError(f"loggp protocol: eager_limit must be a whole number of bytes "
                             f">= 0, got {eager_limit!r}")
        if injection not in ("serial", "parallel"):
            raise ValueError(f"loggp protocol: injection must be serial or parallel, "
                             f"got {injection!r}")
        if data not in ("inject", "match"):
            raise ValueError(f"loggp protocol: data must be inject or match, got {data!r}")
        self.eager_limit = int(eager_limit)
        self.injection, self.data = injection, data
        self._serial = injection == "serial"
        self._at_match = data == "match"
        self._on_eager = self._eager_done     # bound once (contention hot path)
        self._on_data = self._data_done

    def bind(self, engine: Engine) -> None:
        super().bind(engine)
        self._placement = engine.network.placement   # node of each rank, or None
        # a model that charges no CPU overhead (NetworkModel's zeros) is not asked for it
        # per message: the same 0.0 without two or three calls (the hot path of data=match)
        self._no_overheads = overhead_free(engine.network)
        # wire(s + envelope) of the model itself: what Enveloped.wire returns, one call less
        self._wire = engine.network.wire

    def _nic(self, src: int, dst: int) -> bool:
        """Whether a message of *src* to *dst* leaves through *src*'s NIC: not when both
        ranks share a node, nor to itself on a network without nodes (the copy is the
        intra-node model's, ``wire``)."""
        if src == dst:
            return False
        nodes = self._placement()
        return nodes is None or nodes[src] != nodes[dst]

    def message_time(self, net: NetworkModel, src: int, dst: int, nbytes: int) -> float:
        """``o_s + wire(s) + o_r`` (LogGP, Alexandrov et al. 1995), ``s`` the size plus the
        envelope ``e``; above the eager limit (``data=inject``) the request-to-send and the
        clear-to-send cross first: ``+ wire(src, dst, e) + wire(dst, src, e)``."""
        e = self.envelope
        s = nbytes + e
        t = (net.pair_send_overhead(src, dst, s) + net.wire(src, dst, s)
             + net.pair_recv_overhead(src, dst, s))
        if nbytes > self.eager_limit and not self._at_match:
            t += net.wire(src, dst, e) + net.wire(dst, src, e)
        return float(t)

    def lookahead(self, net: NetworkModel) -> float:
        """``min_wire()``: the clear-to-send and the data are the shortest hops."""
        return float(net.min_wire())

    def probed(self, msg: Message, t_probe: float) -> None:
        """``data=match``: a probe returns at ``visible``, not at ``visible - lookahead``
        (``t_s + o``, when SMPI's finds it); the receive taking *msg* counts as posted
        ``visible - max(t_probe, visible - lookahead)`` earlier (``Probe`` + ``Recv`` =
        ``Recv``)."""
        if self._at_match:
            self._credit(msg, msg.visible - max(t_probe, msg.visible - self.engine.lookahead))

    @staticmethod
    def _deliver_at(vr: VirtualRank, dst: int, msg: Message, t: float) -> None:
        """The message (or its request-to-send) arrives at *dst* at *t*."""
        vr.seq += 1
        key = msg.key = vr.keybase | vr.seq
        vr.engine.post(t, key, msg, dst)

    @staticmethod
    def _fifo(vr: VirtualRank, dst: int, t: float) -> float:
        """Arrival time no earlier than the previous message of this pair (no overtaking)."""
        last = vr.last_arrival
        if last is None:
            last = vr.last_arrival = {}
        prev = last.get(dst, 0.0)
        if t < prev:
            t = prev
        last[dst] = t
        return t

    def send(self, vr: VirtualRank, dst: VirtualRank, msg: Message, req: Request,
             synchronous: bool) -> None:
        net = self.net
        n = msg.nbytes
        t = vr.clock
        o = 0.0 if self._no_overheads else net.pair_send_overhead(vr.rank, dst.rank, n)
        msg.t_send = t
        vr.comm += o
        vr.clock = t + o
        eng = vr.engine
        if o and eng.tracer is not None:
            eng.tracer.span(vr.rank, "comm", req.call, t, t + o)
        eager = n <= self.eager_limit and not synchronous
        if self._at_match:   # the bytes move once the receive is posted (SMPI's rule)
            msg.rendezvous = False
            if eager:   # detached: the sender goes on at once
                msg.sreq = None
                req.resolve(t + o, 0.0, t)
            elif eng.host_of is not None:
                raise NotImplementedError(
                    f"loggp data=match: {req.call} of {n} bytes (above eager_limit="
                    f"{self.eager_limit}) completes when its data arrives, which needs one "
                    f"host process (run without mpiexec, or raise eager_limit)")
            else:       # the sender completes when its data has arrived (_arrived)
                msg.sreq = req
            self._deliver_at(vr, dst.rank, msg,
                             self._fifo(vr, dst.rank, t + o + self.engine.lookahead))
            return
        if eager:
            start = t + o
            if self._serial and self._nic(vr.rank, dst.rank):
                if vr.nic_free > start:
                    start = vr.nic_free
                vr.nic_free = start + net.gap(vr.rank, n)
            if self.fabric is not None:
                self.fabric.start_flow(start, vr.rank, dst.rank, n + self.envelope,
                                       self._on_eager, msg, ordered=True)
                req.resolve(t + o, 0.0, t)
                return
            arrival = self._fifo(vr, dst.rank, start + net.wire(vr.rank, dst.rank, n))
            self._deliver_at(vr, dst.rank, msg, arrival)
            req.resolve(t + o, 0.0, t)
        else:
            msg.rendezvous = True
            msg.sreq = req
            if self.fabric is not None:   # in order behind this pair's data in flight
                self.fabric.start_flow(t + o, vr.rank, dst.rank, 0, self._on_eager, msg,
                                       ordered=True)
                return
            rts = self._fifo(vr, dst.rank, t + o + net.wire(vr.rank, dst.rank, 0))
            self._deliver_at(vr, dst.rank, msg, rts)

    @cython.locals(req="RequestState", msg="Message")
    def matched(self, req: Request, msg: Message) -> None:
        transfer_payload(req, msg)
        net = self.net
        o_r = 0.0 if self._no_overheads else net.pair_recv_overhead(msg.src, msg.dst,
                                                                     msg.nbytes)
        if not msg.rendezvous:
            if self._at_match:   # the bytes leave when both sides are there
                # (visible - lookahead = t_send + o_s unless held back behind this
                # pair's earlier messages)
                posted = req.t_post
                if self.credits:   # a probe waited for it (see probed)
                    posted -= self.credits.pop(msg, 0.0)
                start = max(msg.visible - self.engine.lookahead, posted)
                if self.fabric is not None:
                    self.fabric.start_flow(start, msg.src, msg.dst, msg.nbytes + self.envelope,
                                           self._on_data, (req, msg, o_r))
                    return
                self._arrived(req, msg, o_r,
                              start + self._wire(msg.src, msg.dst, msg.nbytes + self.envelope))
                return
            req.resolve(msg.visible, o_r, msg.t_send)
            return
        # clear-to-send leaves when both the request-to-send and the receive are there
        cts_leave = max(msg.visible, req.t_post)
        cts_arrival = cts_leave + net.wire(msg.dst, msg.src, 0)
        receiver = req.owner
        assert receiver is not None
        receiver.seq += 1
        key = receiver.keybase | receiver.seq
        receiver.engine.post(cts_arrival, key, ClearToSend(msg, req, o_r, key), msg.src)

    def _inject(self, cts: ClearToSend) -> None:
        """At the sender: the clear-to-send is there, inject the data when the NIC is free."""
        eng = self.engine
        assert eng is not None
        src, dst, nbytes = cts.src, cts.dst, cts.nbytes
        sender = eng.ranks[src]
        net = self.net
        start = eng._now
        if not self._nic(src, dst):   # on one node: the sender's buffer is read for the copy
            gap = net.wire(src, dst, nbytes) - net.wire(src, dst, 0)
        else:
            gap = net.gap(src, nbytes)
            if self._serial:
                if sender.nic_free > start:
                    start = sender.nic_free
                sender.nic_free = start + gap
        sreq = cts.sreq if cts.sreq is not None else eng.handles.pop(cts.msg_key)
        sreq.resolve(start + gap, 0.0, cts.t_post)
        if self.fabric is not None:
            self.fabric.start_flow(start, src, dst, nbytes + self.envelope, self._data_done,
                                   (cts.req, cts.msg, cts.o_r))
            return
        arrival = start + net.wire(src, dst, nbytes)
        sender.seq += 1
        eng.post(arrival, sender.keybase | sender.seq,
                 DataArrival(cts.req, cts.key, arrival, cts.o_r, cts.t_send), dst)

    # -- contention (engine.fabric): arrival = start + wire + delay, never before the flow ends
    def _eager_done(self, done: float, delay: float, start: float, msg: Message) -> None:
        """An eager message's data (or a request-to-send) has crossed the network."""
        n = 0 if msg.rendezvous else msg.nbytes
        arrival = start + self.net.wire(msg.src, msg.dst, n) + delay
        if arrival < done:
            arrival = done
        vr = self.engine.ranks[msg.src]
        arrival = self._fifo(vr, msg.dst, arrival)
        self._deliver_at(vr, msg.dst, msg, arrival)

    def _data_done(self, done: float, delay: float, start: float,
                   payload: tuple[Request, Message, float]) -> None:
        """A rendezvous message's data has crossed the network."""
        req, msg, o_r = payload
        arrival = start + self._wire(msg.src, msg.dst, msg.nbytes + self.envelope) + delay
        if arrival < done:
            arrival = done
        if self._at_match:
            self._arrived(req, msg, o_r, arrival)
            return
        req.resolve(arrival, o_r, msg.t_send)

    @staticmethod
    def _arrived(req: Request, msg: Message, o_r: float, arrival: float) -> None:
        """``data=match``: the data is in; the receive, and a waiting sender, complete."""
        req.resolve(arrival, o_r, msg.t_send)
        sreq = msg.sreq
        if sreq is not None:   # above the eager limit: the sender waited for the transfer
            msg.sreq = None
            sreq.resolve(arrival, 0.0, req.t_post)


PROTOCOLS: Registry[type[Protocol]] = Registry("protocol", SpecError,
                                            (BsimProtocol, LogGPProtocol,
                                             LogGOPSProtocol))


def build_protocol(spec: str | Protocol) -> Protocol:
    """A protocol from ``"bsim"``, ``"loggp:eager_limit=4096"`` or an instance."""
    if isinstance(spec, Protocol):
        return spec
    name, kwargs = parse_spec(spec, "protocol spec")
    cls = PROTOCOLS.lookup(name)
    PROTOCOLS.check_keys(name, kwargs, cls.parameters)
    return cls(**kwargs)
