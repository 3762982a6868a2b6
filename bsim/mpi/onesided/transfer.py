"""How the bytes of one RMA operation cross the network (``docs/rma.md``, "Cost model").

An operation issued by origin ``o`` at its clock ``t`` to target ``g`` sends ``s`` bytes
(``Put``/``Accumulate`` data, the origin operand of a fetching accumulate; 0 for a
``Get``'s request), is applied at the target on arrival, and, for ``Get`` and the fetching
operations, returns ``r`` bytes.  With ``c(a, b, s)`` the run's network cost of an
``s``-byte message (the model point-to-point messages are priced with, the protocol's
envelope included) and ``o_s(s)`` the model's send overhead:

* **injection** (``loggp`` protocol with ``injection=serial``, as its sends: LogGP's gap,
  Alexandrov et al. 1995; ``bsim.engine.protocols.LogGPProtocol``): a transfer of ``s > 0``
  bytes between two nodes leaves when the sender's NIC is free,
  ``start = max(t + o_s(s), nic_free)``, and holds it ``gap(s)`` (``max(g, (s-1)G)``);
  the reply of ``r > 0`` bytes leaves the *target's* NIC the same way, from the arrival.
  A 0-byte part (a ``Get``'s request) is a control message and takes no NIC; under the
  ``bsim`` protocol (and ``injection=parallel``) ``start = t + o_s(s)``.
* **without contention**: ``arrival = start - o_s(s) + c(o, g, s)``, so a lone operation
  arrives at ``t + c(o, g, s)``; the reply completes at ``start' - o_s(r) + c(g, o, r)``.
* **with a contention layer** (``--contention fluid``, ``engine.fabric``): each part is a
  flow of its bytes (plus the envelope) through the network, started at ``start``
  (``ContentionLayer.start_flow``, as a message's bytes: ``docs/networks.md``), and
  arrives at ``start - o_s(s) + c(o, g, s) + delay``, never before its flow ends, where
  ``delay`` is what sharing the links added to the lone transfer.  So ``k`` origins each
  putting ``S`` bytes into one rank share its receiving NIC and all arrive after
  ``k S / B``, as ``k`` sends to it would; a lone operation costs what it costs without
  contention.  The origin-to-target flows of a pair are reported in the order issued.
* **order**: an arrival is never earlier than the previous one of the same origin and
  target (MPI's accumulate ordering, kept for every operation).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from ...engine.rank import VirtualRank
    from ..requests.request import Request
    from .operations import WinState

__all__ = ["transfer"]


def _serial_nic(vr: VirtualRank, src: int, dst: int) -> bool:
    """Whether a transfer from world rank *src* to *dst* queues on *src*'s NIC: the
    ``loggp`` protocol with serial injection, between two nodes (as its sends)."""
    proto = vr.engine.protocol
    if proto.name != "loggp" or getattr(proto, "injection", "serial") != "serial":
        return False
    nodes = vr.engine.network.placement()
    return nodes is None or nodes[src] != nodes[dst]


def _inject(vr: VirtualRank, sender: VirtualRank, dst: int, nbytes: int, t: float) -> float:
    """When *nbytes* from *sender* to world rank *dst*, ready at *t*, leave its NIC."""
    if nbytes > 0 and _serial_nic(vr, sender.rank, dst):
        if sender.nic_free > t:
            t = sender.nic_free
        sender.nic_free = t + vr.engine.protocol.net.gap(sender.rank, nbytes)
    return t


def transfer(vr: VirtualRank, st: WinState, g: int, out_bytes: int, back_bytes: int | None,
             apply: Callable[[], None], req: Request) -> None:
    """Move an operation of *vr* to group rank *g*: *out_bytes* to the target, where
    *apply()* runs at the arrival, then *back_bytes* back (None: no reply); *req* is
    resolved when the operation is complete at the origin (the module docstring)."""
    eng = vr.engine
    proto = eng.protocol
    net = proto.net
    fabric = eng.fabric
    src, dst = vr.rank, st.members[g]
    t0 = vr.clock
    o_out = net.pair_send_overhead(src, dst, out_bytes)
    start = _inject(vr, vr, dst, out_bytes, t0 + o_out)
    base = start - o_out + net.cost(src, dst, out_bytes)   # the lone arrival
    pair = (src, dst)

    def at_target(arrive: float) -> None:
        try:
            apply()
        except BaseException as exc:   # reported in the origin when it completes
            req.error = exc
        if back_bytes is None:
            req.resolve(arrive, 0.0, t0)
            return
        o_back = net.pair_send_overhead(dst, src, back_bytes)
        target = eng.ranks[dst]
        rstart = _inject(vr, target, src, back_bytes, arrive + o_back)
        rbase = rstart - o_back + net.cost(dst, src, back_bytes)
        if fabric is None:
            req.resolve(rbase, 0.0, t0)
            return

        def back(done: float, delay: float, _start: float, _payload: Any) -> None:
            req.resolve(max(rbase + delay, done), 0.0, t0)

        size = back_bytes + proto.envelope if back_bytes else 0
        fabric.start_flow(rstart, dst, src, size, back)

    def arrived(arrive: float) -> None:
        """Schedule the application at *arrive*, in order behind the pair's earlier ones."""
        arrive = max(arrive, st.last.get(pair, 0.0), eng._now)
        st.last[pair] = arrive
        eng.call_at(arrive, vr, at_target, arrive)

    if fabric is None:
        arrived(base)
        return

    def out(done: float, delay: float, _start: float, _payload: Any) -> None:
        arrived(max(base + delay, done))

    size = out_bytes + proto.envelope if out_bytes else 0
    fabric.start_flow(start, src, dst, size, out, ordered=True)
