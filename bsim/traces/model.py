"""A recorded run as bsim replays it: per rank, an ordered list of actions.

Every reader (:mod:`.rawlog` for ``bsim record``'s own files, :mod:`.otf2io` for OTF2,
:mod:`.ti` for SimGrid's time-independent traces) produces a :class:`Trace`; replay
(:mod:`.replay`) and the skeleton generator (:mod:`.skeleton`) consume only this form.

An action is a tuple whose first item names it (sizes in bytes, times in seconds,
``comm`` a communicator id: 0 is ``MPI_COMM_WORLD``, 1 ``MPI_COMM_SELF``, others made by a
``split`` action; peers and roots are ranks of that communicator)::

    ("compute", seconds)                     time between two MPI calls
    ("send"|"ssend", comm, dest, tag, nbytes)
    ("recv", comm, source, tag, nbytes)      source as matched (never ANY_SOURCE)
    ("isend"|"issend"|"irecv", comm, peer, tag, nbytes, req)
    ("wait", (req, ...))                     the requests a wait or test completed
    ("sendrecv", comm, dest, sendtag, sendbytes, source, recvtag, recvbytes)
    ("barrier", comm)
    ("bcast"|"reduce"|"gather"|"scatter", comm, nbytes, root)   gather/scatter: per rank
    ("allreduce"|"scan"|"exscan"|"allgather"|"alltoall"|"reduce_scatter", comm, nbytes)
                                             allgather/alltoall/reduce_scatter: per rank
    ("split", parent, new_id, colour, key)   a communicator made (``Comm.Split``'s
                                             arguments that make the same one; new_id -1:
                                             this rank is in none)
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Trace", "Action", "P2P_SEND", "COLLECTIVES", "ROOTED"]

Action = tuple[Any, ...]

P2P_SEND = ("send", "ssend")
ROOTED = ("bcast", "reduce", "gather", "scatter")
COLLECTIVES = ("barrier", *ROOTED, "allreduce", "scan", "exscan", "allgather", "alltoall",
               "reduce_scatter")


@dataclass
class Trace:
    """The actions of every rank of one recorded run.

    *measured* holds what the recording knew of the real run: ``wall`` (seconds from the
    first rank's ``MPI_Init`` return to the last rank's ``MPI_Finalize`` entry), each
    rank's ``cpu`` seconds over that span (``bsim record``), the ``recorder`` and the
    ``command``.
    """

    ranks: list[list[Action]]
    source: str = ""
    measured: dict[str, Any] = field(default_factory=dict)
    times: list[list[tuple[float, float]]] | None = None
    """Per rank, the (enter, leave) times of each action that is not ``compute``, in
    order (None when the format has no timestamps, as SimGrid's time-independent one)."""

    @property
    def nranks(self) -> int:
        """The number of ranks recorded."""
        return len(self.ranks)

    def compute_seconds(self) -> list[float]:
        """Each rank's total compute time."""
        return [sum(a[1] for a in acts if a[0] == "compute") for acts in self.ranks]

    def calls(self) -> int:
        """MPI calls recorded over all ranks (compute intervals not counted)."""
        return sum(1 for acts in self.ranks for a in acts if a[0] != "compute")

    def to_json(self, path: str | Path) -> None:
        """Write the trace as JSON (``bsim replay`` reads it back)."""
        data = {"format": "bsim-trace", "version": 1, "source": self.source,
                "measured": self.measured, "ranks": [[list(a) for a in acts]
                                                    for acts in self.ranks],
                "times": self.times}
        Path(path).write_text(json.dumps(data, separators=(",", ":")))

    @classmethod
    def from_json(cls, path: str | Path) -> Trace:
        """Read a trace written by :meth:`to_json`."""
        data = json.loads(Path(path).read_text())
        if data.get("format") != "bsim-trace":
            raise ValueError(f"{path}: not a bsim trace (no \"format\": \"bsim-trace\")")
        ranks = [[_tuple(a) for a in acts] for acts in data["ranks"]]
        times = data.get("times")
        if times is not None:
            times = [[(float(a), float(b)) for a, b in rt] for rt in times]
        return cls(ranks, data.get("source", ""), data.get("measured", {}), times)


def _tuple(a: Iterable[Any]) -> Action:
    """A JSON list back into an action (the wait's request list into a tuple)."""
    out = tuple(tuple(x) if isinstance(x, list) else x for x in a)
    return out
