"""Requests in lists: ``Waitsome``/``Testsome`` (and their object forms) and status lists.

The timing is that of ``Waitany``/``Test`` (``docs/protocols.md``, "Requests and
the waiting rule"): ``Waitsome`` blocks until one request can complete (as
``Waitany``), then also completes every other request already available at
that moment, each settled on the rank's clock in turn; ``Testsome`` completes
the requests available now, and one that finds none is a poll (``poll_time``
of wait).  Statuses follow mpi4py (``reqimpl.pxi``, ``_p_rs.release``): the call
fills an array of one empty status per request (``ANY_SOURCE``, ``ANY_TAG``, no
error, count 0) -- ``Waitall`` entry *i* for request *i*, ``Waitsome`` entry *k*
for the *k*-th completed request -- and copies it into the caller's statuses:
a ``list`` shorter than the completed count grows, none is shortened, and
entries past the completed ones become empty (``Testsome`` completing none,
``Testall`` returning False empty them all); with no active request
``Waitsome``/``Testsome`` leave them alone.

:class:`RequestSets` is a base class of :class:`bsim.mpi.requests.Request`
holding these class methods; the helpers :func:`active`, :func:`check_owner`
and :func:`release_statuses` are shared with ``requests.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..constants import ANY_SOURCE, ANY_TAG, ReqKind
from ..engine.rank import current
from ..errors import MPIUsageError
from .status import Status

if TYPE_CHECKING:
    from ..engine.rank import VirtualRank
    from .requests import Request

__all__ = ["RequestSets", "active", "check_owner", "release_statuses", "empty_status"]

DONE = ReqKind.DONE


def empty_status(status: Status) -> None:
    """Fill *status* as MPI's empty status (what a null request returns)."""
    status.source, status.tag, status.count = ANY_SOURCE, ANY_TAG, 0
    status.error = 0
    status.cancelled = False


def release_statuses(statuses: Any, array: list[Status], outcount: int | None) -> None:
    """Copy *array* (one status per request, filled by the call) into the caller's
    *statuses* as mpi4py does: nothing when *statuses* is None or *outcount* is None (no
    active request); a list shorter than *outcount* grows with new statuses; then its
    first ``min(len(array), len(statuses))`` entries take *array*'s values."""
    if statuses is None or outcount is None:
        return
    ns = len(statuses)
    if outcount > ns and isinstance(statuses, list):
        statuses.extend(Status() for _ in range(ns, outcount))
        ns = outcount
    for i in range(min(len(array), ns)):
        src, dst = array[i], statuses[i]
        dst.source, dst.tag, dst.count, dst.error, dst.cancelled = (
            src.source, src.tag, src.count, src.error, src.cancelled)


def active(requests: list[Request], call: str, unique: bool = False) -> list[Request]:
    """The requests of *requests* still pending; :class:`MPIUsageError` for a non-request
    or, with *unique* (calls that complete them together), a pending request listed twice
    (its completion would be counted twice and the wait would never end)."""
    try:
        pending = [r for r in requests if r.kind != DONE]
    except AttributeError:   # checked only on failure: the normal path pays nothing
        bad = next(i for i, r in enumerate(requests) if not hasattr(r, "kind"))
        vr = current()
        raise MPIUsageError(f"rank {vr.rank}: {call}: requests[{bad}] is {requests[bad]!r}, "
                            f"not a Request (use MPI.REQUEST_NULL for an empty slot)") from None
    if unique and len(pending) > 1 and len({id(r) for r in pending}) != len(pending):
        raise MPIUsageError(f"rank {current().rank}: {call}: a request appears twice in the "
                            f"list (MPI allows each active request once)")
    return pending


def check_owner(req: Request, call: str) -> VirtualRank:
    """The calling rank; :class:`MPIUsageError` if *req* belongs to another rank."""
    me = current()
    if req.owner is not me:
        owner = req.owner.rank if req.owner is not None else "?"
        raise MPIUsageError(f"rank {me.rank}: {call}: request {req!r} belongs to rank {owner}")
    return me


class RequestSets:
    """``Waitsome``, ``Testsome``, ``waitsome``, ``testsome`` (class methods of ``Request``)."""

    __slots__ = ()

    @classmethod
    def _some(cls, requests: list[Request], call: str,
              blocking: bool) -> tuple[list[int] | None, list[Any]]:
        """Indices and results of the requests completed now (None: none is active)."""
        pending = active(requests, call, unique=True)
        if not pending:
            return None, []
        owner = check_owner(pending[0], call)
        owner.ops += 1
        first = -1
        if blocking:
            k = owner.settle_any(pending, call)
            first = next(i for i, r in enumerate(requests) if r is pending[k])
        else:
            owner.sync(call, True)
        now = owner.engine.now
        done = [i for i, r in enumerate(requests)
                if r.kind != DONE and (i == first or r.avail is not None and r.avail <= now)]
        if not done:
            owner.engine.protocol.poll(owner, call)
            return [], []
        owner.settle([requests[i] for i in done if i != first], call)
        return done, [requests[i] for i in done]

    @classmethod
    def _finish_some(cls, requests: list[Request], statuses: Any, call: str,
                     blocking: bool) -> tuple[list[int] | None, list[Any] | None]:
        done, reqs = cls._some(requests, call, blocking)
        if done is None:
            return None, None
        if statuses is None:
            return done, [r.finish(None) for r in reqs]
        array = [Status() for _ in requests]   # empty statuses (mpi4py's array)
        out = [r.finish(array[k]) for k, r in enumerate(reqs)]
        release_statuses(statuses, array, len(done))
        return done, out

    @classmethod
    def Waitsome(cls, requests: list[Request],
                 statuses: list[Status] | None = None) -> list[int] | None:
        """Wait for at least one request; return the indices completed (None: none active)."""
        return cls._finish_some(requests, statuses, "Waitsome", True)[0]

    @classmethod
    def waitsome(cls, requests: list[Request], statuses: list[Status] | None = None
                 ) -> tuple[list[int] | None, list[Any] | None]:
        """``(indices, objects)`` of the requests completed; ``(None, None)`` if none active."""
        return cls._finish_some(requests, statuses, "waitsome", True)

    @classmethod
    def Testsome(cls, requests: list[Request],
                 statuses: list[Status] | None = None) -> list[int] | None:
        """Indices of the requests that can complete now, completing them (None: all inactive).

        Nothing completable is a poll (``poll_time`` of wait, as ``Test``).
        """
        return cls._finish_some(requests, statuses, "Testsome", False)[0]

    @classmethod
    def testsome(cls, requests: list[Request], statuses: list[Status] | None = None
                 ) -> tuple[list[int] | None, list[Any] | None]:
        """``(indices, objects)`` of the requests that can complete now."""
        return cls._finish_some(requests, statuses, "testsome", False)
