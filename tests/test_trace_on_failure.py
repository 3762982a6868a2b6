"""``bsim run --trace FILE`` keeps the trace of a run that fails or is interrupted: what was
traced up to then, written atomically and marked incomplete (``otherData.incomplete``),
with one line on stderr saying where it is; the run's error line and status stay.

Expected times come from the programs below (rank r computes r ms), never from bsim.
"""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from bsim.cli.main import main

NET = ["--network", "hockney:latency=1e-6,bandwidth=1e9", "--protocol", "bsim"]
HEAD = "import bsim\nfrom mpi4py import MPI\ncomm = MPI.COMM_WORLD\n"

# Rank r computes r ms; rank 3 then waits for a message rank 0 never sends, the others
# for rank 3 in the barrier: a deadlock once rank 3 blocks, at t = 3 ms.
DEADLOCK = HEAD + ("bsim.add_time(1e-3 * comm.rank)\n"
                   "if comm.rank == 3:\n"
                   "    comm.Recv(bsim.buffer(8, MPI.BYTE), source=0)\n"
                   "comm.Barrier()\n")


def _spans(trace: dict) -> list[dict]:
    return [e for e in trace["traceEvents"]
            if e.get("ph") == "X" and e.get("cat") in ("calc", "wait", "comm")]


def _calc_us(trace: dict) -> dict[int, float]:
    out: dict[int, float] = defaultdict(float)
    for e in _spans(trace):
        if e["cat"] == "calc":
            out[e["tid"]] += e["dur"]
    return {r: t for r, t in out.items() if t > 0}


def test_a_deadlocked_run_keeps_its_trace(tmp_path, capsys):
    """The deadlock exits 2 with its error as before, and the trace holds each rank's
    compute up to the deadlock: ranks 1, 2, 3 for 1, 2, 3 ms, no span past 3 ms (it wrote
    no file and said nothing before)."""
    prog, out = tmp_path / "dl.py", tmp_path / "dl.trace.json"
    prog.write_text(DEADLOCK)
    status = main(["run", str(prog), "-n", "4", "--quiet", *NET, "--trace", str(out)])
    err = capsys.readouterr().err
    assert status == 2, err
    assert "bsim: error: deadlock at t=0.003" in err
    notes = [ln for ln in err.splitlines() if "partial trace" in ln]
    assert len(notes) == 1 and str(out) in notes[0], err
    trace = json.loads(out.read_text())
    assert _calc_us(trace) == pytest.approx({1: 1000.0, 2: 2000.0, 3: 3000.0}, abs=1e-6)
    assert max(e["ts"] + e["dur"] for e in _spans(trace)) <= 3000.0 + 1e-6
    incomplete = trace["otherData"]["incomplete"]
    assert incomplete["error"].startswith("deadlock at t=0.003")
    assert incomplete["last_event"] == pytest.approx(3e-3, abs=1e-12)
    assert not list(tmp_path.glob("*.tmp*")), "a temporary file was left"


def test_ctrl_c_keeps_the_trace_and_exits_130(tmp_path, capsys):
    """A SIGINT while rank 1 runs (after ranks 0 and 1 computed 1 and 2 ms and met in a
    barrier) is a Ctrl-C: status 130, one 'interrupted' line naming the trace, which ends
    at or before the interrupt's simulated time."""
    prog, out = tmp_path / "stop.py", tmp_path / "stop.trace.json"
    prog.write_text(HEAD + "import signal\n"
                    "bsim.add_time(1e-3 * (comm.rank + 1))\n"
                    "comm.Barrier()\n"
                    "if comm.rank == 1:\n"
                    "    signal.raise_signal(signal.SIGINT)\n")
    status = main(["run", str(prog), "-n", "2", "--quiet", *NET, "--trace", str(out)])
    err = capsys.readouterr().err
    assert status == 130, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bsim: interrupted at simulated t="), err
    assert "partial trace" in lines[0] and str(out) in lines[0]
    trace = json.loads(out.read_text())
    incomplete = trace["otherData"]["incomplete"]
    at = incomplete["sim_time"]
    assert at is not None and at >= 2e-3   # after the barrier that ends rank 1's 2 ms
    assert _calc_us(trace) == pytest.approx({0: 1000.0, 1: 2000.0}, abs=1e-6)
    assert max(e["ts"] + e["dur"] for e in _spans(trace)) <= at * 1e6 + 1e-6


def test_a_rank_error_keeps_the_trace(tmp_path, capsys):
    """An exception in rank 1 after 1 ms of compute: status 2, the rank's error line, and
    the trace of that compute."""
    prog, out = tmp_path / "boom.py", tmp_path / "boom.trace.json"
    prog.write_text(HEAD + "bsim.add_time(1e-3)\n"
                    "if comm.rank == 1:\n"
                    "    raise ValueError('boom')\n"
                    "comm.Barrier()\n")
    status = main(["run", str(prog), "-n", "2", "--quiet", *NET, "--trace", str(out)])
    err = capsys.readouterr().err
    assert status == 2, err
    assert "bsim: error: " in err and "boom" in err
    trace = json.loads(out.read_text())
    assert _calc_us(trace).get(1) == pytest.approx(1000.0, abs=1e-6)
    assert "boom" in trace["otherData"]["incomplete"]["error"]


def test_a_failure_before_anything_was_traced_says_so(tmp_path, capsys):
    """Two ranks that each wait for the other from the start deadlock at t = 0 with nothing
    traced: no file, and one line says so beside the error."""
    prog, out = tmp_path / "dl0.py", tmp_path / "dl0.trace.json"
    prog.write_text(HEAD + "comm.Recv(bsim.buffer(8, MPI.BYTE), source=1 - comm.rank)\n")
    status = main(["run", str(prog), "-n", "2", "--quiet", *NET, "--trace", str(out)])
    err = capsys.readouterr().err
    assert status == 2, err
    assert "bsim: error: deadlock at t=0" in err
    assert f"before anything was traced: no trace written to {out}" in err
    assert not out.exists()
