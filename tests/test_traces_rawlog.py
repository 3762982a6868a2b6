"""``bsim record``'s raw files read by :mod:`bsim.traces.rawlog`, from a synthetic log (no MPI,
no machine clock): a time-stamp counter of 2.596 GHz that steps by 26 ticks (10.015 ns, as on
AMD EPYC), calls a few ticks apart, and a cancelled receive.  The trace must be
self-consistent (each compute is the gap between the calls' times around it, and a gap
without one is at most 10 ns) and come back from OTF2 (1 ns ticks) unchanged."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bsim.traces import load_trace
from bsim.traces.model import Trace
from bsim.traces.rawlog import HEADER, MAGIC, MIN_COMPUTE, OPS, RECORD, read_raw

RATE = 2.596e9            # counter ticks per second
C0, S0 = 6678005183550.0, 2540.437510388193   # the counter and CLOCK_MONOTONIC at MPI_Init


def _rec(t0: float, t1: float, op: str, **fields: int) -> tuple:
    """One record (times in counter ticks) in RECORD's field order."""
    f = {"comm": 0, "peer": -1, "tag": 0, "bytes": 0, "bytes2": 0, "req": 0, "root": 0,
         "extra": 0, **fields}
    return (t0, t1, OPS.index(op) + 1, f["comm"], f["peer"], f["tag"], f["bytes"],
            f["bytes2"], f["req"], f["root"], f["extra"])


def _raw_log(folder: Path) -> Path:
    """A 1-rank raw log: init, then barriers and allreduces with gaps of 0 to 31 counter
    ticks and 300 ns, an Irecv cancelled by its Wait in the middle, then finalize."""
    recs = [_rec(C0, S0, "clock", bytes=1000, req=1)]
    t = C0 + 26
    recs.append(_rec(C0, t, "init"))
    gaps = list(range(32)) * 3 + [780]
    for k, gap in enumerate(gaps):
        t0 = t + gap
        t = t0 + 26 * (1 + k % 5)
        recs.append(_rec(t0, t, "barrier") if k % 2 else _rec(t0, t, "allreduce", bytes=8))
        if k == 40:                      # posted and cancelled: its time joins the compute
            recs.append(_rec(t + 26, t + 52, "irecv", peer=0, tag=5, bytes=16, req=77))
            recs.append(_rec(t + 78, t + 104, "wait", req=1))
            recs.append(_rec(t + 104, t + 104, "done", peer=-1, tag=-1, req=77))
            t += 104
    recs.append(_rec(t + 52, t + 78, "finalize"))
    end = t + 104
    recs.append(_rec(end, S0 + (end - C0) / RATE, "clock", bytes=2000, req=1))
    head = np.array([(MAGIC, 2, 0, 1)], HEADER)
    (folder / "rank-0.bin").write_bytes(head.tobytes() + np.array(recs, RECORD).tobytes())
    return folder


def _assert_self_consistent(trace: Trace) -> None:
    """Each compute is the gap from the previous call's leave (or MPI_Init's) to the next
    call's enter (or MPI_Finalize's) in ``trace.times``; a gap without one is <= 10 ns."""
    assert trace.times is not None
    for r, acts in enumerate(trace.ranks):
        calls = [*trace.times[r], (trace.measured["ends"][r], None)]   # finalize last
        leave, j, compute = trace.measured["starts"][r], 0, None
        for a in [*acts, ("finalize",)]:
            if a[0] == "compute":
                compute = a[1]
                continue
            enter, after = calls[j]
            j += 1
            if compute is None:
                assert enter - leave <= MIN_COMPUTE + 1e-12
            else:
                assert compute > MIN_COMPUTE
                assert compute == pytest.approx(enter - leave, rel=0, abs=1e-12)
            leave, compute = after, None

def test_compute_is_the_gap_between_the_times(tmp_path):
    """Computes and times from the one converted clock; the cancelled Irecv and its Wait
    leave no action, their time is in the compute around them."""
    trace = read_raw(_raw_log(tmp_path))
    acts = trace.ranks[0]
    assert {a[0] for a in acts} == {"compute", "barrier", "allreduce"}
    assert len([a for a in acts if a[0] != "compute"]) == 97
    assert all(a[0] != b[0] for a, b in zip(acts, acts[1:]))   # no two computes in a row
    _assert_self_consistent(trace)
    steps = {round(a[1] * 1e9) for a in acts if a[0] == "compute"}
    assert min(steps) == 11            # 1 step (10.015 ns) is noise or 11 ns, by its phase


def test_otf2_gives_the_raw_trace_back(tmp_path):
    """The same actions back from OTF2, each compute to 1 ps (both are whole ns)."""
    pytest.importorskip("otf2")
    from bsim.traces.otf2io import write_otf2
    trace = read_raw(_raw_log(tmp_path))
    back = load_trace(write_otf2(trace, tmp_path / "t.otf2"))
    for mine, theirs in zip(trace.ranks, back.ranks, strict=True):
        assert [a[0] for a in mine] == [a[0] for a in theirs]
        for a, b in zip(mine, theirs):
            if a[0] == "compute":
                assert a[1] == pytest.approx(b[1], rel=0, abs=1e-12)
            else:
                assert a == b
