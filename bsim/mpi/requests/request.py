# cython: annotation_typing=False
"""``Request``: mpi4py's handle for nonblocking operations (``Status`` is in status.py).

A request knows, once its partner has acted, three times that drive the
timing rule of :meth:`VirtualRank.settle`:

* ``avail``: when the operation can complete at the earliest (``bsim``: the
  send time; ``loggp``: the arrival of the data or the end of injection);
* ``cost``: the time the owner still spends after ``avail`` (``bsim``: the
  whole message cost; ``loggp``: the receive overhead ``o``);
* ``partner``: when the partner called its matching operation (what is wait).

Until then ``avail`` is ``None``.
"""

from __future__ import annotations

from typing import Any, cast

from ...constants import ANY_SOURCE, ANY_TAG, COLLECTIVE, ERR_REQUEST, UNDEFINED, ReqKind
from ...engine.rank import VirtualRank, current
from ...engine.request_state import RankState, RequestState, note_copy, origin_of
from ...errors import MPIUsageError
from ..common.handles import HandleValues, subclassable, sync_addressed
from .multiple_completions import (
    RequestSets,
    active,
    check_owner,
    empty_status,
    release_statuses,
    wait_all,
)
from .status import Status

try:   # C types of hand_out's locals when compiled (request.pxd)
    import cython
except ImportError:
    from ...engine import pure_cython as cython

__all__ = ["hand_out", "Request", "Prequest", "Status", "REQUEST_NULL", "SEND", "RECV", "DONE"]

# hot path: the kinds as module globals (an Enum attribute lookup costs several times a global's)
SEND, RECV, DONE = ReqKind.SEND, ReqKind.RECV, ReqKind.DONE


class ProgramSubclasses:
    """Mixed into :class:`Request`: a program's subclass whose ``__new__`` calls
    ``super().__new__(cls, request)`` gets a base taking that argument (a ``__new__`` on
    ``Request`` would slow every request; compiled, an extension type cannot define
    ``__init_subclass__`` itself)."""

    __slots__ = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__new__" in cls.__dict__ and not cls.__dict__.get("_takes_args"):
            cls.__bases__ = tuple(subclassable(b, Request) for b in cls.__bases__)


class Request(RequestState, RequestSets, HandleValues, ProgramSubclasses):
    """Handle of a nonblocking operation (mpi4py's ``MPI.Request``).

    Truthy while pending, falsy once completed (then ``REQUEST_NULL``).  ``Wait``, ``Test``
    and the list methods refuse another rank's request or a non-request in a list.

    Shared with the engine (not mpi4py API):

    * identity: ``owner`` (the posting :class:`~bsim.engine.rank.VirtualRank`),
      ``kind`` (:class:`~bsim.constants.ReqKind`; ``DONE`` once completed),
      ``call`` (the MPI call, for reports);
    * matching of a receive (``bsim.engine.matching``): ``ctx`` (communicator
      context), ``src`` (world rank, ``ANY_SOURCE`` or ``COLLECTIVE``), ``tag``,
      ``t_post`` (the owner's clock at the post), ``rinfo`` (parsed receive buffer
      or None);
    * timing (:meth:`~bsim.engine.rank.VirtualRank.settle`): ``avail``, ``cost``,
      ``partner`` as in the module docstring, set by :meth:`resolve`; ``waited``
      (the owner is blocked on it);
    * results: ``envelope`` (source rank in the communicator, tag, bytes) for the
      status, ``payload`` (pickled object or bytes), ``lower`` (a lowercase call:
      unpickle at completion), ``error`` (raised by :meth:`finish`), ``post``
      (nonblocking collectives' completion step), ``flow`` (the matched message,
      for traces), ``cancelled``, ``handed`` (counted in ``owner.open_requests``);
    * methods: :meth:`resolve` (the engine sets the times), :meth:`finish`
      (completion), :meth:`describe` (reports), ``Prequest.reset``.
    """

    __slots__ = ()
    # compiled, an instance's __module__ (pickle's lookup of REQUEST_NULL) is read from the
    # first class of its MRO that has one in its dict: without this, a Python base's
    __module__ = __name__
    _handle_kind = "Request"

    def _handle_identity(self) -> object | None:
        """What copies of this request share (None once it is null)."""
        return origin_of(self) if self else None

    def _adopt_handle(self, other: Request) -> None:
        """Become a copy of *other*'s request, whose handle a program wrote into this one's
        memory (``MPI._addressof``; the fields are copied by ``handles._sync``)."""
        if other:
            note_copy(self, other)

    # -- mpi4py surface ----------------------------------------------------
    def __bool__(self) -> bool:
        return self.kind != DONE

    def __eq__(self, other: object) -> bool:
        """The same request, or both null (complete): a done request is ``REQUEST_NULL``."""
        if not isinstance(other, Request):
            return NotImplemented
        sync_addressed(self, other)   # a handle written at _addressof (compiled: not wrapped)
        if self is other or (not self and not other):
            return True
        return origin_of(self) is origin_of(other)

    def __hash__(self) -> int:
        """mpi4py's handles are unhashable."""
        raise TypeError(f"unhashable type: '{type(self).__name__}'")

    def __reduce__(self) -> Any:
        """``REQUEST_NULL`` pickles as itself, another null request as a copy of it; a live
        request cannot leave its rank."""
        if self is REQUEST_NULL:
            return "REQUEST_NULL"
        if not self:
            return (type(self), (REQUEST_NULL,))
        raise ValueError(f"cannot pickle {self!r}")

    @classmethod
    def get_status_all(cls, requests: list[Request],
                       statuses: list[Status] | None = None) -> bool:
        """Whether every request is complete, without completing any (one poll if not)."""
        array = [Status() for _ in requests]   # filled as Waitall's (release_statuses)
        done = all([r._peek(array[i]) for i, r in enumerate(requests)])
        release_statuses(statuses, array if done else [Status() for _ in requests],
                         len(requests))   # not all complete: left empty (MPICH)
        return _polled(requests, done, "Get_status_all")

    @classmethod
    def get_status_any(cls, requests: list[Request],
                       status: Status | None = None) -> tuple[int, bool]:
        """``(index, True)`` of a complete request, ``(UNDEFINED, False)`` if none is."""
        pending = [i for i, r in enumerate(requests) if r]
        if not pending:
            if status is not None:
                empty_status(status)
            return UNDEFINED, True
        for i in pending:
            if requests[i]._peek(status):
                return i, True
        _polled(requests, False, "Get_status_any")
        return UNDEFINED, False

    @classmethod
    def get_status_some(cls, requests: list[Request],
                        statuses: list[Status] | None = None) -> list[int] | None:
        """Indices of the complete active requests (None when none is active)."""
        pending = [i for i, r in enumerate(requests) if r]
        if not pending:
            return None
        array = [Status() for _ in requests]   # entry k: the k-th complete request's
        done: list[int] = []
        for i in pending:
            if requests[i]._peek(array[len(done)]):
                done.append(i)
        release_statuses(statuses, array, len(done))
        _polled(requests, bool(done), "Get_status_some")
        return done

    Get_status_all = get_status_all
    Get_status_any = get_status_any
    Get_status_some = get_status_some

    def Wait(self, status: Status | None = None) -> bool:
        """Wait for completion."""
        wait_for(self, status)   # not a subclass's own ``wait`` (mpi4py's subclasses)
        return True

    def wait(self, status: Status | None = None) -> Any:
        """Wait for completion; return the received object (lowercase receives)."""
        return wait_for(self, status)

    def Test(self, status: Status | None = None) -> bool:
        """Test for completion."""
        return Request.test(self, status)[0]

    def test(self, status: Status | None = None) -> tuple[bool, Any]:
        """Test for completion; return ``(flag, object or None)``."""
        if self.kind == DONE:
            if status is not None:
                empty_status(status)
            return True, None
        owner = check_owner(self, "Test")
        owner.ops += 1
        owner.sync(self.call + ".Test", True)
        if self.avail is not None and self.avail <= owner.engine.now:
            owner.settle([self], self.call + ".Test")
            return True, self.finish(status)
        owner.engine.protocol.poll(owner, self.call + ".Test")
        return False, None

    def Get_status(self, status: Status | None = None) -> bool:
        """Whether complete (fills *status* if so) without completing it.

        As ``Test`` without the completion: a request not yet complete is a poll
        (``poll_time`` of wait), so ``while not req.Get_status(): pass`` ends.  A
        receive that completed in error (truncated: ``ERR_TRUNCATE``) raises its error
        after filling *status*, and stays active, as in MPICH (MPI 4.1 Sec. 3.7.3, 3.2.5).
        """
        done = self._peek(status)
        if done and self.kind != DONE and self.error is not None:
            raise self.error   # a truncated receive: ERR_TRUNCATE, as MPICH (and Wait) gives
        return _polled([self], done, "Get_status")

    get_status = Get_status

    def _peek(self, status: Status | None) -> bool:
        """Whether complete at the owner's present (after a sync); fill *status* if so."""
        if self.kind == DONE or self.owner is None:
            if status is not None:
                empty_status(status)
            return True
        owner = self.owner
        owner.sync(self.call + ".Get_status", True)
        done = self.avail is not None and self.avail <= owner.engine.now
        if done and status is not None:
            if self.envelope is not None:
                status._fill(*self.envelope)
            status.cancelled = self.cancelled
        return done

    def Cancel(self) -> None:
        """Cancel a receive no message has matched by the caller's clock: it completes at
        once, ``status.cancelled`` set.  Sends and matched receives complete normally
        (MPI lets a cancel fail); a collective's request may not be cancelled."""
        self._not_null("Cancel")
        self._not_collective("Cancel")
        if self.kind != RECV or self.avail is not None:
            return
        owner = check_owner(self, "Cancel")
        owner.sync(self.call + ".Cancel")   # what has matched by this rank's own time
        box = owner.box
        if box is not None and self in box.posted:
            box.posted.remove(self)
            self.cancelled = True
            self.envelope = (ANY_SOURCE, ANY_TAG, 0)
            self.resolve(owner.clock, 0.0, owner.clock)

    cancel = Cancel

    def _not_collective(self, call: str) -> None:
        if self.kind is not DONE and (self.post is not None or self.src == COLLECTIVE):
            raise MPIUsageError(f"rank {self.owner.rank}: Request.{call} of a collective's "
                                f"request ({self.call}) is erroneous (MPI 4.1 §6.12): complete "
                                f"it with Wait or Test", error_class=ERR_REQUEST)

    def _not_null(self, call: str) -> None:   # ERR_REQUEST on REQUEST_NULL itself
        if self is REQUEST_NULL:
            raise MPIUsageError(f"Request.{call} on REQUEST_NULL", error_class=ERR_REQUEST)

    def Free(self) -> None:
        """Release the handle; the operation still completes (not a collective's)."""
        self._not_null("Free")
        self._not_collective("Free")
        self.kind = DONE
        if self.handed:
            self.handed = False
            self.owner.open_requests -= 1

    def free(self) -> None:
        """mpi4py's lowercase ``free``: :meth:`Free` (of this class or a subclass) unless
        the request is null or ``REQUEST_NULL`` itself."""
        if self and self is not REQUEST_NULL:
            self.Free()

    # class methods over lists --------------------------------------------
    @classmethod
    def Waitall(cls, requests: list[Request], statuses: list[Status] | None = None) -> bool:
        """Wait for all requests.  One that fails: ``ERR_IN_STATUS``, and with *statuses*
        the later ones stay active (``request_sets.finish_all``, MPI 4.1 Sec. 3.7.5)."""
        wait_all(requests, statuses, "Waitall", statuses is not None, results=False)
        return True

    @classmethod
    def waitall(cls, requests: list[Request], statuses: list[Status] | None = None) -> list[Any]:
        """Wait for all requests; return the received objects (errors as ``Waitall``
        given statuses: mpi4py always passes MPI an array of them)."""
        return wait_all(requests, statuses, "Waitall", True)

    @classmethod
    def Waitany(cls, requests: list[Request], status: Status | None = None) -> int:
        """Wait for any request; return its index (``UNDEFINED`` if none is active)."""
        return cls.waitany(requests, status)[0]

    @classmethod
    def waitany(cls, requests: list[Request], status: Status | None = None) -> tuple[int, Any]:
        """Wait for any request; return ``(index, object)``."""
        try:
            idx = [i for i, r in enumerate(requests) if r.kind != DONE]
        except AttributeError:
            active(requests, "Waitany")   # raises the clear error
            raise
        if not idx:   # no active request: MPI returns UNDEFINED and an empty status
            if status is not None:
                empty_status(status)
            return UNDEFINED, None
        owner = check_owner(requests[idx[0]], "Waitany")
        owner.ops += 1
        k = owner.settle_any([requests[i] for i in idx], "Waitany")
        i = idx[k]
        return i, requests[i].finish(status)

    @classmethod
    def Testall(cls, requests: list[Request], statuses: list[Status] | None = None) -> bool:
        """Test whether all requests are complete; if so complete them."""
        return cls.testall(requests, statuses)[0]

    @classmethod
    def testall(cls, requests: list[Request],
                statuses: list[Status] | None = None) -> tuple[bool, list[Any] | None]:
        """``(flag, objects)``: complete all requests if all can complete now."""
        pending = active(requests, "testall", unique=True)
        if not pending:
            return True, wait_all(requests, statuses, "Testall", False)
        owner = check_owner(pending[0], "Testall")
        owner.ops += 1
        owner.sync("Testall", True)
        now = owner.engine.now
        if all(r.avail is not None and r.avail <= now for r in pending):
            return True, wait_all(requests, statuses, "Testall", False)   # none left active
        owner.engine.protocol.poll(owner, "Testall")
        release_statuses(statuses, [Status() for _ in requests], len(requests))   # emptied
        return False, None

    @classmethod
    def Testany(cls, requests: list[Request], status: Status | None = None) -> tuple[int, bool]:
        """``(index, flag)``: complete one request if one can complete now."""
        i, flag, _ = cls.testany(requests, status)
        return i, flag

    @classmethod
    def testany(cls, requests: list[Request],
                status: Status | None = None) -> tuple[int, bool, Any]:
        """``(index, flag, object)``."""
        pending = active(requests, "testany")
        if not pending:
            if status is not None:
                empty_status(status)
            return UNDEFINED, True, None
        owner = check_owner(pending[0], "Testany")
        owner.sync("Testany", True)
        now = owner.engine.now
        for i, r in enumerate(requests):
            if r.kind != DONE and r.avail is not None and r.avail <= now:
                return i, True, r.wait(status)
        owner.ops += 1
        owner.engine.protocol.poll(owner, "Testany")
        return UNDEFINED, False, None

    def describe(self) -> str:
        """The call with its matching arguments, e.g. ``Irecv(source=3, tag=7)`` (world ranks)."""
        if self.kind == RECV and self.src == COLLECTIVE:
            return f"{self.call} (collective)"
        if self.kind == RECV:
            src = "ANY_SOURCE" if self.src == ANY_SOURCE else f"world {self.src}"
            tag = "ANY_TAG" if self.tag == ANY_TAG else self.tag
            return f"{self.call}(source={src}, tag={tag})"
        return self.call

    def __repr__(self) -> str:
        state = "done" if self.kind == DONE else "pending"
        return f"<Request {self.describe()} {state}>"


class Prequest(Request):
    """A persistent request (``Send_init``/``Recv_init``): ``Start`` it, wait, start again.

    Created inactive; an inactive request is ignored by ``Wait``/``Waitall`` and
    stays truthy until ``Free`` (mpi4py semantics for persistent handles).
    """

    __slots__ = ("_issue", "_freed")
    _issue: Any

    def __init__(self, owner: VirtualRank | Request | None = None, kind: ReqKind = DONE,
                 call: str = "REQUEST_NULL", issue: Any = None) -> None:
        if isinstance(owner, Request) and owner and not isinstance(owner, Prequest):
            raise TypeError(f"Prequest(): expected a persistent request, got {owner!r}")
        super().__init__(owner, DONE, call)
        if isinstance(owner, Request):   # mpi4py's Prequest(request): the same handle
            self._issue = getattr(owner, "_issue", None)
            self._freed = getattr(owner, "_freed", owner.owner is None)
            return
        self._issue = issue        # issue(self): posts the operation into this request
        self._freed = issue is None   # Prequest(): a null persistent request

    def __bool__(self) -> bool:
        return not self._freed

    def Start(self) -> None:
        """Start the operation (the request must be inactive)."""
        me = current()
        if self.owner is not me:
            raise MPIUsageError(f"rank {me.rank}: Start: request {self!r} belongs to rank "
                                f"{self.owner.rank if self.owner else '?'}")
        if self.kind != DONE:
            raise MPIUsageError(f"rank {me.rank}: Start: {self.call} is already active")
        if self._freed:
            raise MPIUsageError(f"rank {me.rank}: Start: {self.call} was freed")
        self._issue(self)
        hand_out(self)

    @classmethod
    def Startall(cls, requests: list[Prequest]) -> None:
        """Start every request of the list."""
        for r in requests:
            r.Start()

    def Free(self) -> None:
        """Release the persistent request."""
        self._freed = True
        Request.Free(self)

    def reset(self, kind: ReqKind) -> None:
        """Make this request carry a new instance of its operation."""
        self.kind = kind
        self.avail = None
        self.cost = 0.0
        self.partner = 0.0
        self.waited = False
        self.envelope = None
        self.payload = None
        self.error = None
        self.flow = None


def _polled(requests: list[Request], done: bool, call: str) -> bool:
    """*done*; when False, a poll by the owner of the first pending request (as ``Test``)."""
    if not done:
        owner = next((r.owner for r in requests if r and r.owner is not None), None)
        if owner is not None:
            owner.engine.protocol.poll(owner, call)
    return done


def wait_for(req: Request, status: Status | None) -> Any:
    """``Request.wait``: wait for *req*'s completion; return the received object (lowercase
    receives).  A function, so that ``Wait`` calls it in C when compiled (``request.pxd``)."""
    if req.kind == DONE:
        if status is not None:
            empty_status(status)
        return None
    owner = check_owner(req, "Wait")
    owner.ops += 1
    owner.settle_one(req, req.call + ".Wait")
    return req.finish(status)


@cython.locals(r=RequestState, owner=RankState)
def hand_out(req: Request) -> Request:
    """Count *req* as given to the program until it completes or is freed.

    Requests still open when a rank finishes are reported (``Result.pending_requests``).
    """
    r = req   # (compiled, its fields and its owner's count are C fields)
    if not r.handed:
        r.handed = True
        owner = r.owner
        owner.open_requests += 1
    return req


REQUEST_NULL = Request(cast("VirtualRank", None), DONE, "REQUEST_NULL")   # never waited on
