"""Reading an OTF2 archive into a :class:`~.model.Trace` (the inverse of
:func:`.otf2io.write_otf2`; see that module for the events).

Per location (one rank each), events are taken in time order: an MPI region's ``Enter``
opens a call, its events say what the call did, its ``Leave`` closes it; the gap from one
``Leave`` to the next ``Enter`` is a ``compute`` action (the difference of the two
timestamps in ticks, divided by the timer resolution once, as :mod:`.rawlog` divides whole
nanoseconds: gaps of at most :data:`~.rawlog.MIN_COMPUTE` are dropped alike, and 1 ns ticks
give a recorded trace's compute back).  Communicators are numbered per rank as ``bsim
record`` numbers them (0 world, 1 self, then each ``CommCreate`` in order); a request's
identity is OTF2's request id.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .model import Action, Trace
from .rawlog import MIN_COMPUTE

__all__ = ["read_archive"]

_ROOTED = {"BCAST": "bcast", "REDUCE": "reduce", "GATHER": "gather", "SCATTER": "scatter"}
_PLAIN = {"BARRIER": "barrier", "ALLREDUCE": "allreduce", "SCAN": "scan", "EXSCAN": "exscan",
          "ALLGATHER": "allgather", "ALLTOALL": "alltoall",
          "REDUCE_SCATTER_BLOCK": "reduce_scatter", "REDUCE_SCATTER": "reduce_scatter"}


class _Rank:
    """One location's reading state."""

    def __init__(self, rank: int) -> None:
        self.rank = rank
        self.acts: list[Action] = []
        self.times: list[tuple[float, float]] = []
        self.ids: dict[Any, int] = {}        # OTF2 comm definition -> this rank's comm id
        self.next_comm = 2
        self.irecvs: dict[int, int] = {}     # request id -> index of its irecv action
        self.last: int | None = None         # the previous Leave's timestamp, in ticks
        self.enter = 0.0
        self.region = ""
        self.inside: list[Any] = []
        self.started = float("nan")          # MPI_Init's leave
        self.ended = float("nan")            # MPI_Finalize's enter


def _comm_id(st: _Rank, comm: Any) -> int:
    name = getattr(comm, "name", "")
    if name == "MPI_COMM_WORLD":
        return 0
    if name == "MPI_COMM_SELF":
        return 1
    return st.ids[comm]


def _members(comm: Any, locations: list[Any]) -> list[int]:
    return [locations.index(m) for m in comm.group.members]


def _close(st: _Rank, t: float, locations: list[Any]) -> None:
    """The action(s) of the call that just left."""
    evs = st.inside
    names = [type(e).__name__ for e in evs]
    act: Action | None = None
    if st.region in ("MPI_Init", "MPI_Finalize"):
        return
    if "MpiSend" in names and "MpiRecv" in names:
        s, r = evs[names.index("MpiSend")], evs[names.index("MpiRecv")]
        act = ("sendrecv", _comm_id(st, s.communicator), s.receiver, s.msg_tag, s.msg_length,
               r.sender, r.msg_tag, r.msg_length)
    elif "MpiSend" in names:
        s = evs[names.index("MpiSend")]
        act = ("ssend" if st.region == "MPI_Ssend" else "send", _comm_id(st, s.communicator),
               s.receiver, s.msg_tag, s.msg_length)
    elif "MpiRecv" in names:
        s = evs[names.index("MpiRecv")]
        act = ("recv", _comm_id(st, s.communicator), s.sender, s.msg_tag, s.msg_length)
    elif "MpiIsend" in names:
        s = evs[names.index("MpiIsend")]
        act = ("issend" if st.region == "MPI_Issend" else "isend",
               _comm_id(st, s.communicator), s.receiver, s.msg_tag, s.msg_length, s.request_id)
    elif "MpiIrecvRequest" in names:
        q = evs[names.index("MpiIrecvRequest")].request_id
        st.irecvs[q] = len(st.acts)
        act = ("irecv", 0, -1, -1, 0, q)     # completed by its MpiIrecv
    elif "MpiIsendComplete" in names or "MpiIrecv" in names:
        done = []
        for e in evs:
            if type(e).__name__ == "MpiIrecv":
                k = st.irecvs.pop(e.request_id, None)
                if k is not None:
                    st.acts[k] = ("irecv", _comm_id(st, e.communicator), e.sender, e.msg_tag,
                                  e.msg_length, e.request_id)
                done.append(e.request_id)
            elif type(e).__name__ == "MpiIsendComplete":
                done.append(e.request_id)
        act = ("wait", tuple(done))
    elif "CommCreate" in names:
        c = evs[names.index("CommCreate")].communicator
        st.ids[c] = cid = st.next_comm
        st.next_comm += 1
        ranks = _members(c, locations)
        parent = c.parent if c.parent is not None else None
        pid = 0 if parent is None else _comm_id(st, parent)
        act = ("split", pid, cid, ranks[0], ranks.index(st.rank))
    elif "MpiCollectiveEnd" in names:
        e = evs[names.index("MpiCollectiveEnd")]
        op = str(e.collective_op).split(".")[-1]
        cid = _comm_id(st, e.communicator)
        if op == "CREATE_HANDLE":
            act = ("split", cid, -1, -1, -1)
        elif op in _ROOTED:
            name = _ROOTED[op]
            n = {"bcast": max(e.size_sent, e.size_received), "reduce": e.size_sent,
                 "gather": e.size_sent, "scatter": e.size_received}[name]
            act = (name, cid, n, e.root)
        elif op in _PLAIN:
            name = _PLAIN[op]
            size = len(e.communicator.group.members) or 1
            n = {"barrier": 0, "alltoall": e.size_sent // size,
                 "reduce_scatter": e.size_received}.get(name, e.size_sent)
            act = ("barrier", cid) if name == "barrier" else (name, cid, n)
        else:
            raise ValueError(f"OTF2 collective {op} is not replayed by bsim")
    if act is not None:
        st.acts.append(act)
        st.times.append((st.enter, t))


def read_archive(otf2: Any, anchor: Path) -> Trace:
    """Read the archive whose anchor file is *anchor* (``otf2``: the imported package)."""
    if not anchor.exists():
        raise FileNotFoundError(f"{anchor}: no such OTF2 anchor file")
    with otf2.reader.open(str(anchor)) as tr:
        res = tr.timer_resolution
        locations = sorted(tr.definitions.locations, key=lambda loc: loc._ref)
        states = {loc: _Rank(i) for i, loc in enumerate(locations)}
        for loc, e in tr.events:
            st = states[loc]
            t = e.time / res
            kind = type(e).__name__
            if kind == "Enter":
                if st.last is not None and (e.time - st.last) / res > MIN_COMPUTE:
                    st.acts.append(("compute", (e.time - st.last) / res))
                st.enter, st.region, st.inside = t, e.region.name, []
                if st.region == "MPI_Finalize":
                    st.ended = t
            elif kind == "Leave":
                if st.region == "MPI_Init":
                    st.started = t
                _close(st, t, locations)
                st.last = e.time
            else:
                st.inside.append(e)
    ranks = [states[loc] for loc in locations]
    measured: dict[str, Any] = {"archive": str(anchor)}
    starts, ends = [s.started for s in ranks], [s.ended for s in ranks]
    if ranks and all(x == x for x in starts + ends):
        measured["wall"] = max(ends) - min(starts)
    return Trace([s.acts for s in ranks], "otf2", measured, [s.times for s in ranks])
