"""SimGrid's time-independent traces (``smpirun -trace-ti``) into a :class:`~.model.Trace`.

The index file lists one file per rank (paths relative to the index's folder; a single
rank's file is also accepted); each line is ``RANK ACTION ARGS`` as SimGrid 3.32's
``smpi_replay.cpp`` parses them.  Sizes are counts of the line's datatype, whose id is
SimGrid's ``Datatype::encode`` (``smpi_datatype.cpp``: 0 double, 1 int, 2 char, 3 short,
4 long, 5 float, 6 byte, 7 long long; absent: ``MPI_BYTE``, replay's default).  Compute is
in flops: ``compute F`` becomes ``F / flops_per_second`` seconds (the platform's host
speed), as does a reduction's ``comp_size`` (SimGrid executes it after the collective).
``waitall`` completes every request the rank has outstanding and ``wait SRC DST TAG`` the
one with that envelope, as SimGrid's replay does.  ``location`` lines are skipped.
"""

from __future__ import annotations

from pathlib import Path

from .model import Action, Trace

__all__ = ["read_ti", "DATATYPE_BYTES"]

#: SimGrid's datatype ids (Datatype::encode) to their sizes in bytes
DATATYPE_BYTES = {0: 8, 1: 4, 2: 1, 3: 2, 4: 8, 5: 4, 6: 1, 7: 8, 8: 1, 9: 1, 10: 2, 11: 4,
                  12: 8, 13: 8, 14: 16, 15: 4, 16: 1, 17: 1, 18: 2, 19: 4, 20: 8, 21: 1,
                  22: 2, 23: 4, 24: 8}


def _bytes(count: str, dt: str | None) -> int:
    """*count* elements of SimGrid datatype id *dt* (bytes when absent)."""
    size = DATATYPE_BYTES.get(int(dt), 1) if dt is not None else 1
    return int(float(count)) * size


def _arg(f: list[str], i: int) -> str | None:
    return f[i] if len(f) > i else None


def _rank_actions(path: Path, nranks: int, speed: float) -> list[Action]:
    """The actions of one rank's file."""
    acts: list[Action] = []
    outstanding: list[tuple[int, int, int, int]] = []   # (req, src, dst, tag)
    me = None
    req = 0
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        f = line.split()
        if not f:
            continue
        where = f"{path}:{lineno}"
        try:
            rank, op = int(f[0]), f[1]
        except (ValueError, IndexError):
            raise ValueError(f"{where}: not a time-independent trace line: {line!r}") from None
        me = rank if me is None else me
        try:
            if op in ("init", "finalize", "location", "comm_size", "comm_split", "comm_dup"):
                continue
            if op == "compute":
                secs = float(f[2]) / speed
                if secs > 0:
                    acts.append(("compute", secs))
            elif op == "sleep":
                acts.append(("compute", float(f[2])))
            elif op in ("send", "recv", "isend", "irecv"):
                peer, tag, nb = int(f[2]), int(f[3]), _bytes(f[4], _arg(f, 5))
                if op in ("send", "recv"):
                    acts.append((op, 0, peer, tag, nb))
                else:
                    acts.append((op, 0, peer, tag, nb, req))
                    src, dst = (rank, peer) if op == "isend" else (peer, rank)
                    outstanding.append((req, src, dst, tag))
                    req += 1
            elif op in ("wait", "test"):
                key = (int(f[2]), int(f[3]), int(f[4]))
                hit = [o for o in outstanding if o[1:] == key][:1]
                if hit:
                    outstanding.remove(hit[0])
                    acts.append(("wait", (hit[0][0],)))
            elif op == "waitall":
                if outstanding:
                    acts.append(("wait", tuple(o[0] for o in outstanding)))
                outstanding = []
            elif op == "barrier":
                acts.append(("barrier", 0))
            elif op == "bcast":
                root = int(f[3]) if len(f) > 3 else 0
                acts.append(("bcast", 0, _bytes(f[2], _arg(f, 4)), root))
            elif op == "reduce":
                root = int(f[4]) if len(f) > 4 else 0
                acts.append(("reduce", 0, _bytes(f[2], _arg(f, 5)), root))
                if float(f[3]) > 0:
                    acts.append(("compute", float(f[3]) / speed))
            elif op == "allreduce":
                acts.append(("allreduce", 0, _bytes(f[2], _arg(f, 4))))
                if float(f[3]) > 0:
                    acts.append(("compute", float(f[3]) / speed))
            elif op in ("alltoall", "allgather"):
                acts.append((op, 0, _bytes(f[2], _arg(f, 4))))
            elif op in ("gather", "scatter"):
                root = int(f[4]) if len(f) > 4 else 0
                n = _bytes(f[2], _arg(f, 5)) if op == "gather" else _bytes(f[3], _arg(f, 6))
                acts.append((op, 0, n, root))
            else:
                raise ValueError(f"action {op!r} is not replayed by bsim")
        except (IndexError, ValueError) as exc:
            raise ValueError(f"{where}: {exc} in {line.strip()!r}") from None
    return acts


def read_ti(path: str | Path, flops_per_second: float = 1e9) -> Trace:
    """Read a time-independent trace: its index file (one rank file per line) or a single
    rank's file.  *flops_per_second* converts compute to seconds (the host speed of the
    platform the trace is replayed on; SimGrid's ``smpi/host-speed``)."""
    p = Path(path)
    lines = [x.strip() for x in p.read_text().splitlines() if x.strip()]
    first = lines[0].split() if lines else []
    if len(first) == 1:        # an index: one file name per line
        files = [(p.parent / x) if not Path(x).is_absolute() else Path(x) for x in lines]
        missing = [str(f) for f in files if not f.exists()]
        if missing:
            raise FileNotFoundError(f"{p}: lists rank files that do not exist: {missing[:3]}")
    else:
        files = [p]
    ranks = [_rank_actions(f, len(files), flops_per_second) for f in files]
    return Trace(ranks, "simgrid-ti", {"index": str(p), "flops_per_second": flops_per_second})
