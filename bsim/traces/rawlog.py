"""``bsim record``'s raw per-rank files (``rank-N.bin``) into a :class:`~.model.Trace`.

``c/bsim_record.c`` writes a 16-byte header (magic ``BSIM``, version 2, world rank, world
size) and then one 64-byte record per MPI call (``RECORD`` below), time-stamped with the
time-stamp counter on x86-64 and converted here to whole nanoseconds of CLOCK_MONOTONIC
(:func:`_in_ns`), the one clock from which both the calls' times (``Trace.times``, seconds)
and the compute between them are taken.  This module turns the records into actions:

* the time between one kept call's leave and the next kept call's enter (whole ns) is a
  ``compute`` action, so it equals the gap in ``Trace.times`` and an OTF2 archive (1 ns
  ticks) gives it back; gaps of at most :data:`MIN_COMPUTE`, 10 ns, the timer's own noise,
  are none (on x86-64 the counter may step by about 10 ns, as on AMD EPYC).  In a run
  recorded with ``--compute-clock cpu`` its value is the thread's CPU seconds between the
  two (``cpu`` records), not the wall seconds;
* each rank's CPU seconds from ``MPI_Init`` to ``MPI_Finalize`` (the ``clock`` records)
  go to ``measured["cpu"]``;
* request handles, which MPI reuses once a request completes, become per-rank request
  identities: a new one at each ``Isend``/``Irecv``, retired at its completion (a handle
  held by several live requests, as MPICH's one builtin handle for sends that completed at
  once, retires them in the order they started);
* a receive posted with ``MPI_ANY_SOURCE`` takes the source its status reported (the
  completion record), so the replay matches what the run matched;
* a test that completed nothing leaves no action (its time joins the compute around it);
* a receive that was cancelled or never completed leaves no action either (nor does a wait
  that completed only requests bsim did not see start): its time joins the compute too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .model import Action, Trace

__all__ = ["read_raw", "comm_keys", "RECORD", "OPS", "MIN_COMPUTE"]

RECORD = np.dtype([("t0", "<f8"), ("t1", "<f8"), ("op", "<i4"), ("comm", "<i4"),
                   ("peer", "<i4"), ("tag", "<i4"), ("bytes", "<i8"), ("bytes2", "<i8"),
                   ("req", "<i8"), ("root", "<i4"), ("extra", "<i4")])
HEADER = np.dtype([("magic", "<i4"), ("version", "<i4"), ("rank", "<i4"), ("size", "<i4")])
MAGIC = 0x4D495342

#: op codes of c/bsim_record.c, in its enum's order (1-based)
OPS = ("init", "finalize", "send", "ssend", "rsend", "bsend", "recv", "isend", "issend",
       "irecv", "wait", "waitall", "waitany", "waitsome", "test", "testall", "testany",
       "testsome", "sendrecv", "sendrecv_replace", "barrier", "bcast", "reduce", "allreduce",
       "gather", "gatherv", "scatter", "scatterv", "allgather", "allgatherv", "alltoall",
       "alltoallv", "reduce_scatter", "reduce_scatter_block", "scan", "exscan", "comm_dup",
       "comm_split", "comm_create", "cart_create", "cart_sub", "done", "ibsend", "irsend",
       "comm_split_type", "clock", "cpu")
MIN_COMPUTE = 1e-8
_DONE = OPS.index("done") + 1

_SEND = {"send": "send", "rsend": "send", "bsend": "send", "ssend": "ssend"}
_ISEND = {"isend": "isend", "ibsend": "isend", "irsend": "isend", "issend": "issend"}
_WAITS = {"wait", "waitall", "waitany", "waitsome", "test", "testall", "testany", "testsome"}
_SPLITS = {"comm_dup", "comm_split", "comm_create", "cart_create", "cart_sub",
           "comm_split_type"}
_PLAIN = {"barrier": "barrier", "allreduce": "allreduce", "scan": "scan", "exscan": "exscan"}


def _cpu(recs: np.ndarray) -> float:
    """The rank's CPU seconds from its first to its last ``clock`` record (the library
    writes the process's CPU time there; NaN when absent)."""
    pairs = recs[recs["op"] == OPS.index("clock") + 1]
    if len(pairs) < 2 or int(pairs[0]["bytes"]) <= 0:
        return float("nan")
    return 1e-9 * float(int(pairs[-1]["bytes"]) - int(pairs[0]["bytes"]))


def _read_rank(path: Path) -> tuple[int, int, np.ndarray]:
    """(world rank, world size, records) of one raw file."""
    data = path.read_bytes()
    if len(data) < HEADER.itemsize:
        raise ValueError(f"{path}: too short for a bsim record file")
    head = np.frombuffer(data[:HEADER.itemsize], HEADER)[0]
    if int(head["magic"]) != MAGIC or int(head["version"]) != 2:
        raise ValueError(f"{path}: not a bsim record file of this bsim (bad magic or "
                         "version: record it again)")
    body = data[HEADER.itemsize:]
    usable = len(body) - len(body) % RECORD.itemsize   # a run killed mid-write: whole records
    recs = np.frombuffer(body[:usable], RECORD)
    return int(head["rank"]), int(head["size"]), recs


def _in_ns(recs: np.ndarray, path: Path) -> tuple[np.ndarray, np.ndarray]:
    """The records without their ``clock`` records, and per record its enter and leave as
    whole nanoseconds of CLOCK_MONOTONIC (int64, shape (n, 2)).  The library stamps x86-64
    records with the time-stamp counter and writes (counter, CLOCK_MONOTONIC) pairs at
    MPI_Init and MPI_Finalize (``clock`` records, ``req`` = 1); the counter is mapped to
    seconds by the line through them, then rounded to the nanosecond."""
    clock = recs["op"] == OPS.index("clock") + 1
    pairs = recs[clock]
    recs = recs[~clock]
    stamps = np.stack([recs["t0"], recs["t1"]], axis=1)
    if len(pairs) == 0 or int(pairs[0]["req"]) == 0:
        return recs, np.rint(stamps * 1e9).astype(np.int64)   # already seconds
    if len(pairs) < 2:
        raise ValueError(f"{path}: the run did not reach MPI_Finalize on this rank (no "
                         "second clock record): its times cannot be converted")
    c0, s0 = float(pairs[0]["t0"]), float(pairs[0]["t1"])
    c1, s1 = float(pairs[-1]["t0"]), float(pairs[-1]["t1"])
    rate = (c1 - c0) / (s1 - s0) if s1 > s0 else float("nan")
    if not rate > 0:
        raise ValueError(f"{path}: the time-stamp counter did not advance with the clock")
    offset = np.rint((stamps - c0) * (1e9 / rate)).astype(np.int64)   # ns since the pair
    return recs, round(s0 * 1e9) + offset


def _split_cpu(recs: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """The records without their ``cpu`` records, and per record left the thread CPU
    seconds at its enter and leave (NaN where none; None when the run had no ``cpu``
    records: ``bsim record --compute-clock wall``).  A ``cpu`` record follows its call's
    record, before the call's ``done`` records."""
    mine = recs["op"] == OPS.index("cpu") + 1
    if not mine.any():
        return recs, None
    idx = np.nonzero(mine)[0]
    cpu = np.full((len(recs), 2), np.nan)
    cpu[idx - 1, 0], cpu[idx - 1, 1] = recs["t0"][idx], recs["t1"][idx]
    return recs[~mine], cpu[~mine]


def _with_compute(calls: list[tuple[Action | None, int, int, float, float]],
                  cpu: bool) -> list[tuple[Action, tuple[float, float] | None]]:
    """The actions of *calls* (action, enter and leave ns, CPU seconds at enter and leave;
    a ``None`` action, init or finalize, marks time only) in order, each with its (enter,
    leave) seconds, and before each call whose enter is more than :data:`MIN_COMPUTE` after
    the previous call's leave a ``compute`` action (with ``None`` times) of that gap (with
    *cpu*, the CPU seconds between the two when both were read).  Times and compute come
    from the same whole nanoseconds, so a compute is the gap between the times around it."""
    out: list[tuple[Action, tuple[float, float] | None]] = []
    prev: tuple[int, float] | None = None     # the previous call's leave: ns, CPU seconds
    for act, n0, n1, c0, c1 in calls:
        if prev is not None and (n0 - prev[0]) / 1e9 > MIN_COMPUTE:
            seconds = (n0 - prev[0]) / 1e9
            if cpu and c0 == c0 and prev[1] == prev[1]:
                seconds = max(0.0, c0 - prev[1])
            out.append((("compute", seconds), None))
        prev = (n1, c1)
        if act is not None:
            out.append((act, (n0 / 1e9, n1 / 1e9)))
    return out


def _actions(recs: np.ndarray, ns: np.ndarray, where: str, cpu: np.ndarray | None = None
             ) -> tuple[list[Action], list[tuple[float, float]], float, float]:
    """The actions of one rank, the (enter, leave) times in seconds of those that are not
    compute, and its init-leave and finalize-enter times, from its records and their
    (enter, leave) whole nanoseconds *ns*.  A call that leaves no action (a cancelled
    receive, a wait that completed nothing bsim saw) leaves its time to the compute around
    it.  With *cpu* (per record, CPU seconds at enter and leave), a compute action holds the
    CPU seconds between the calls instead of the wall seconds."""
    acts: list[Action | None] = []    # per call (None: no action; init, finalize: a mark)
    marks: list[tuple[int, int, float, float]] = []   # per call: enter, leave ns; CPU s
    live: dict[int, list[int]] = {}   # request handle -> identities (MPICH hands one
    #                                   builtin handle to every send completed at once)
    pending: dict[int, int] = {}      # identity -> index of its Irecv action
    next_id = 0
    keep: set[int] = set()            # init and finalize: time marks without an action
    start = end = float("nan")
    rows: list[Any] = recs.tolist()
    i = 0
    while i < len(rows):
        _, _, op_code, comm, peer, tag, nb, nb2, req, root, extra = rows[i]
        op = OPS[op_code - 1] if 0 < op_code <= len(OPS) else "?"
        i += 1
        if op == "done":
            continue                  # read with its wait below
        n0, n1 = int(ns[i - 1, 0]), int(ns[i - 1, 1])
        c0, c1 = ((float(cpu[i - 1, 0]), float(cpu[i - 1, 1])) if cpu is not None
                  else (float("nan"), float("nan")))
        marks.append((n0, n1, c0, c1))
        act: Action | None = None
        if op == "init":
            start = n1 / 1e9
            keep.add(len(acts))
        elif op == "finalize":
            end = n0 / 1e9
            keep.add(len(acts))
        elif op in _SEND:
            act = (_SEND[op], comm, peer, tag, nb)
        elif op == "recv":
            act = ("recv", comm, peer, tag, nb)
        elif op in _ISEND or op == "irecv":
            live.setdefault(req, []).append(next_id)
            if op == "irecv":
                pending[next_id] = len(acts)
            act = (_ISEND.get(op, "irecv"), comm, peer, tag, nb, next_id)
            next_id += 1
        elif op in _WAITS:
            done = []
            while i < len(rows) and rows[i][2] == _DONE:
                _, _, _, _, src, dtag, dbytes, _, handle, _, _ = rows[i]
                i += 1
                idents = live.get(handle)
                if not idents:
                    continue          # a request bsim did not see start (persistent, ...)
                ident = idents.pop(0)
                k = pending.pop(ident, None)
                if k is not None:
                    a = acts[k]
                    assert a is not None
                    if src < 0:               # cancelled: no message, nothing to replay
                        acts[k] = None
                        continue
                    acts[k] = (a[0], a[1], src, dtag, dbytes, a[5])   # as matched
                done.append(ident)
            if done:
                act = ("wait", tuple(done))
        elif op in ("sendrecv", "sendrecv_replace"):
            act = ("sendrecv", comm, peer, tag, nb, extra, req, nb2)
        elif op == "barrier":
            act = ("barrier", comm)
        elif op in ("allreduce", "scan", "exscan"):
            act = (op, comm, nb)
        elif op in ("bcast", "reduce"):
            act = (op, comm, nb, root)
        elif op in ("gather", "scatter", "gatherv", "scatterv"):
            act = (op, comm, nb, nb2, root)      # per-rank sizes settled later
        elif op in ("allgather", "alltoall", "allgatherv", "alltoallv", "reduce_scatter",
                    "reduce_scatter_block"):
            act = (op, comm, nb, nb2)
        elif op in _SPLITS:
            act = ("split", comm, int(req), peer, extra)
        else:
            raise ValueError(f"{where}: unknown record op code {op_code}")
        acts.append(act)
    for k in pending.values():            # receives never completed (cancelled, freed)
        acts[k] = None
    calls = [(a, *m) for j, (a, m) in enumerate(zip(acts, marks))
             if a is not None or j in keep]
    kept = _with_compute(calls, cpu is not None)
    return ([a for a, _ in kept], [t for _, t in kept if t is not None], start, end)


def comm_keys(ranks: list[list[Action]]) -> list[dict[int, Any]]:
    """Per rank, its communicator ids mapped to keys naming the same communicator on
    every member: ``"world"``, ``("self", rank)``, or ``(parent key, k, colour)`` for the
    k-th communicator made from that parent (ids are per rank: a rank left out of a
    communicator does not count it)."""
    keys = []
    for r, acts in enumerate(ranks):
        mine: dict[int, Any] = {0: "world", 1: ("self", r)}
        made: dict[int, int] = {}
        for a in acts:
            if a[0] == "split":
                k = made.get(a[1], 0)
                made[a[1]] = k + 1
                if a[2] >= 0:
                    mine[a[2]] = (mine[a[1]], k, a[3])
        keys.append(mine)
    return keys


_V = ("gather", "scatter", "gatherv", "scatterv", "allgather", "allgatherv", "alltoall",
      "alltoallv", "reduce_scatter", "reduce_scatter_block")


def _settle_sizes(ranks: list[list[Action]]) -> list[list[Action]]:
    """Give each collective one size on all its ranks, as bsim's collectives require:
    gather/scatter/allgather/alltoall the call's per-rank amount, their v forms and
    reduce_scatter the mean over the communicator (total / size, rounded up; per pair
    for alltoallv), reduce_scatter_block its block."""
    keys = comm_keys(ranks)
    size: dict[Any, int] = {}
    for mine in keys:
        for key in set(mine.values()):
            size[key] = size.get(key, 0) + 1
    big: dict[tuple[Any, int], int] = {}
    for r, acts in enumerate(ranks):
        seq: dict[int, int] = {}
        for a in acts:
            if a[0] in _V:
                k = seq.get(a[1], 0)
                seq[a[1]] = k + 1
                inst = (keys[r][a[1]], k)
                if a[0] == "alltoallv":
                    big[inst] = big.get(inst, 0) + a[2]
                else:
                    big[inst] = max(big.get(inst, 0), a[2], a[3])
    out = []
    for r, acts in enumerate(ranks):
        seq = {}
        new: list[Action] = []
        for a in acts:
            name = a[0]
            if name not in _V:
                new.append(a)
                continue
            k = seq.get(a[1], 0)
            seq[a[1]] = k + 1
            n = max(size[keys[r][a[1]]], 1)
            total = big[(keys[r][a[1]], k)]
            if name == "gather":
                new.append(("gather", a[1], a[2], a[4]))
            elif name == "scatter":
                new.append(("scatter", a[1], a[3], a[4]))
            elif name in ("gatherv", "scatterv"):
                new.append((name[:-1], a[1], -(-total // n), a[4]))
            elif name in ("allgather", "alltoall"):
                new.append((name, a[1], a[3]))
            elif name == "allgatherv":
                new.append(("allgather", a[1], -(-a[3] // n)))
            elif name == "alltoallv":
                new.append(("alltoall", a[1], -(-total // (n * n))))
            elif name == "reduce_scatter":
                new.append(("reduce_scatter", a[1], -(-a[2] // n)))
            else:
                new.append(("reduce_scatter", a[1], a[3]))
        out.append(new)
    return out


def read_raw(directory: str | Path) -> Trace:
    """Read every ``rank-N.bin`` of *directory* into a :class:`Trace`."""
    d = Path(directory)
    files = sorted(d.glob("rank-*.bin"), key=lambda p: int(p.stem.split("-")[1]))
    if not files:
        raise FileNotFoundError(f"{d}: no rank-N.bin files (was the program an MPI one, and "
                                "did it call MPI_Init?)")
    per_rank: dict[int, list[Action]] = {}
    stamps: dict[int, list[tuple[float, float]]] = {}
    starts, ends, size = [], [], 0
    cpu: dict[int, float] = {}
    for f in files:
        rank, size, raw = _read_rank(f)
        cpu[rank] = _cpu(raw)
        raw, stamps_cpu = _split_cpu(raw)
        clock_kept = raw["op"] != OPS.index("clock") + 1   # _in_ns drops these
        clock_cpu = stamps_cpu[clock_kept] if stamps_cpu is not None else None
        compute_clock = "wall" if stamps_cpu is None else "cpu"
        acts, st, s, e = _actions(*_in_ns(raw, f), str(f), clock_cpu)
        per_rank[rank] = acts
        stamps[rank] = st
        starts.append(s)
        ends.append(e)
    missing = sorted(set(range(size)) - set(per_rank))
    if missing:
        raise ValueError(f"{d}: the run had {size} ranks but ranks {missing} left no file")
    ranks = _settle_sizes([per_rank[r] for r in range(size)])
    wall = max(ends) - min(starts) if all(x == x for x in starts + ends) else float("nan")
    # cpu: each rank's CPU seconds over the same span (over the wall: the share of it the
    # rank had a core; busy-polling MPI counts its waits as CPU)
    return Trace(ranks, "bsim-record", {"wall": wall, "starts": starts, "ends": ends,
                                        "cpu": [cpu[r] for r in range(size)],
                                        "compute_clock": compute_clock},
                 [stamps[r] for r in range(size)])
