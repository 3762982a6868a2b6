# cython: annotation_typing=False
"""``RequestState``: what the engine reads and writes of a request, the base of ``Request``.

The engine's side of a request (its owner, what it matches, its three times, its results)
is kept apart from mpi4py's surface (``bsim/mpi/requests/request.py``, which documents
each field), so that a compiled build can make it an extension type
(``request_state.pxd``) whose fields the compiled hot path reads as C fields; ``Request``
adds the surface in Python above it.
"""

from __future__ import annotations

import pickle
import weakref
from typing import TYPE_CHECKING, Any

from ..constants import ANY_SOURCE, ANY_TAG, ReqKind

try:   # C types when compiled (bsim/engine/compiled.py, TYPED)
    import cython
except ImportError:
    from . import pure_cython as cython

if TYPE_CHECKING:
    from .rank import VirtualRank

__all__ = ["RankState", "RequestState", "STATE_FIELDS", "new_request", "note_copy",
           "origin_of"]

if not cython.compiled:   # compiled, a C function of request_state.pxd
    def alloc_instance(cls: type) -> Any:
        """``cls.__new__(cls)``."""
        return cls.__new__(cls)

# the wildcards as compiled constants (request_state.pxd: C integers, a request's
# fields' first values)
_ANY_SOURCE: int = ANY_SOURCE
_ANY_TAG: int = ANY_TAG

DONE = ReqKind.DONE

STATE_FIELDS = ("owner", "kind", "call", "ctx", "src", "tag", "avail", "cost", "partner",
                "t_post", "waited", "envelope", "payload", "lower", "rinfo", "error", "post",
                "flow", "cancelled", "handed")
"""The fields of a request's state, copied by ``Request(request)``."""
# (as Python; compiled, request_state.pxd) envelope is a property over raw_envelope
_SLOTS = tuple(["raw_envelope" if f == "envelope" else f for f in STATE_FIELDS]) + ("__weakref__",)

_ORIGINS: dict[int, Any] = {}
"""``id(copy) -> original`` of the live copies made by ``Request(request)``: kept here
while the copy lives, not in a field of every request (16 bytes a request:
``docs/benchmarks.md``, memory per idle rank)."""


def origin_of(req: Any) -> Any:
    """The request *req* is a copy of (``Request(request)``), or *req* itself."""
    return _ORIGINS.get(id(req), req)


def note_copy(copy: Any, of: Any) -> None:
    """List *copy* as a copy of the request *of* (of what *of* copies, if it is a copy)
    while *copy* lives."""
    _ORIGINS[id(copy)] = _ORIGINS.get(id(of), of)
    weakref.finalize(copy, _ORIGINS.pop, id(copy), None)


class RankState:
    """What a request reaches of its owner, the base of ``VirtualRank`` (``rank.py``):
    ``open_requests``, the nonblocking requests handed to the program and not completed,
    and :meth:`on_resolve`.  Declared here so that a compiled request reaches them as a C
    field and a C method (``rank.pxd`` cimports this module's types, so this one cannot
    cimport that one)."""

    __slots__ = ("open_requests",)

    def on_resolve(self, req: RequestState) -> None:
        """A request this rank is blocked on now knows when it completes: wake the rank
        when nothing else it waits for is unknown (``VirtualRank.on_resolve``; this base
        has no wait of its own)."""
        raise NotImplementedError(f"{type(self).__name__} does not wait on requests")


@cython.freelist(64)   # compiled, a freed request's memory is the next one's (below)
@cython.cclass
class RequestState:
    """The engine's side of a request (``Request`` in ``request.py`` documents the fields).

    Compiled, an extension type with a free list: up to 64 freed requests (of this type or
    of an extension subclass of its size, as ``Request``) keep their memory for the next
    ones, which skips CPython's allocator on the way in and out; a subclass defined in
    Python (``Prequest``, a program's) is allocated as usual."""

    __slots__ = _SLOTS

    def __init__(self, owner: VirtualRank | RequestState | None = None, kind: ReqKind = DONE,
                 call: str = "REQUEST_NULL") -> None:
        if kind is DONE:   # mpi4py's Request(request) or Request(); never an operation's
            if isinstance(owner, RequestState):
                # another object for the same handle, equal to it: a snapshot of its state
                # (no Python-level __new__: requests are made per operation, and a
                # __new__ doubled their cost)
                for slot in STATE_FIELDS:
                    setattr(self, slot, getattr(owner, slot))
                note_copy(self, owner)
                return
            if owner is not None and not isinstance(owner, RankState):   # a VirtualRank
                raise TypeError(f"{type(self).__name__}(): expected a Request, got "
                                f"{type(owner).__name__}")
        # the rank that posted it (None only for a null request, never waited on)
        self.owner: VirtualRank = owner   # type: ignore[assignment]
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
        self.raw_envelope: Any = None   # what envelope reads: a tuple, None or a Message
        self.payload: Any = None
        self.lower = False
        self.rinfo: Any = None   # the parsed receive buffer (bsim.mpi.data.buffers.BufInfo)
        self.error: BaseException | None = None
        self.post: Any = None   # nonblocking collectives: computes the result at completion
        self.flow: Any = None   # tracing: the matched Message
        self.cancelled = False
        self.handed = False   # given to the program: counted in owner.open_requests

    @property
    def envelope(self) -> tuple[int, int, int] | None:
        """``(source, tag, bytes)`` of a receive's status once a message matched it (the
        source's rank in the communicator; the bytes received); None before.  Kept as
        ``raw_envelope``: a tuple, or the matched message itself, whose fields are read
        here (``matching.transfer_payload``: no tuple made at every match; the message
        keeps no data once it is copied)."""
        env = self.raw_envelope
        return env if env is None or type(env) is tuple else _envelope_of(env)

    @envelope.setter
    def envelope(self, value: tuple[int, int, int] | None) -> None:
        self.raw_envelope = value

    def resolve(self, avail: float, cost: float, partner: float) -> None:
        """Set the times of the matched operation; wake the owner if it waits on it."""
        self.avail = avail
        self.cost = cost
        self.partner = partner
        if self.waited:
            owner = self.owner   # (a RankState when compiled: request_state.pxd)
            owner.on_resolve(self)

    def finish(self, status: Any) -> Any:
        """Mark completed; fill *status* (an ``MPI.Status`` or None); return the received
        object (lowercase)."""
        self.kind = DONE
        if self.handed:
            self.handed = False
            owner = self.owner   # (a RankState when compiled: request_state.pxd)
            owner.open_requests -= 1
        st = self.raw_envelope   # (a truncated receive's status too, as MPICH fills it)
        if status is not None and st is not None:
            status._fill(*(st if type(st) is tuple else _envelope_of(st)))
        if self.error is not None:
            err, self.error = self.error, None
            raise err
        if status is not None:
            status.cancelled = self.cancelled
        if self.post is not None:
            post, self.post = self.post, None
            return post()
        if self.lower:
            payload, self.payload = self.payload, None
            return pickle.loads(payload) if payload else None
        return None


def _envelope_of(msg: Any) -> tuple[int, int, int]:
    """The status envelope of the message *msg* that matched a receive in full."""
    return (msg.src_crank, msg.tag, msg.nbytes)


def new_request(cls: type, owner: RankState, kind: ReqKind, call: str) -> RequestState:
    """``cls(owner, kind, call)`` for an operation (*kind* not ``DONE``), made without
    the type call and the parsing of its arguments; compiled only (``RequestState``'s C
    allocation leaves every other field as ``__init__`` sets it: None, 0.0 or False; as
    Python the slots would stay unset, and the callers make ``cls(...)`` there)."""
    # RequestState's C allocation, called in C (the .pxd); *cls* is RequestState or one of
    # its extension subclasses (Request): read as one without a type test
    req = cython.cast(RequestState, alloc_instance(cls))
    req.owner = owner
    req.kind = kind
    req.call = call
    req.ctx = 0
    req.src = _ANY_SOURCE
    req.tag = _ANY_TAG
    return req
