"""A rank's blocking wait when receives move their bytes as they are handled (``bsim``
protocol with contention): :func:`settle_in_turn`, what ``VirtualRank.settle`` does then.
Compiled with the hot path (``bsim.engine.compiled.TYPED``; ``settle_in_turn.pxd``
gives the rank's and the engine's C types).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .events import TIE, WaitMode

try:   # C types of the wait's locals when compiled (settle_in_turn.pxd)
    import cython
except ImportError:
    from . import pure_cython as cython

if TYPE_CHECKING:
    from .rank import VirtualRank
    from .surface import Request

__all__ = ["settle_in_turn", "trace_idle", "trace_handled"]

_NONE, _ANY = int(WaitMode.NONE), int(WaitMode.ANY)


@cython.locals(vr="VirtualRank", eng="EngineState", t="double", lag="double")
def settle_in_turn(vr: VirtualRank, reqs: list[Request], call: str) -> None:
    """:meth:`VirtualRank.settle` when receives move their bytes as they are handled.

    ``bsim`` protocol with contention (``docs/protocols.md``): a receive's
    cost is known only once its flow has crossed the network, and its flow
    starts when the rank handles it, so the requests are handled one at a
    time as they become known, in order of ``avail`` as in ``settle``.
    A request is taken once no request still unknown can come before it:
    an unknown receive's message is not visible yet, so its ``avail`` (the
    send time) is later than ``now - lookahead``.  Send times within
    :data:`TIE` (relative) of each other are a tie, taken in list order:
    ranks whose clocks differ by float rounding alone, or a zero lookahead
    (a message sent at this very instant), must not reorder the flows.
    """
    eng = vr.engine
    lag = eng.lookahead
    tracer = eng.tracer
    unknown = [r for r in reqs if r.avail is None]
    ready = [r for r in reqs if r.avail is not None]
    t = vr.clock
    pos = {id(r): i for i, r in enumerate(reqs)}
    while ready or unknown:
        if unknown:
            still = [r for r in unknown if r.avail is None]
            if len(still) != len(unknown):
                ready += [r for r in unknown if r.avail is not None]
                unknown = still
        best = _first_due(ready, pos) if ready else None
        due = math.inf   # when every request that could come before best is known
        if best is not None:
            avail = best.avail
            assert avail is not None
            first = pos[id(best)]
            if any(pos[id(r)] < first for r in unknown):   # one sent in a tie, too
                avail = _tie_end(avail)
            due = avail + lag
        if unknown and eng._now < due:
            for r in unknown:
                r.waited = True
            vr.clock = t
            vr.waitset = unknown
            vr.wait_mode = _ANY
            vr.wake_at = math.inf
            if best is not None:
                vr.wake(max(eng._now, due))
            vr.suspend(call)
            vr.wait_mode = _NONE
            vr.waitset = None
            for r in unknown:
                r.waited = False
            continue
        assert best is not None
        ready.remove(best)
        avail = best.avail
        assert avail is not None
        if avail > t:
            idle = avail - t
            w = min(max(best.partner - t, 0.0), idle)
            vr.wait += w
            vr.comm += idle - w
            if tracer is not None:
                trace_idle(tracer, vr.rank, call, t, w, avail)
            t = avail
        cost = best.cost
        if cost < 0.0:   # DEFERRED: the bytes move now
            vr.clock = t
            cost = best.cost = eng.protocol.transfer(vr, best, t, call) - t
        t += cost
        vr.comm += cost
        if tracer is not None:
            trace_handled(tracer, vr.rank, call, t, cost, best.flow)
    vr.clock = t


def trace_idle(tracer: Any, rank: int, call: str, t: float, w: float, avail: float) -> None:
    """Spans of one idle stretch: wait (partner absent) then comm."""
    if w > 0.0:
        tracer.span(rank, "wait", call, t, t + w)
    if t + w < avail:
        tracer.span(rank, "comm", call, t + w, avail)


def trace_handled(tracer: Any, rank: int, call: str, t: float, cost: float,
                  flow: Any) -> None:
    """The comm span of a request handled until *t* at *cost*, and its message (*flow*,
    the matched ``Message``, or None), as received at *t*."""
    if cost > 0.0:
        tracer.span(rank, "comm", call, t - cost, t)
    if flow is not None:
        tracer.message(flow.src, flow.dst, flow.nbytes, flow.tag, flow.t_send, t)


def _tie_end(avail: float) -> float:
    """The latest send time that ties with *avail* (later than *avail* even at 0)."""
    return avail + abs(avail) * TIE + _SMALLEST


_SMALLEST = math.ulp(0.0)


def _first_due(ready: list[Request], pos: dict[int, int]) -> Request:
    """The request :func:`settle_in_turn` handles next: the earliest send
    time, a tie (:data:`TIE`) going to the request earlier in the caller's list."""
    end = _tie_end(min([r.avail for r in ready]))
    return min([r for r in ready if r.avail <= end], key=lambda r: pos[id(r)])
