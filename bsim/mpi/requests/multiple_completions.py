# cython: annotation_typing=False
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

A request that completes with an error (a truncated receive, ``ERR_TRUNCATE``) makes these
multiple-completion calls raise ``MPI.Exception`` of class ``ERR_IN_STATUS`` and set the
``error`` field of each status (MPI 4.1 Sec. 3.7.5 and 3.2.5), as MPICH does
(:func:`finish_all`): ``SUCCESS`` for a request that completed, the request's error class
for the one that failed.  ``Waitall`` given statuses (and mpi4py's ``waitall``, which
always passes them) stops at the first failed request, as MPICH's ``MPIR_Waitall`` does:
the later active requests stay active, their statuses' error ``ERR_PENDING``; ``Waitall``
without statuses, ``Testall``, ``Waitsome`` and ``Testsome`` complete every request they
complete without an error.  The statuses are copied to the caller's even then, as mpi4py
copies them whatever the call returned.

:class:`RequestSets` is a base class of :class:`bsim.mpi.requests.request.Request`
holding these class methods; the helpers :func:`active`, :func:`check_owner`
and :func:`release_statuses` are shared with ``request.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...constants import ANY_SOURCE, ANY_TAG, ERR_IN_STATUS, ERR_PENDING, ReqKind
from ...engine.rank import current
from ...engine.request_state import RequestState
from ...errors import MPIUsageError
from .status import Status

try:   # C types of the hot path's locals when compiled (bsim/engine/compiled.py, TYPED)
    import cython
except ImportError:
    from ...engine import pure_cython as cython

if TYPE_CHECKING:
    from ...engine.rank import VirtualRank
    from .request import Request

__all__ = ["RequestSets", "active", "check_owner", "release_statuses", "empty_status",
           "finish_all", "wait_all"]

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


def finish_all(requests: list[Request], array: list[Status] | None, call: str,
               stop_at_error: bool) -> list[Any]:
    """Complete each active request of *requests* in order, filling ``array[i]`` (when
    given) for request *i*; the results (None for an inactive request).

    A request that completes with an error (an ``MPI.Exception``) does not stop the others
    unless *stop_at_error*: its status's ``error`` is its error class, and when
    *stop_at_error* the later active requests are left active, their statuses' ``error``
    ``ERR_PENDING`` (MPI 4.1 Sec. 3.7.5; MPICH's ``MPIR_Waitall``); then ``MPI.Exception``
    ``ERR_IN_STATUS`` (MPI 4.1 Sec. 3.2.5, 9.4) naming the first failure."""
    out: list[Any] = [None] * len(requests)
    first: tuple[int, MPIUsageError] | None = None
    for i, r in enumerate(requests):
        if r.kind == DONE:
            continue
        try:
            out[i] = r.finish(array[i] if array is not None else None)
        except MPIUsageError as exc:
            first = first or (i, exc)
            if array is not None:
                array[i].error = exc.error_class
            if stop_at_error:
                if array is not None:
                    for j in range(i + 1, len(requests)):
                        if requests[j].kind != DONE:
                            array[j].error = ERR_PENDING
                break
    if first is not None:
        failed, cause = first
        raise MPIUsageError(f"{call}: request {failed} completed with an error (its "
                            f"status's error field; MPI_ERR_IN_STATUS): {cause}",
                            error_class=ERR_IN_STATUS) from cause
    return out


def wait_all(requests: list[Request], statuses: Any, call: str,
             stop_at_error: bool, results: bool = True) -> list[Any]:
    """``Waitall``/``Testall`` once every active request can complete: settle them on the
    owner's clock, complete them (:func:`finish_all`) and copy the statuses to the
    caller's *statuses* (also when a request failed, as mpi4py does).  Without statuses
    nor *results* (``Waitall(requests)``, a halo's call) and with no request that may
    fail, they are completed in a plain loop (the same outcome, none of its lists)."""
    pending = active(requests, call, unique=True)
    if pending:
        owner = check_owner(pending[0], call)
        owner.ops += 1
        owner.settle(pending, call)
    if statuses is None and not results:
        for r in pending:
            if r.error is not None or r.post is not None:
                break
        else:
            for r in pending:
                if r.kind is not DONE:   # (not completed by an earlier one's finish)
                    r.finish(None)
            return []
    if statuses is None:
        return finish_all(requests, None, call, stop_at_error)
    array = [Status() for _ in requests]   # empty: what an inactive request gives
    try:
        return finish_all(requests, array, call, stop_at_error)
    finally:
        release_statuses(statuses, array, len(requests))


@cython.boundscheck(False)   # (compiled: pending[i] for i < len(pending), no checks)
@cython.wraparound(False)
def active(requests: list[Request], call: str, unique: bool = False) -> list[Request]:
    """The requests of *requests* still pending; :class:`MPIUsageError` for a non-request
    or, with *unique* (calls that complete them together), a pending request listed twice
    (its completion would be counted twice and the wait would never end).

    Compiled, a typed loop over a copy of the list, and a repeat is looked for pairwise in
    a short list; as Python, a comprehension and a set, which are faster there."""
    if not cython.compiled:
        try:
            pending = [r for r in requests if r.kind is not DONE]
        except AttributeError:   # checked only on failure: the normal path pays nothing
            _not_a_request(requests, call)
        if unique and len(pending) > 1 and len(set(map(id, pending))) != len(pending):
            _listed_twice(call)
        return pending
    # one copy of the list, then the done requests taken out in place (usually none):
    # no list grown append by append
    pending = cython.cast(list, requests)[:] if type(requests) is list else list(requests)
    total = len(pending)
    n = 0
    done = DONE
    for i in range(total):
        x = pending[i]
        if not isinstance(x, RequestState):
            _not_a_request(requests, call)
        r = cython.cast(RequestState, x)   # (tested: no second test)
        if r.kind is not done:   # (the kinds are ReqKind's members, never copies)
            if n != i:
                pending[n] = r
            n += 1
    if n != total:
        del pending[n:]
    if unique and n > 1:
        if n <= 16:   # a halo's few: compared pairwise, no set built
            for i in range(1, n):
                for j in range(i):
                    if pending[i] is pending[j]:
                        _listed_twice(call)
        elif len(set(map(id, pending))) != n:
            _listed_twice(call)
    return pending


def _not_a_request(requests: list[Any], call: str) -> None:
    bad = next(i for i, r in enumerate(requests) if not isinstance(r, RequestState))
    raise MPIUsageError(f"rank {current().rank}: {call}: requests[{bad}] is "
                        f"{requests[bad]!r}, not a Request (use MPI.REQUEST_NULL for an "
                        f"empty slot)") from None   # (not the AttributeError behind it)


def _listed_twice(call: str) -> None:
    raise MPIUsageError(f"rank {current().rank}: {call}: a request appears twice in the "
                        f"list (MPI allows each active request once)")


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
            return done, finish_all(reqs, None, call, False)
        array = [Status() for _ in requests]   # empty statuses (mpi4py's array)
        try:
            return done, finish_all(reqs, array, call, False)   # entry k: reqs[k]
        finally:
            release_statuses(statuses, array, len(done))

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
