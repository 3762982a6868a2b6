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

import pickle
from typing import TYPE_CHECKING, Any, cast

from ..constants import ANY_SOURCE, ANY_TAG, COLLECTIVE, UNDEFINED, ReqKind
from ..engine.rank import current
from ..errors import MPIUsageError
from .status import Status

if TYPE_CHECKING:
    from ..engine.rank import VirtualRank
    from .buffers import BufInfo

__all__ = ["hand_out", "Request", "Prequest", "Status", "REQUEST_NULL", "SEND", "RECV", "DONE"]

# hot path: the kinds as module globals (an Enum attribute lookup costs several times a global's)
SEND, RECV, DONE = ReqKind.SEND, ReqKind.RECV, ReqKind.DONE


class Request:
    """Handle of a nonblocking operation (mpi4py's ``MPI.Request``).

    Truthy while pending, falsy once completed (then it is ``REQUEST_NULL``).
    ``Wait``/``Test`` and the list methods raise :class:`~bsim.errors.MPIUsageError`
    when a rank uses another rank's request or a list holds a non-request.

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

    __slots__ = ("owner", "kind", "call", "ctx", "src", "tag", "avail", "cost",
                 "partner", "t_post", "waited", "envelope", "payload", "lower",
                 "rinfo", "error", "post", "flow", "cancelled", "handed", "_origin")

    def __init__(self, owner: VirtualRank | Request | None = None, kind: ReqKind = DONE,
                 call: str = "REQUEST_NULL") -> None:
        if isinstance(owner, Request):
            # mpi4py's Request(request): another object for the same handle, equal to it.
            # A snapshot of its state (no Python-level __new__: requests are made per
            # operation, and a __new__ doubled their cost)
            for slot in Request.__slots__:
                if slot != "_origin":
                    setattr(self, slot, getattr(owner, slot))
            self._origin = getattr(owner, "_origin", owner)
            return
        # the rank that posted it (None only for a null request, never waited on)
        self.owner: VirtualRank = cast("VirtualRank", owner)
        self.kind = kind
        self.call = call
        self.ctx: Any = 0      # communicator context: an int or a tuple
        self.src = ANY_SOURCE
        self.tag = ANY_TAG
        self.avail: float | None = None
        self.cost = 0.0
        self.partner = 0.0
        self.t_post = 0.0
        self.waited = False
        self.envelope: tuple[int, int, int] | None = None
        self.payload: Any = None
        self.lower = False
        self.rinfo: BufInfo | None = None
        self.error: BaseException | None = None
        self.post: Any = None   # nonblocking collectives: computes the result at completion
        self.flow: Any = None   # tracing: the matched Message
        self.cancelled = False
        self.handed = False   # given to the program: counted in owner.open_requests

    # -- engine side -------------------------------------------------------
    def resolve(self, avail: float, cost: float, partner: float) -> None:
        """Set the times of the matched operation; wake the owner if it waits on it."""
        self.avail = avail
        self.cost = cost
        self.partner = partner
        if self.waited:
            self.owner.on_resolve(self)

    def finish(self, status: Status | None) -> Any:
        """Mark completed; fill *status*; return the received object (lowercase)."""
        self.kind = DONE
        if self.handed:
            self.handed = False
            self.owner.open_requests -= 1
        if self.error is not None:
            err, self.error = self.error, None
            raise err
        st = self.envelope
        if status is not None and st is not None:
            status._fill(*st)
        if status is not None:
            status.cancelled = self.cancelled
        if self.post is not None:
            post, self.post = self.post, None
            return post()
        if self.lower:
            payload, self.payload = self.payload, None
            return pickle.loads(payload) if payload is not None else None
        return None

    # -- mpi4py surface ----------------------------------------------------
    def __bool__(self) -> bool:
        return self.kind != DONE

    def __eq__(self, other: object) -> bool:
        """The same request, or both null (complete): a done request is ``REQUEST_NULL``."""
        if not isinstance(other, Request):
            return NotImplemented
        if self is other or (not self and not other):
            return True
        return getattr(self, "_origin", self) is getattr(other, "_origin", other)

    __hash__ = object.__hash__

    @classmethod
    def get_status_all(cls, requests: list[Request],
                       statuses: list[Status] | None = None) -> bool:
        """Whether every request is complete, without completing any."""
        flags = [r.Get_status(statuses[i] if statuses else None)
                 for i, r in enumerate(requests)]
        return all(flags)

    @classmethod
    def get_status_any(cls, requests: list[Request],
                       status: Status | None = None) -> tuple[int, bool]:
        """``(index, True)`` of a complete request, ``(UNDEFINED, False)`` if none is."""
        active = [i for i, r in enumerate(requests) if r]
        if not active:
            return UNDEFINED, True
        for i in active:
            if requests[i].Get_status(status):
                return i, True
        return UNDEFINED, False

    @classmethod
    def get_status_some(cls, requests: list[Request],
                        statuses: list[Status] | None = None) -> list[int] | None:
        """Indices of the complete active requests (None when none is active)."""
        active = [i for i, r in enumerate(requests) if r]
        if not active:
            return None
        return [i for i in active if requests[i].Get_status(statuses[i] if statuses else None)]

    Get_status_all = get_status_all
    Get_status_any = get_status_any
    Get_status_some = get_status_some

    def Wait(self, status: Status | None = None) -> bool:
        """Wait for completion."""
        self.wait(status)
        return True

    def wait(self, status: Status | None = None) -> Any:
        """Wait for completion; return the received object (lowercase receives)."""
        if self.kind == DONE:
            return None
        owner = _check_owner(self, "Wait")
        owner.ops += 1
        owner.settle([self], self.call + ".Wait")
        return self.finish(status)

    def Test(self, status: Status | None = None) -> bool:
        """Test for completion."""
        return self.test(status)[0]

    def test(self, status: Status | None = None) -> tuple[bool, Any]:
        """Test for completion; return ``(flag, object or None)``."""
        if self.kind == DONE:
            return True, None
        owner = _check_owner(self, "Test")
        owner.ops += 1
        owner.sync(self.call + ".Test")
        if self.avail is not None and self.avail <= owner.engine.now:
            owner.settle([self], self.call + ".Test")
            return True, self.finish(status)
        owner.engine.protocol.poll(owner, self.call + ".Test")
        return False, None

    def Get_status(self, status: Status | None = None) -> bool:
        """Whether complete (fills *status* if so) without completing it."""
        if self.kind == DONE:
            return True
        done = self.avail is not None and self.avail <= current().engine.now
        if done and status is not None and self.envelope is not None:
            status._fill(*self.envelope)
        return done

    def Cancel(self) -> None:
        """Cancel a pending receive that no message has matched yet.

        The request then completes at once with ``status.cancelled`` set.  Sends,
        and receives already matched, are not cancelled (MPI allows a cancel to
        fail): they complete normally and report ``cancelled == False``.
        """
        if self.kind != RECV or self.avail is not None:
            return
        owner = _check_owner(self, "Cancel")
        box = owner.box
        if box is not None and self in box.posted:
            box.posted.remove(self)
            self.cancelled = True
            self.envelope = (ANY_SOURCE, ANY_TAG, 0)
            self.resolve(owner.clock, 0.0, owner.clock)

    def Free(self) -> None:
        """Release the handle; the operation still completes."""
        self.kind = DONE
        if self.handed:
            self.handed = False
            self.owner.open_requests -= 1

    # class methods over lists --------------------------------------------
    @classmethod
    def Waitall(cls, requests: list[Request], statuses: list[Status] | None = None) -> bool:
        """Wait for all requests."""
        cls.waitall(requests, statuses)
        return True

    @classmethod
    def waitall(cls, requests: list[Request], statuses: list[Status] | None = None) -> list[Any]:
        """Wait for all requests; return the received objects."""
        active = _active(requests, "Waitall")
        if active:
            owner = _check_owner(active[0], "Waitall")
            owner.ops += 1
            owner.settle(active, "Waitall")
        out = []
        for i, r in enumerate(requests):
            st = statuses[i] if statuses is not None and i < len(statuses) else None
            out.append(r.finish(st) if r.kind != DONE else None)
        return out

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
            _active(requests, "Waitany")   # raises the clear error
            raise
        if not idx:
            return UNDEFINED, None
        owner = _check_owner(requests[idx[0]], "Waitany")
        owner.ops += 1
        k = owner.settle_any([requests[i] for i in idx], "Waitany")
        i = idx[k]
        return i, requests[i].finish(status)

    @classmethod
    def Waitsome(cls, requests: list[Request],
                 statuses: list[Status] | None = None) -> list[int] | None:
        """Wait for at least one request; return the indices completed."""
        first, _ = cls.waitany(requests)
        if first == UNDEFINED:
            return None
        done = [first]
        now = current().engine.now
        for i, r in enumerate(requests):
            if i != first and r.kind != DONE and r.avail is not None and r.avail <= now:
                r.wait()
                done.append(i)
        return sorted(done)

    @classmethod
    def Testsome(cls, requests: list[Request],
                 statuses: list[Status] | None = None) -> list[int] | None:
        """Indices of the requests that can complete now, completing them (None: all inactive).

        Nothing completable is a poll (``poll_time`` of wait, as ``Test``).
        """
        active = _active(requests, "Testsome")
        if not active:
            return None
        owner = _check_owner(active[0], "Testsome")
        owner.sync("Testsome")
        now = owner.engine.now
        done = [i for i, r in enumerate(requests)
                if r.kind != DONE and r.avail is not None and r.avail <= now]
        for k, i in enumerate(done):
            st = statuses[k] if statuses is not None and k < len(statuses) else None
            requests[i].Wait(st)
        if not done:
            owner.ops += 1
            owner.engine.protocol.poll(owner, "Testsome")
        return done

    @classmethod
    def testsome(cls, requests: list[Request],
                 statuses: list[Status] | None = None) -> tuple[list[int] | None, list[Any]]:
        """``(indices, objects)`` of the requests that can complete now."""
        active = _active(requests, "testsome")
        if not active:
            return None, []
        owner = _check_owner(active[0], "testsome")
        owner.sync("testsome")
        now = owner.engine.now
        done = [i for i, r in enumerate(requests)
                if r.kind != DONE and r.avail is not None and r.avail <= now]
        objs = [requests[i].wait() for i in done]
        if not done:
            owner.ops += 1
            owner.engine.protocol.poll(owner, "testsome")
        return done, objs

    @classmethod
    def Testall(cls, requests: list[Request], statuses: list[Status] | None = None) -> bool:
        """Test whether all requests are complete; if so complete them."""
        return cls.testall(requests, statuses)[0]

    @classmethod
    def testall(cls, requests: list[Request],
                statuses: list[Status] | None = None) -> tuple[bool, list[Any] | None]:
        """``(flag, objects)``: complete all requests if all can complete now."""
        active = _active(requests, "testall")
        if not active:
            return True, [None] * len(requests)
        owner = _check_owner(active[0], "Testall")
        owner.ops += 1
        owner.sync("Testall")
        now = owner.engine.now
        if all(r.avail is not None and r.avail <= now for r in active):
            return True, cls.waitall(requests, statuses)
        owner.engine.protocol.poll(owner, "Testall")
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
        active = _active(requests, "testany")
        if not active:
            return UNDEFINED, True, None
        owner = _check_owner(active[0], "Testany")
        owner.sync("Testany")
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

    def __init__(self, owner: VirtualRank, kind: ReqKind, call: str, issue: Any) -> None:
        super().__init__(owner, DONE, call)
        self._issue = issue        # issue(self): posts the operation into this request
        self._freed = False

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


def _active(requests: list[Request], call: str) -> list[Request]:
    """The requests of *requests* still pending; :class:`MPIUsageError` for a non-request."""
    try:
        return [r for r in requests if r.kind != DONE]
    except AttributeError:   # checked only on failure: the normal path pays nothing
        bad = next(i for i, r in enumerate(requests) if not isinstance(r, Request))
        vr = current()
        raise MPIUsageError(f"rank {vr.rank}: {call}: requests[{bad}] is {requests[bad]!r}, "
                            f"not a Request (use MPI.REQUEST_NULL for an empty slot)") from None


def hand_out(req: Request) -> Request:
    """Count *req* as given to the program until it completes or is freed.

    Requests still open when a rank finishes are reported (``Result.pending_requests``).
    """
    if not req.handed:
        req.handed = True
        req.owner.open_requests += 1
    return req


def _check_owner(req: Request, call: str) -> VirtualRank:
    me = current()
    if req.owner is not me:
        owner = req.owner.rank if req.owner is not None else "?"
        raise MPIUsageError(f"rank {me.rank}: {call}: request {req!r} belongs to rank {owner}")
    return me


REQUEST_NULL = Request(cast("VirtualRank", None), DONE, "REQUEST_NULL")   # never waited on
