"""One rank's part of an expanded collective, run round by round without switching into
the rank between rounds.

An algorithmic collective (``--collectives algorithmic``) is a schedule of point-to-point
rounds (``netmodels.collective_schedules``): in each round a rank posts its receives and
sends, then waits for all of them.  Run as a program would run it, every round that has
to wait costs two greenlet switches (into the engine and back) -- the 12x over the
formula's cost measured in ``docs/benchmarks.md``.  Yet between rounds the rank does
nothing a program could observe: it charges the round (``VirtualRank.settle``'s rule) and
posts the next.  So the rank's greenlet suspends once, at the first round that waits;
the rounds after it run as continuations called by the engine at the very queue
position where the rank would have been resumed (``VirtualRank.resume``, ``Engine``'s
loop), doing the same operations in the same order -- the results are bitwise those of
switching.  The greenlet is switched into again only for the last round.

Used when receives resolve with a known cost (not the ``bsim`` protocol under
contention, whose receives move their bytes as the rank handles them) and no host-time
measurement needs the rank's own greenlet to be running.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .rank import WAIT_ALL, WAIT_NONE

if TYPE_CHECKING:
    from .surface import Request
    from .rank import VirtualRank

__all__ = ["run_rounds"]

Post = Callable[[int], list["Request"]]
"""``post(k)``: post round *k*'s receives and sends; return their requests."""


def _arm(vr: VirtualRank, reqs: list[Request]) -> bool:
    """Make *vr* wait for *reqs*, as ``settle`` does before suspending; False if every
    request already knows when it completes (nothing to wait for)."""
    unknown = 0
    for r in reqs:
        if r.avail is None:
            r.waited = True
            unknown += 1
    if not unknown:
        return False
    vr.waitset = reqs
    vr.wait_mode = WAIT_ALL
    vr.unknown = unknown
    return True


def _disarm(vr: VirtualRank, reqs: list[Request]) -> None:
    """Undo :func:`_arm` once *vr* is woken (as ``settle`` does after suspending)."""
    vr.wait_mode = WAIT_NONE
    vr.waitset = None
    for r in reqs:
        r.waited = False


class _Rounds:
    """The rounds of one rank after the first that waits, run by the engine."""

    __slots__ = ("vr", "post", "nrounds", "call", "k", "reqs", "last")

    def __init__(self, vr: VirtualRank, post: Post, nrounds: int, call: str, k: int,
                 reqs: list[Request]) -> None:
        self.vr, self.post, self.nrounds, self.call = vr, post, nrounds, call
        self.k, self.reqs = k, reqs     # the round being waited for
        self.last: list[Request] | None = None   # the last round, left to the greenlet

    def step(self) -> None:
        """The engine woke the rank: its round is complete; go on until one waits."""
        vr, call = self.vr, self.call
        _disarm(vr, self.reqs)
        vr.settle(self.reqs, call)   # every request is known: charges, never suspends
        for k in range(self.k + 1, self.nrounds):
            reqs = self.post(k)
            if _arm(vr, reqs):
                if k == self.nrounds - 1:
                    self.last = reqs   # the greenlet charges it when the wake resumes it
                else:
                    self.k, self.reqs = k, reqs
                    vr.resume = self.step
                return
            vr.settle(reqs, call)
        g = vr.greenlet
        assert g is not None
        g.switch()   # nothing left to wait for: the rank goes on now


def run_rounds(vr: VirtualRank, post: Post, nrounds: int, call: str) -> None:
    """Run rounds ``0 .. nrounds - 1`` of *vr*'s part (see the module docstring)."""
    for k in range(nrounds):
        reqs = post(k)
        if k == nrounds - 1 or not _arm(vr, reqs):
            vr.settle(reqs, call)
            continue
        rounds = _Rounds(vr, post, nrounds, call, k, reqs)
        vr.resume = rounds.step
        vr.suspend(call)
        if rounds.last is not None:   # woken for the last round: charge it here
            _disarm(vr, rounds.last)
            vr.settle(rounds.last, call)
        return


def usable(vr: VirtualRank) -> bool:
    """Whether *vr*'s engine can run rounds as continuations (see the module docstring)."""
    eng: Any = vr.engine
    return not eng.defers and eng.measure is None
