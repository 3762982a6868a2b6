"""User-level failure mitigation (ULFM, the MPI 5.0 fault-tolerance chapter as MPICH and
mpi4py 4.1 offer it): ``Comm.Revoke``, ``Is_revoked``, ``Get_failed``, ``Ack_failed``,
``Agree``/``Iagree`` and ``Shrink``/``Ishrink``.

bsim simulates no process failures, so every failed group is empty and nothing is
acknowledged; what these calls do in a run without failures is what they do here:

* ``Revoke`` is local and immediate for every member (a real library propagates it in the
  background; in a simulation it reaches all members at once, so no rank is left waiting
  in a call the others abandoned).  Afterwards every point-to-point and collective call on
  the communicator, by any member, raises ``MPI.Exception`` of class ``ERR_REVOKED``;
  local queries, ``Free``, ``Agree`` and ``Shrink`` still work.  A call already blocked
  when the revocation comes is not interrupted (ULFM would complete it with
  ``ERR_REVOKED``): if nothing else completes it, the run ends in a deadlock report.
  The predefined ``COMM_WORLD`` and ``COMM_SELF`` cannot be revoked in bsim (they are
  shared by every run of the process): revoke a duplicate.
* ``Agree(flag)`` is the bitwise AND of the members' flags, ``Iagree`` its nonblocking
  form on a one-int buffer; both run on a context of their own, so an agreement is
  independent of the order of the communicator's other collectives (as MPICH's).
  Timing: an allreduce of one int (``docs/collectives.md``).
* ``Shrink``/``Ishrink`` duplicate the communicator (no member has failed): timing of
  ``Dup``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...constants import IN_PLACE, CommKind
from ...engine.rank import current
from ...errors import MPIUsageError, MPIUsageTypeError
from ..collectives import calls as collective_calls
from ..collectives.ops import BAND
from ..data.datatypes import PREDEFINED
from ..management.groups import Group
from .methods import CommCalls

if TYPE_CHECKING:
    from ..requests.request import Request
    from .comm import Comm

__all__ = ["FaultTolerance", "Revoke", "Is_revoked", "Get_failed", "Ack_failed", "Agree",
           "Iagree", "Shrink", "Ishrink", "ERR_REVOKED"]

ERR_REVOKED = 13   # mpi4py 4.1.2 on MPICH (ERR_REVOKED = ERR_PROC_FAILED = 13)
INT = PREDEFINED["INT"]
_REVOKED_CLASSES: dict[type, type] = {}


def _refuse(name: str) -> Any:
    def revoked(comm: Comm, *args: Any, **kwargs: Any) -> Any:
        raise MPIUsageError(f"rank {current().rank}: {name} on a revoked communicator "
                            f"(Comm.Revoke)", error_class=ERR_REVOKED)
    revoked.__name__ = revoked.__qualname__ = name
    revoked.__doc__ = f"``ERR_REVOKED``: {name} on a revoked communicator."
    return revoked


_CALLS = [n for n in vars(CommCalls) if not n.startswith("_")] + [
    "Neighbor_allgather", "Neighbor_alltoall", "neighbor_allgather", "neighbor_alltoall"]
_REFUSALS = {n: _refuse(n) for n in _CALLS}


class _Revoked:
    """Marks a revoked communicator's class (made per base class by :func:`_revoked`)."""

    __slots__ = ()


def _revoked(cls: type) -> type:
    """The revoked variant of communicator class *cls*: its communication calls refuse."""
    out = _REVOKED_CLASSES.get(cls)
    if out is None:
        namespace: dict[str, Any] = {"__slots__": (), "__module__": cls.__module__}
        namespace.update({n: f for n, f in _REFUSALS.items() if hasattr(cls, n)})
        out = _REVOKED_CLASSES[cls] = type(cls.__name__, (_Revoked, cls), namespace)
    return out


def Revoke(comm: Comm) -> None:
    """Revoke *comm* for all its members (see the module docstring)."""
    vr = current()
    comm.rank_of(vr)
    if comm.kind != CommKind.GROUP:
        raise MPIUsageError(f"rank {vr.rank}: Revoke on {comm!r}: bsim cannot revoke the "
                            f"predefined communicators (every run shares them); revoke a "
                            f"Dup of it")
    if not isinstance(comm, _Revoked):
        comm.__class__ = _revoked(type(comm))


def Is_revoked(comm: Comm) -> bool:
    """Whether *comm* has been revoked."""
    comm._not_null("Is_revoked")
    return isinstance(comm, _Revoked)


def Get_failed(comm: Comm) -> Group:
    """The members known to have failed: none (bsim simulates no failures)."""
    comm.rank_of(current())
    return Group(())


def Ack_failed(comm: Comm, num_to_ack: int | None = None) -> int:
    """Acknowledge up to *num_to_ack* failures: 0 acknowledged (none happened)."""
    comm.rank_of(current())
    return 0


def _agreement_comm(comm: Comm) -> Comm:
    """The communicator's agreement context, shared by its members (on an
    intercommunicator, the members of both groups: ULFM agrees over their union)."""
    vr = current()
    ctx = ("agree", comm.coll_context(vr))
    sides = getattr(comm, "sides", None)
    members = tuple(sides[0]) + tuple(sides[1]) if sides else comm.members(vr)
    return comm.derive(vr, ctx, members, f"{comm.label}.agree")


def Agree(comm: Comm, flag: int) -> int:
    """The bitwise AND of every member's *flag* (collective)."""
    if not isinstance(flag, int):
        raise MPIUsageTypeError(f"rank {current().rank}: Agree: the flag must be an int, "
                                f"got {type(flag).__name__}")
    result: int = collective_calls.allreduce(_agreement_comm(comm), int(flag), op=BAND)
    return result


def Iagree(comm: Comm, flag: Any) -> Request:
    """Nonblocking :func:`Agree` on a buffer of one C int, which it overwrites."""
    vr = current()
    try:
        view = memoryview(flag)
    except TypeError:
        raise MPIUsageTypeError(f"rank {vr.rank}: Iagree: the flag must be a buffer of one "
                                f"int, got {type(flag).__name__}") from None
    if view.nbytes != INT.size:
        raise MPIUsageError(f"rank {vr.rank}: Iagree: the flag buffer holds {view.nbytes} "
                            f"bytes, not one int ({INT.size})")
    return collective_calls.Iallreduce(_agreement_comm(comm), IN_PLACE, [flag, INT], BAND)


def Shrink(comm: Comm) -> Comm:
    """A communicator of the members that have not failed: a duplicate (collective)."""
    return comm.Dup()


def Ishrink(comm: Comm) -> tuple[Comm, Request]:
    """Nonblocking :func:`Shrink`: ``(new communicator, request)``."""
    return comm.Idup()


class FaultTolerance:
    """The ULFM calls of a communicator (a mixin of ``Comm``; no failures are simulated)."""

    __slots__ = ()

    Revoke = Revoke
    Is_revoked = Is_revoked
    Get_failed = Get_failed
    Ack_failed = Ack_failed
    Agree = Agree
    Iagree = Iagree
    Shrink = Shrink
    Ishrink = Ishrink
