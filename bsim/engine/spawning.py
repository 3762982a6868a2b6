"""Virtual ranks added while a run goes on: the processes ``MPI.Comm.Spawn`` starts.

A spawned process is a virtual rank like the others, numbered
after every rank that exists when it is created: the world ranks of a run of ``n``
ranks are ``0 .. n-1``, the first spawned processes ``n, n+1, ...`` in order of
creation (each call's processes consecutive).  Those numbers are the ranks' identity
inside bsim (message routing, event keys, the network's placement, the result's
per-rank arrays); what the program sees as its ``MPI.COMM_WORLD`` is its
:class:`SpawnedWorld` (``VirtualRank.world``; None for the run's own ranks), the
processes started by the same call, numbered from 0.

Placement (``NetworkModel.place_more``): the network's mapping places the new ranks
as it would place ranks ``n, n+1, ...`` of a larger run, leaving every earlier rank
where it is; a network without room for them refuses the call.  Process start-up is
not priced: a spawned rank starts at the simulated time of the call that created it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .rank import RankGreenlet, VirtualRank

if TYPE_CHECKING:
    from .core import Engine

__all__ = ["SpawnedWorld", "add_ranks", "world_members"]


class SpawnedWorld:
    """The ``MPI.COMM_WORLD`` of the ranks one ``Spawn`` call started.

    ``base``: the first one's engine rank; ``size``; ``members`` (engine ranks, in
    world-rank order); ``coll_ctx`` (the context of its collectives, distinct from
    every other world's); ``parent`` (the intercommunicator with the spawning group,
    set when the connection is made); ``appnum`` (engine rank -> index of its command
    in a ``Spawn_multiple``); ``info`` (anything the MPI layer keeps with the world).
    """

    __slots__ = ("base", "size", "members", "coll_ctx", "parent", "appnum", "info")

    def __init__(self, base: int, size: int, appnum: dict[int, int], info: Any = None
                 ) -> None:
        self.base = base
        self.size = size
        self.members = tuple(range(base, base + size))
        self.coll_ctx: Any = ("spawned world", base)
        self.parent: Any = None
        self.appnum = appnum
        self.info = info


def world_members(vr: VirtualRank) -> tuple[int, ...]:
    """Engine ranks of *vr*'s ``MPI.COMM_WORLD``, in rank order."""
    world = vr.world
    return vr.engine.world_group if world is None else world.members


def add_ranks(engine: Engine, programs: list[Callable[[VirtualRank], Any]], t: float,
              world_of: Callable[[int], SpawnedWorld],
              argv: list[list[str]] | None = None) -> list[VirtualRank]:
    """Create one rank per program, numbered after every existing rank, each starting
    at simulated time *t* (>= now) in the world ``world_of(its number)``.

    The caller has checked that the run can take them (one host process; a network
    with room: ``NetworkModel.place_more``).  *argv*: each rank's ``sys.argv``,
    installed at each of its switches when the run has private modules
    (:class:`~bsim.engine.private_modules.PrivateModules`).
    """
    if engine.host_of is not None:
        raise RuntimeError("ranks cannot be added to a run spread over host processes")
    if t < engine.now:
        raise ValueError(f"spawned ranks cannot start at t={t!r} before now={engine.now!r}")
    made = []
    for i, program in enumerate(programs):
        vr = VirtualRank(len(engine.ranks), engine)
        vr.world = world_of(vr.rank)
        engine.ranks.append(vr)   # the same list as engine.local_ranks (one host process)
        vr.clock = t
        RankGreenlet(vr, program, engine.main)
        if argv is not None and engine.private_modules is not None:
            engine.private_modules.set_argv(vr.rank, argv[i])
        vr.wake(t)
        engine.unfinished += 1
        made.append(vr)
    return made
