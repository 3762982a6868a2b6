"""What the engine needs of the MPI surface's objects, as types the engine owns.

The engine sits below :mod:`bsim.mpi` and imports nothing from it, not even for typing
(``tests/test_architecture.py`` holds it). Requests and communicators are made by the
surface (``bsim.mpi.requests.request.Request``, ``bsim.mpi.comms.comm.Comm``); the engine reads and
sets the parts described here, and makes a request of its own (an expanded collective's
rounds, a collective's completion) with the class the surface gave the engine
(``Engine.request_class``, set by :func:`bsim.simulate`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..constants import ReqKind
    from .rank import VirtualRank

__all__ = ["Request", "Comm"]


class Request(Protocol):
    """A nonblocking operation as the engine sees it.

    * identity: ``owner`` (the posting rank), ``kind`` (``SEND``, ``RECV``, ``DONE`` once
      completed), ``call`` (the MPI call, for reports);
    * matching of a receive (:mod:`bsim.engine.matching`): ``ctx`` (communicator
      context), ``src`` (world rank, ``ANY_SOURCE`` or ``COLLECTIVE``), ``tag``, ``t_post``
      (the owner's clock at the post), ``rinfo`` (the parsed receive buffer or None);
    * timing (:meth:`bsim.engine.rank.VirtualRank.settle`): ``avail`` (when it can
      complete at the earliest; None until its partner acted), ``cost`` (what the owner
      still spends after ``avail``), ``partner`` (when the partner called its matching
      operation: what is wait), ``waited`` (the owner is blocked on it);
    * results: ``envelope`` (source rank in the communicator, tag, bytes), ``payload``,
      ``lower`` (a lowercase call: unpickle at completion), ``error`` (raised at
      completion), ``post`` (a nonblocking collective's completion step), ``flow`` (the
      matched message, for traces), ``cancelled``, ``handed``.
    """

    owner: VirtualRank
    kind: ReqKind
    call: str
    ctx: Any
    src: int
    tag: int
    t_post: float
    rinfo: Any
    avail: float | None
    cost: float
    partner: float
    waited: bool
    envelope: tuple[int, int, int] | None
    payload: Any
    lower: bool
    error: BaseException | None
    post: Any
    flow: Any
    cancelled: bool
    handed: bool

    def resolve(self, avail: float, cost: float, partner: float) -> None:
        """Set the three times once the partner has acted."""

    def finish(self, status: Any) -> Any:
        """Complete (filling *status*, a ``Status`` or None): the received object, or
        raise ``error``."""

    def describe(self) -> str:
        """The call, peer and tag, for reports."""

    def reset(self, kind: ReqKind) -> None:
        """A persistent request started again."""


class Comm(Protocol):
    """A communicator as a collective's rules see it, from the calling rank *vr*: its
    members (world ranks, in communicator order), the context of its collectives, rank
    lookups, and its kind (intra- or intercommunicator, ``COMM_NULL``)."""

    kind: Any
    coll_ctx: Any

    def members(self, vr: VirtualRank) -> tuple[int, ...]:
        """The world ranks of the group a collective of *vr* spans."""

    def coll_context(self, vr: VirtualRank) -> Any:
        """The context that keeps this communicator's collectives apart."""

    def rank_of(self, vr: VirtualRank) -> int:
        """*vr*'s rank in the communicator."""

    def size_of(self, vr: VirtualRank) -> int:
        """The size of the group a collective of *vr* spans."""

    def world_rank(self, crank: int, vr: VirtualRank) -> int:
        """The world rank of communicator rank *crank*, as *vr* sees it."""
