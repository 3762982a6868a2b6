"""OTF2 archives (the format of Score-P, Vampir and Extra-P) to and from a
:class:`~.model.Trace`, with the ``otf2`` package (``pip install 'bsim[traces]'``).

Writing (:func:`write_otf2`): one location (``MPI Rank r``) per rank, MPI's own events
inside ``Enter``/``Leave`` of a region named after the call (``MPI_Send``, ...) at the
recorded times (timer resolution 1 ns, times from the first ``MPI_Init``):
``MpiSend``/``MpiRecv`` (both in one ``MPI_Sendrecv``), ``MpiIsend`` and
``MpiIrecvRequest`` at the start of a nonblocking call, ``MpiIsendComplete`` and
``MpiIrecv`` (with the matched source, tag and size) inside the wait that completed it,
``MpiCollectiveBegin``/``MpiCollectiveEnd`` with the bytes this rank sent and received,
and ``CommCreate`` of each communicator the program made, defined by its group of
``MPI_COMM_WORLD`` ranks.  The time between a ``Leave`` and the next ``Enter`` is compute.

Reading (:func:`read_otf2`) inverts this, so ``read_otf2(write_otf2(t))`` is ``t``; a
trace without timestamps (SimGrid's) is written with each call taking no time.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from .model import Action, Trace
from .rawlog import comm_keys

__all__ = ["write_otf2", "read_otf2", "REGIONS"]

REGIONS = {"send": "MPI_Send", "ssend": "MPI_Ssend", "recv": "MPI_Recv",
           "isend": "MPI_Isend", "issend": "MPI_Issend", "irecv": "MPI_Irecv",
           "wait": "MPI_Waitall", "sendrecv": "MPI_Sendrecv", "barrier": "MPI_Barrier",
           "bcast": "MPI_Bcast", "reduce": "MPI_Reduce", "allreduce": "MPI_Allreduce",
           "scan": "MPI_Scan", "exscan": "MPI_Exscan", "gather": "MPI_Gather",
           "scatter": "MPI_Scatter", "allgather": "MPI_Allgather", "alltoall": "MPI_Alltoall",
           "reduce_scatter": "MPI_Reduce_scatter_block", "split": "MPI_Comm_split",
           "init": "MPI_Init", "finalize": "MPI_Finalize"}
_BY_REGION = {v: k for k, v in REGIONS.items()}
_RESOLUTION = 10**9


def _ns(seconds: float) -> int:
    """Seconds as OTF2 ticks (1 ns)."""
    return round(seconds * _RESOLUTION)


def _otf2() -> Any:
    try:
        import otf2
    except ImportError as exc:   # an optional extra
        raise ImportError("OTF2 traces need the otf2 package: pip install 'bsim[traces]' "
                          "(or write the trace as .json)") from exc
    return otf2


def _stamped(trace: Trace, r: int) -> tuple[float, list[tuple[Action, float, float]], float]:
    """Rank *r*'s init-leave time, its non-compute actions with their times, and its
    finalize-enter time (times synthesized when absent: compute advances the clock, calls
    take none); compute before the first call and after the last stays compute."""
    acts = trace.ranks[r]
    lead = 0.0
    for a in acts:
        if a[0] != "compute":
            break
        lead += a[1]
    tail = 0.0
    for a in reversed(acts):
        if a[0] != "compute":
            break
        tail += a[1]
    out = []
    if trace.times is not None and trace.times[r]:
        it = iter(trace.times[r])
        for a in acts:
            if a[0] != "compute":
                b, e = next(it)
                out.append((a, b, e))
        return out[0][1] - lead, out, out[-1][2] + tail
    clock = 0.0
    for a in acts:
        if a[0] == "compute":
            clock += a[1]
        else:
            out.append((a, clock, clock))
    return 0.0, out, clock


def _collective_sizes(a: Action, me: int, size: int) -> tuple[int, int, int]:
    """(root, bytes sent, bytes received) of a collective action, in OTF2's meaning."""
    op, n = a[0], (a[2] if len(a) > 2 else 0)
    root = a[3] if op in ("bcast", "reduce", "gather", "scatter") else 0
    is_root = me == root
    return {"barrier": (0, 0, 0),
            "bcast": (root, n if is_root else 0, 0 if is_root else n),
            "reduce": (root, n, n if is_root else 0),
            "gather": (root, n, n * size if is_root else 0),
            "scatter": (root, n * size if is_root else 0, n),
            "allgather": (0, n, n * size), "alltoall": (0, n * size, n * size),
            "reduce_scatter": (0, n * size, n)}.get(op, (0, n, n))


def write_otf2(trace: Trace, path: str | Path) -> Path:
    """Write *trace* as an OTF2 archive; *path* is the anchor file (``NAME.otf2``), its
    data going into the directory ``NAME`` beside it.  Returns the anchor's path."""
    otf2 = _otf2()
    from otf2.enums import CollectiveOp, GroupType, Paradigm
    anchor = Path(path)
    if anchor.suffix != ".otf2":
        raise ValueError(f"{path}: an OTF2 anchor file ends in .otf2")
    anchor.parent.mkdir(parents=True, exist_ok=True)
    folder = anchor.with_suffix("")
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{path}: OTF2 keeps the events in a folder {folder.name!r} beside "
                         f"the anchor file, and a file of that name exists (the program?); "
                         f"name the trace otherwise, e.g. {folder.name}-trace.otf2")
    if folder.is_dir():   # OTF2 will not overwrite an archive: remove an earlier one
        if any(f.suffix not in (".evt", ".def") for f in folder.iterdir()):
            raise ValueError(f"{path}: the folder {folder.name!r} beside it holds files that "
                             "are not OTF2 events; name the trace otherwise")
        shutil.rmtree(folder)
    for old in (anchor, anchor.with_suffix(".def")):
        old.unlink(missing_ok=True)
    keys = comm_keys(trace.ranks)
    members: dict[Any, list[tuple[int, int]]] = {}
    for r, acts in enumerate(trace.ranks):
        for a in acts:
            if a[0] == "split" and a[2] >= 0:
                members.setdefault(keys[r][a[2]], []).append((a[4], r))
    with otf2.writer.open(str(anchor.parent), archive_name=anchor.stem,
                          timer_resolution=_RESOLUTION) as w:
        d = w.definitions
        node = d.system_tree_node("node", parent=d.system_tree_node("machine"))
        locs = [d.location(f"MPI Rank {r}", group=d.location_group(
            f"MPI Rank {r}", system_tree_parent=node)) for r in range(trace.nranks)]
        d.group("MPI locations", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI,
                members=locs)
        comms: dict[Any, Any] = {"world": d.comm("MPI_COMM_WORLD", group=d.group(
            "MPI_COMM_WORLD", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI,
            members=list(range(trace.nranks))))}
        self_comm = d.comm("MPI_COMM_SELF", group=d.group(
            "MPI_COMM_SELF", group_type=GroupType.COMM_SELF, paradigm=Paradigm.MPI,
            members=[]))
        pending = list(members)
        order: dict[Any, list[int]] = {"world": list(range(trace.nranks))}
        while pending:   # parents before children
            key = pending.pop(0)
            parent = key[0]
            if parent not in comms and not (isinstance(parent, tuple) and parent[0] == "self"):
                pending.append(key)
                continue
            ranks = [r for _, r in sorted(members[key])]
            order[key] = ranks
            comms[key] = d.comm(f"comm {len(comms)}", group=d.group(
                f"comm {len(comms)}", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI,
                members=ranks), parent=comms.get(parent, self_comm))
        regions = {name: d.region(region) for name, region in REGIONS.items()}
        colls = {"barrier": CollectiveOp.BARRIER, "bcast": CollectiveOp.BCAST,
                 "reduce": CollectiveOp.REDUCE, "allreduce": CollectiveOp.ALLREDUCE,
                 "scan": CollectiveOp.SCAN, "exscan": CollectiveOp.EXSCAN,
                 "gather": CollectiveOp.GATHER, "scatter": CollectiveOp.SCATTER,
                 "allgather": CollectiveOp.ALLGATHER, "alltoall": CollectiveOp.ALLTOALL,
                 "reduce_scatter": CollectiveOp.REDUCE_SCATTER_BLOCK}
        stamps = [_stamped(trace, r) for r in range(trace.nranks)]
        origin = min((s[0] for s in stamps), default=0.0)
        for r in range(trace.nranks):
            ev = w.event_writer_from_location(locs[r])
            mine = keys[r]

            def comm(cid: int, mine: dict[int, Any] = mine) -> Any:
                key = mine[cid]
                return self_comm if isinstance(key, tuple) and key[0] == "self" else comms[key]

            kinds: dict[int, Action] = {}
            start, stamped, end = stamps[r]
            ev.enter(_ns(start - origin), regions["init"])
            ev.leave(_ns(start - origin), regions["init"])
            for a, b, e in stamped:
                tb, te = _ns(b - origin), _ns(e - origin)
                op = a[0]
                ev.enter(tb, regions[op])
                if op in ("send", "ssend"):
                    ev.mpi_send(tb, a[2], comm(a[1]), a[3], a[4])
                elif op == "recv":
                    ev.mpi_recv(te, a[2], comm(a[1]), a[3], a[4])
                elif op in ("isend", "issend"):
                    kinds[a[5]] = a
                    ev.mpi_isend(tb, a[2], comm(a[1]), a[3], a[4], a[5])
                elif op == "irecv":
                    kinds[a[5]] = a
                    ev.mpi_irecv_request(tb, a[5])
                elif op == "wait":
                    for q in a[1]:
                        k = kinds.pop(q)
                        if k[0] == "irecv":
                            ev.mpi_irecv(te, k[2], comm(k[1]), k[3], k[4], q)
                        else:
                            ev.mpi_isend_complete(te, q)
                elif op == "sendrecv":
                    ev.mpi_send(tb, a[2], comm(a[1]), a[3], a[4])
                    ev.mpi_recv(te, a[5], comm(a[1]), a[6], a[7])
                elif op == "split":
                    if a[2] >= 0:
                        ev.comm_create(te, comm(a[2]))
                    else:   # left out of the new communicator: which parent it split
                        ev.mpi_collective_begin(tb)
                        ev.mpi_collective_end(te, CollectiveOp.CREATE_HANDLE, comm(a[1]),
                                              0, 0, 0)
                else:
                    c = comm(a[1])
                    ranks_of = order.get(mine[a[1]], [r])
                    root, sent, got = _collective_sizes(a, ranks_of.index(r), len(ranks_of))
                    ev.mpi_collective_begin(tb)
                    ev.mpi_collective_end(te, colls[op], c, root, sent, got)
                ev.leave(te, regions[op])
            ev.enter(_ns(end - origin), regions["finalize"])
            ev.leave(_ns(end - origin), regions["finalize"])
    return anchor


def read_otf2(path: str | Path) -> Trace:
    """Read an OTF2 archive (its anchor file) into a :class:`Trace`: MPI events as
    :func:`write_otf2` writes them (Score-P's are the same events), compute as the time
    between one MPI region's ``Leave`` and the next one's ``Enter``."""
    from .otf2read import read_archive
    return read_archive(_otf2(), Path(path))
