"""``bsim record`` on a tiny C MPI program built here (benchmarks/apps/traces_app.c) with the
``mpicc`` of the MPI that runs it (the mpich wheel's, beside ``mpiexec``): what the trace
holds is checked against the program's source, and OTF2 and JSON give it back unchanged.

Skips when no ``mpicc`` is beside ``mpiexec``; with ``BSIM_REQUIRE_MPI=1`` (CI) that is an
error instead."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from conftest import MPIEXEC, ROOT

from bsim.traces import load_trace, record
from bsim.traces.build import find_mpicc

MPICC = Path(MPIEXEC).with_name("mpicc") if MPIEXEC else None
if MPICC is None or not MPICC.exists():
    if os.environ.get("BSIM_REQUIRE_MPI") == "1":
        raise RuntimeError("BSIM_REQUIRE_MPI=1 but no mpicc beside mpiexec (the mpich wheel "
                           "has one: pip install -e '.[test]')")
    pytest.skip("needs mpicc beside mpiexec (pip install 'bsim[mpi]')", allow_module_level=True)

ITERS, NBYTES, MICROSECONDS = 12, 4096, 300


@pytest.fixture(scope="module")
def app(tmp_path_factory) -> Path:
    """The test program, compiled with the MPI's own wrapper."""
    out = tmp_path_factory.mktemp("app") / "traces_app"
    subprocess.run([str(MPICC), "-O1", str(ROOT / "benchmarks/apps/traces_app.c"), "-o",
                    str(out)], check=True, capture_output=True, text=True)
    return out


@pytest.fixture(scope="module")
def recorded(app, tmp_path_factory):
    """A 2-rank run recorded as JSON (the cache in a temporary folder)."""
    where = tmp_path_factory.mktemp("rec")
    before = os.environ.get("BSIM_CACHE")
    os.environ["BSIM_CACHE"] = str(where / "cache")
    try:
        trace = record([MPIEXEC, "-n", "2", str(app), str(ITERS), str(NBYTES),
                        str(MICROSECONDS)], where / "t.json", timeout=300)
    finally:   # the other tests keep their cache
        if before is None:
            del os.environ["BSIM_CACHE"]
        else:
            os.environ["BSIM_CACHE"] = before
    return trace, where


def test_mpicc_beside_the_launcher_is_chosen():
    """mpiexec of the mpich wheel -> its mpicc (not whatever mpicc the PATH has first)."""
    assert find_mpicc([MPIEXEC, "-n", "2", "./a"]) == str(MPICC)


def test_calls_match_the_program(recorded):
    """Per iteration, traces_app.c makes one Sendrecv, two Irecv, two Isend, one Waitall
    of all four, two Allreduce of one double (world, then its half) and one Bcast."""
    trace, _ = recorded
    assert trace.nranks == 2
    for r, acts in enumerate(trace.ranks):
        ops = Counter(a[0] for a in acts)
        assert ops["sendrecv"] == ops["wait"] == ops["bcast"] == ITERS
        assert ops["irecv"] == ops["isend"] == 2 * ITERS
        assert ops["allreduce"] == 2 * ITERS and ops["split"] == 1
        other = 1 - r
        for a in acts:
            if a[0] == "sendrecv":   # right = left = the other rank at 2 ranks
                assert a[2] == other and a[5] == other and a[4] == a[7] == NBYTES
            if a[0] in ("isend", "irecv"):
                assert a[2] == other and a[4] == NBYTES and a[3] in (2, 3)
            if a[0] == "wait":
                assert len(a[1]) == 4
            if a[0] == "allreduce":
                assert a[2] == 8
            if a[0] == "bcast":
                assert a[2] == NBYTES and a[3] == 0
        split = next(a for a in acts if a[0] == "split")
        assert split[2:] == (2, r, 0)    # colour rank % 2: alone in its half, key 0


def test_busy_block_is_compute(recorded):
    """The spin of 300 us before each Waitall is recorded as at least 300 us of compute."""
    trace, _ = recorded
    for acts in trace.ranks:
        before_wait = [acts[i - 1][1] for i, a in enumerate(acts)
                       if a[0] == "wait" and acts[i - 1][0] == "compute"]
        assert len(before_wait) == ITERS
        assert all(s >= MICROSECONDS * 1e-6 for s in before_wait)
    assert trace.measured["wall"] >= ITERS * MICROSECONDS * 1e-6


def test_cpu_seconds_are_recorded(recorded):
    """Each rank's CPU seconds from MPI_Init to MPI_Finalize: at least its busy spins
    (12 x 300 us of CPU) and at most its wall time (one thread of work per rank; 1 ms
    for the clock reads)."""
    trace, _ = recorded
    cpu, wall = trace.measured["cpu"], trace.measured["wall"]
    assert len(cpu) == 2
    assert all(ITERS * MICROSECONDS * 1e-6 <= c <= wall + 1e-3 for c in cpu)


def test_compute_as_cpu_seconds(app, tmp_path, monkeypatch):
    """--compute-clock cpu: the same calls, and compute that is CPU time: in all more than
    nothing and at most the rank's CPU seconds (which also hold the time inside calls; a
    spin descheduled gets less CPU than its wall time, so no lower bound from it)."""
    monkeypatch.setenv("BSIM_CACHE", str(tmp_path / "cache"))
    trace = record([MPIEXEC, "-n", "2", str(app), "6", str(NBYTES), str(MICROSECONDS)],
                   tmp_path / "t.json", timeout=300, compute_clock="cpu")
    assert trace.measured["compute_clock"] == "cpu"
    for r, acts in enumerate(trace.ranks):
        ops = Counter(a[0] for a in acts)
        assert ops["sendrecv"] == ops["wait"] == ops["bcast"] == 6
        compute = sum(a[1] for a in acts if a[0] == "compute")
        assert 0 < compute <= trace.measured["cpu"][r] + 1e-3


def test_json_and_otf2_give_the_trace_back(recorded, tmp_path):
    """JSON exactly; OTF2 (1 ns ticks) with compute within 1 ns."""
    pytest.importorskip("otf2")
    from bsim.traces.otf2io import write_otf2
    trace, where = recorded
    assert load_trace(where / "t.json").ranks == trace.ranks
    back = load_trace(write_otf2(trace, tmp_path / "t.otf2"))
    for mine, theirs in zip(trace.ranks, back.ranks, strict=True):
        assert [a[0] for a in mine] == [a[0] for a in theirs]
        for a, b in zip(mine, theirs):
            if a[0] == "compute":
                assert abs(a[1] - b[1]) <= 1.01e-9
            else:
                assert a == b


def test_cli_record_replay_skeleton(app, tmp_path):
    """The three commands end to end; the skeleton reproduces the replay at 2 ranks and
    runs at 8."""
    env = dict(os.environ, BSIM_CACHE=str(tmp_path / "cache"))
    bsim = [sys.executable, "-m", "bsim"]
    net = ["--network", "hockney:latency=1e-06,bandwidth=1000000000.0", "--protocol", "bsim"]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        out = subprocess.run([*bsim, *args], capture_output=True, text=True, env=env,
                             cwd=tmp_path, timeout=300)
        assert out.returncode == 0, out.stderr
        return out

    run("record", "-o", "app-trace.json", "--", MPIEXEC, "-n", "2", str(app), "5", "1024", "50")
    run("replay", "app-trace.json", *net, "--json", "replay.json", "--quiet")
    run("skeleton", "app-trace.json", "-o", "app_skel.py")
    run("run", "app_skel.py", "-n", "2", *net, "--json", "skel2.json", "--quiet")
    run("run", "app_skel.py", "-n", "8", *net, "--json", "skel8.json", "--quiet")
    import json
    replayed = json.loads((tmp_path / "replay.json").read_text())["elapsed"]
    skel = json.loads((tmp_path / "skel2.json").read_text())["elapsed"]
    assert skel == pytest.approx(replayed, rel=0.01)
    assert json.loads((tmp_path / "skel8.json").read_text())["ranks"] == 8


def test_failing_command_is_reported(app, tmp_path):
    """A program that fails: the exit status and its output, not a trace."""
    with pytest.raises(RuntimeError, match="exited with status"):
        record([MPIEXEC, "-n", "1", "false"], tmp_path / "t.json", timeout=120)
