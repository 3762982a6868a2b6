# cython: annotation_typing=False
"""MPI message matching: per-rank queues of posted receives and unexpected messages.

Rules (MPI 3.1 Sec. 3.5): a message matches a receive with the same
communicator context, a source equal to the sender or ``ANY_SOURCE`` and a
tag equal to the message's or ``ANY_TAG``.  An arriving message takes the
earliest-posted matching receive; a new receive takes the earliest-arrived
matching message.  Messages from one sender on one communicator are never
overtaken: the protocols deliver them in send order.

Arrival order is the engine's event order, so which message a wildcard
receive takes is decided by ``(visible time, sender world rank, sender's
sequence)``: deterministic and independent of host timing.
"""

from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING, Any

from ..constants import ANY_SOURCE, ANY_TAG
from ..errors import TruncationError
from .protocol_state import DEFERRED
from .synchronous import acknowledge

try:   # C types of the hot path's locals when compiled (matching.pxd, bsim/engine/compiled.py)
    import cython
except ImportError:
    from . import pure_cython as cython

if not cython.compiled:   # compiled, CPython's C API in its place (matching.pxd)
    sort_keyed = list.sort   # (order_wakeups: list.sort's order, compiled in C)

    def list_del(lst: list[Any], i: int) -> None:
        """``del lst[i]``; as Python the callers delete in place."""
        del lst[i]

if TYPE_CHECKING:
    from .protocol_state import ProtocolState
    from .rank import VirtualRank
    from .request_state import RequestState
    from .surface import Request

# the wildcards as compiled constants (matching.pxd: C integers, compared in C with a
# request's and a message's C fields)
_ANY_SOURCE: int = ANY_SOURCE
_ANY_TAG: int = ANY_TAG

__all__ = ["Message", "Mailbox", "mailbox", "deliver", "post_receive", "find_unexpected",
           "unreceived_messages", "transfer_payload", "bsim_matched", "new_message",
           "early_matching", "may_match_early", "stop_early_matching", "note_in_flight",
           "order_by_key", "order_wakeups", "by_key", "IN_FLIGHT", "TAKEN_EARLY"]

by_key = attrgetter("key")   # a message's place among the deliveries of one time

# ``Message.visible`` of a message sent and not yet visible, listed in its sender's
# ``Mailbox.in_flight`` (``note_in_flight``); of one a blocking receive took before it was
# visible (``post_receive``), whose delivery event then does nothing
IN_FLIGHT = _IN_FLIGHT = -2.0       # (the underscored: C doubles when compiled, matching.pxd)
TAKEN_EARLY = _TAKEN_EARLY = -1.0


@cython.freelist(64)   # compiled, a delivered message's memory is the next one's
@cython.cclass
class Message:
    """An envelope in flight: who, to whom, on which context, tag, size and payload.

    ``payload`` is the pickled object (lowercase calls), a bytes copy of a
    real buffer, or ``None`` for placeholders.  Compiled, an extension type with a free
    list of 64 (as ``RequestState``).
    """

    __slots__ = ("ctx", "src", "dst", "src_crank", "tag", "nbytes", "payload", "lower",
                 "t_send", "visible", "sreq", "rendezvous", "key")

    def __init__(self, ctx: Any, src: int, dst: int, src_crank: int, tag: int, nbytes: int,
                 payload: Any, lower: bool) -> None:
        self.ctx = ctx
        self.src = src
        self.dst = dst
        self.src_crank = src_crank
        self.tag = tag
        self.nbytes = nbytes
        self.payload = payload
        self.lower = lower
        self.t_send = 0.0
        self.visible = 0.0
        self.sreq: Request | None = None
        self.rendezvous = False
        self.key = 0        # tie-break key of its delivery event (names it across hosts)

    def to_wire(self, engine: Any = None) -> tuple[Any, ...]:
        """Picklable form for another host process.

        The send request of a rendezvous message stays here, registered in
        ``engine.handles`` under the message's key for the clear-to-send.
        """
        if self.sreq is not None and engine is not None:
            engine.handles[self.key] = self.sreq
        return ("M", self.ctx, self.src, self.dst, self.src_crank, self.tag, self.nbytes,
                self.payload, self.lower, self.t_send, self.visible, self.rendezvous, self.key)

    @classmethod
    def from_wire(cls, data: tuple[Any, ...]) -> Message:
        """Rebuild a message shipped by :meth:`to_wire`."""
        (_, ctx, src, dst, src_crank, tag, nbytes, payload, lower, t_send, visible,
         rendezvous, key) = data
        msg = cls(ctx, src, dst, src_crank, tag, nbytes, payload, lower)
        msg.t_send, msg.visible, msg.rendezvous, msg.key = t_send, visible, rendezvous, key
        return msg


def new_message(ctx: Any, src: int, dst: int, src_crank: int, tag: int, nbytes: int,
                payload: Any, lower: bool) -> Message:
    """``Message(ctx, src, dst, src_crank, tag, nbytes, payload, lower)``, made without the
    type call and the parsing of its arguments; compiled only (the C allocation leaves
    ``t_send``, ``visible``, ``sreq`` and ``rendezvous`` as ``__init__`` sets them; as
    Python the slots would stay unset, and the callers make ``Message(...)`` there)."""
    msg = Message.__new__(Message)
    msg.ctx = ctx
    msg.src = src
    msg.dst = dst
    msg.src_crank = src_crank
    msg.tag = tag
    msg.nbytes = nbytes
    msg.payload = payload
    msg.lower = lower
    msg.key = 0
    return msg


class Mailbox:
    """The receive side of one rank: posted receives, unexpected messages, probers; and
    ``in_flight``, the messages this rank sent to other ranks that are not yet visible, in
    send order, while the engine matches early (:func:`early_matching`).

    ``unexpected``, ``probers`` and ``in_flight`` are None until their first entry: a rank
    blocked in a receive keeps one list, not three (``docs/benchmarks.md``, memory per
    idle rank).
    """

    __slots__ = ("posted", "unexpected", "probers", "in_flight")

    def __init__(self) -> None:
        self.posted: list[Request] = []
        self.unexpected: list[Message] | None = None
        self.probers: list[Request] | None = None
        self.in_flight: list[Message] | None = None


def mailbox(vr: VirtualRank) -> Mailbox:
    """The mailbox of *vr*, created on first use (idle ranks stay small)."""
    box = vr.box
    if box is None:
        box = vr.box = Mailbox()
    return box


def _matches(req: Request, msg: Message) -> bool:
    return (req.ctx == msg.ctx and (req.src == _ANY_SOURCE or req.src == msg.src)
            and (req.tag == _ANY_TAG or req.tag == msg.tag))


def deliver(dst: VirtualRank, msg: Message, now: float) -> None:
    """Make *msg* visible at *dst* at time *now*: match a posted receive or queue it.
    Nothing for a message a receive already took (:data:`TAKEN_EARLY`)."""
    if msg.visible == _TAKEN_EARLY:
        return
    msg.visible = now   # (in its sender's in_flight, if there, it is now a delivered one)
    box = dst.box
    if box is None:
        box = dst.box = Mailbox()
    posted = box.posted
    for i, x in enumerate(posted):
        # (compiled, no type test: post_receive, whose argument is typed, is all that
        # appends to it; a Request's subclass type would be tested against its base's)
        req = cython.cast(RequestState, x) if cython.compiled else x
        if (req.ctx == msg.ctx and (req.src == _ANY_SOURCE or req.src == msg.src)
                and (req.tag == _ANY_TAG or req.tag == msg.tag)):
            if cython.compiled:   # (in C: matching.pxd)
                list_del(posted, i)
            else:
                del posted[i]
            if dst.engine.tracer is not None:
                req.flow = msg
            proto = dst.engine.protocol
            if proto.exact_bsim:   # a C call when compiled (matching.pxd)
                bsim_matched(proto, req, msg)
            else:
                proto.matched(req, msg)
            return
    if box.unexpected is None:
        box.unexpected = [msg]
    else:
        box.unexpected.append(msg)
    if box.probers:
        for req in list(box.probers):
            if _matches(req, msg):
                box.probers.remove(req)
                req.resolve(now, 0.0, msg.t_send)


def post_receive(vr: VirtualRank, req: Request, blocking: bool = False) -> None:
    """Post *req*: take the earliest matching unexpected message or wait in line.

    *blocking*: the receive is waited for at once and never handed to the program (``Recv``,
    ``Sendrecv``); then, while the engine matches early, it may take a message still in
    flight (:func:`early_matching`)."""
    box = vr.box
    if box is None:   # mailbox() inlined (hot path)
        box = vr.box = Mailbox()
    unexpected = box.unexpected
    if unexpected is not None:
        for i, msg in enumerate(unexpected):
            if (req.ctx == msg.ctx and (req.src == _ANY_SOURCE or req.src == msg.src)
                    and (req.tag == _ANY_TAG or req.tag == msg.tag)):
                if cython.compiled:   # (in C: matching.pxd)
                    list_del(unexpected, i)
                else:
                    del unexpected[i]
                if vr.engine.tracer is not None:
                    req.flow = msg
                proto = vr.engine.protocol
                if proto.exact_bsim:
                    bsim_matched(proto, req, msg)
                else:
                    proto.matched(req, msg)
                return
    if blocking and vr.engine.early_match and _take_in_flight(vr, box, req):
        return
    posted = box.posted
    if posted:
        posted.append(req)
    else:   # a list made for one (grown from empty, it holds four: docs/benchmarks.md)
        box.posted = [req]


def early_matching(engine: Any) -> bool:
    """Whether blocking receives of *engine*'s run take messages still in flight: when
    the hot path is compiled and the run allows it (:func:`may_match_early`).  As Python
    (no C compiler, ``BSIM_PURE_PYTHON=1``) the list of messages in flight costs more than
    the wake-ups it spares on a halo (3.7% more instructions; 5% fewer on the ``Sendrecv``
    halo), and the interpreted hot path keeps its speed: the predictions are the same."""
    return cython.compiled and may_match_early(engine)


def may_match_early(engine: Any) -> bool:
    """Whether the run of *engine* allows a blocking receive to take a message in flight.

    A receive from one named source takes that source's first matching message in send
    order, whenever the message becomes visible (MPI's non-overtaking rule), unless a
    receive posted before it takes the message first.  So when a blocking receive is
    posted while that message is already sent, and no receive posted before it matches
    the message, the match is decided: under the ``bsim`` protocol without contention the
    receive ends at ``max(tp, ts) + cost`` whether it matches at once or at ``ts + δ``
    (``docs/protocols.md``, "Visibility"), and nothing else of the run depends on the
    moment of the match, so the prediction is the same, bit for bit.  Taking the message
    at once spares the rank a suspension and a wake-up.

    Only in one host process (the sender's list is local), under exactly the ``bsim``
    protocol (a subclass may time a match by its moment), without contention (there the
    bytes move when the receiver handles the receive: the moment counts), without a
    tracer (its records keep their order), and never for a synchronous send (its
    acknowledgement leaves at the match) or a message to oneself (its lag is shorter).
    """
    protocol = engine.protocol
    return (engine.host_of is None and engine.tracer is None
            and getattr(protocol, "exact_bsim", False) and protocol.fabric is None)


def stop_early_matching(engine: Any) -> None:
    """No more early matches in *engine*'s run (a rank started a Python thread: its
    threads' messages are ordered by their own keys, not by the rank's send order)."""
    engine.early_match = False
    for vr in engine.ranks:
        if vr.box is not None:
            vr.box.in_flight = None


def _take_in_flight(vr: VirtualRank, box: Mailbox, req: Request) -> bool:
    """Match the blocking receive *req* with the first message its source sent to *vr*
    that matches it and is still in flight, when that is decided (:func:`early_matching`).
    True when it did."""
    src = req.src
    me = vr.rank
    if src < 0 or src == me:   # a wildcard, or to oneself
        return False
    eng = vr.engine
    sender = eng.ranks[src]
    sbox = sender.box
    if sbox is None:
        return False
    sent = sbox.in_flight
    if not sent:
        return False
    ctx = req.ctx
    tag = req.tag   # (ANY_TAG is the only tag below 0)
    n = len(sent)
    j = 0
    while j < n:
        msg = sent[j]
        if (msg.visible == _IN_FLIGHT and msg.dst == me and (msg.ctx is ctx or msg.ctx == ctx)
                and (tag < 0 or tag == msg.tag)):
            if msg.rendezvous:
                return False
            for r in box.posted:   # a receive posted before this one would take it
                if (r.ctx == msg.ctx and (r.src == _ANY_SOURCE or r.src == msg.src)
                        and (r.tag == _ANY_TAG or r.tag == msg.tag)):
                    return False
            if cython.compiled:   # (in C: matching.pxd)
                list_del(sent, j)
            else:
                del sent[j]
            msg.visible = _TAKEN_EARLY
            bsim_matched(eng.protocol, req, msg)
            return True
        j += 1
    return False


def note_in_flight(vr: VirtualRank, msg: Message) -> None:
    """List *msg*, just sent by *vr* to another rank, in ``vr``'s ``in_flight``, first
    dropping the messages at the list's head that became visible since: the list keeps
    the messages from its oldest one still in flight on.  A message is in flight while its
    ``visible`` is :data:`IN_FLIGHT`; :func:`deliver` sets it to the time it became
    visible, :func:`_take_in_flight` to :data:`TAKEN_EARLY` as it takes it out.

    A rank's messages to other ranks become visible in the order it sent them (the same
    lag ``δ`` after a clock that never goes back, and in key order at equal times), so
    when the last one is visible, all are: then a new list."""
    msg.visible = _IN_FLIGHT
    box = vr.box
    if box is None:
        box = vr.box = Mailbox()
    sent = box.in_flight
    last = sent[-1] if sent else None
    if last is None or last.visible != _IN_FLIGHT:
        box.in_flight = [msg]
        return
    n = len(sent)
    k = 0
    while k < n:   # the visible ones at the head
        first = sent[k]
        if first.visible == _IN_FLIGHT:
            break
        k += 1
    if k:
        del sent[:k]
    sent.append(msg)


def order_by_key(batch: list[Message]) -> None:
    """Sort *batch*, the messages that become visible at one time, by key: the order of
    their deliveries (``bsim.engine.events``).  Compiled: one pass comparing C integers
    when it is in order already (the usual case: ranks of equal times run, and send, in
    key order), an insertion sort when it is short, else ``list.sort``."""
    n = len(batch)
    if not cython.compiled:
        batch.sort(key=by_key)
        return
    i = 1
    while i < n and cython.cast(Message, batch[i - 1]).key < cython.cast(Message, batch[i]).key:
        i += 1
    if i >= n:
        return
    if n > 32:
        batch.sort(key=by_key)
        return
    while i < n:
        msg = batch[i]
        key = msg.key
        j = i - 1
        while j >= 0 and cython.cast(Message, batch[j]).key > key:
            batch[j + 1] = batch[j]
            j -= 1
        batch[j + 1] = msg
        i += 1


def order_wakeups(batch: list[tuple[int, VirtualRank]]) -> None:
    """Sort *batch*, the ``(key, rank)`` wake-ups of one time (distinct int keys), by key:
    the order of one queue entry per wake-up (``bsim.engine.events``).  Compiled, in C
    (``matching.pxd``'s ``sort_keyed``): a natural merge sort of the keys' runs, the order
    ``list.sort`` gives; as Python, ``list.sort``."""
    sort_keyed(batch)


def find_unexpected(vr: VirtualRank, ctx: int, src: int, tag: int) -> Message | None:
    """The earliest visible unexpected message matching (ctx, src, tag), not removed."""
    box = vr.box
    if box is None:
        return None
    for msg in box.unexpected or ():
        if msg.ctx == ctx and (src == ANY_SOURCE or src == msg.src) and \
                (tag == ANY_TAG or tag == msg.tag):
            return msg
    return None


def unreceived_messages(engine: Any) -> dict[int, int]:
    """World rank -> messages left in its mailbox at the end of a run (sent, never received).

    In a distributed run the counts of every host's ranks, as ``gather_accounts`` set
    them (``engine.unreceived``); otherwise counted here.
    """
    gathered = engine.unreceived
    if gathered is not None:
        return dict(gathered)
    return {vr.rank: len(vr.box.unexpected) for vr in engine.ranks
            if vr.box is not None and vr.box.unexpected}


def transfer_payload(req: Request, msg: Message) -> None:
    """Fill the receive request's status and data from the matched message."""
    req.raw_envelope = msg   # read as (src_crank, tag, nbytes): RequestState.envelope
    payload = msg.payload
    if payload is not None:   # the request keeps the message, not its data
        msg.payload = None
    info = req.rinfo
    if info is not None:
        if msg.nbytes > info.nbytes:
            req.error = TruncationError(
                f"rank {req.owner.rank}: {req.call}: message of {msg.nbytes} bytes from "
                f"rank {msg.src_crank} (tag {msg.tag}) truncated: receive buffer holds "
                f"{info.nbytes} bytes" + (" (comm.irecv() posts mpi4py.rc.irecv_bufsz bytes "
                                          "unless given a buffer or a size: irecv(n))"
                                          if req.lower else ""))
            # as MPICH: the status names the message, counts what the buffer took, and
            # the buffer holds the message's first bytes
            req.envelope = (msg.src_crank, msg.tag, info.nbytes)
            if info.mem is not None and payload is not None:
                info.mem[:info.nbytes] = payload[:info.nbytes]
            return
        if info.mem is not None and payload is not None:
            info.mem[:msg.nbytes] = payload
        if req.lower:   # irecv() into a buffer: the pickle lands there, then is loaded
            req.payload = payload
    elif req.lower:   # a pickle (or the bytes of a buffer send: unpickled the same way)
        req.payload = payload


def bsim_matched(p: ProtocolState, req: Request, msg: Message) -> None:
    """``BsimProtocol.matched``: *msg* matched the receive *req*, which completes
    ``cost(src, dst, s)`` after the send, ``t_s``: ``avail = t_s + cost`` (the BSIM
    paper's receive rule: the whole message cost at the receiver), less what a blocking
    probe already waited (``BsimProtocol.probed``).  A synchronous send is acknowledged.
    With contention the bytes move when the receiver handles the receive (``cost =
    DEFERRED``, ``BsimProtocol.transfer``).

    Here, not in ``protocols.py``, so that :func:`deliver` and :func:`post_receive` call
    it in C when the run's protocol is exactly ``BsimProtocol`` (``p.exact_bsim``):
    ``protocols`` imports this module, so this one cannot import it.
    """
    transfer_payload(req, msg)
    if msg.rendezvous:   # a synchronous send: acknowledge the match to the sender
        acknowledge(p.engine, p.net, req, msg)
    if p.fabric is not None:   # the bytes move when the receiver handles it
        req.flow = msg
        req.resolve(msg.t_send, DEFERRED, msg.t_send)
        return
    cost = p.net_cost(msg.src, msg.dst, msg.nbytes)
    if p.credits:   # a probe waited for it (see BsimProtocol.probed)
        cost -= p.credits.pop(msg, 0.0)
    req.resolve(msg.t_send, cost, msg.t_send)
