"""``bsim run`` under ``mpiexec -n K``: argument errors, a refused ``--trace`` and Ctrl-C each
say one line, from one host process; ``bsim sweep --quiet`` silences a skeleton's own
output; ``bsim plot`` of a sweep of several problems draws one line (and one ideal line)
per problem."""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import MPIEXEC, ROOT, needs_mpiexec, run_mpiexec

# each host process runs bsim's main() on ARGV, prints its status and exits with it
MAIN = ("import sys\nfrom bsim.cli.main import main\n"
        "try:\n    status = main({argv!r})\nexcept SystemExit as stop:\n"
        "    status = stop.code\nprint('status', status, flush=True)\nsys.exit(status)\n")

RING = ("from mpi4py import MPI\ncomm = MPI.COMM_WORLD\n"
        "comm.Sendrecv(b'x', dest=(comm.rank + 1) % comm.size, source=MPI.ANY_SOURCE)\n")

# a long run (a few minutes of host time); the last rank writes its host process's pid
LONG = '''import os
import sys
import bsim
from mpi4py import MPI
comm = MPI.COMM_WORLD
r, n = comm.rank, comm.size
if r == n - 1:
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.replace(sys.argv[1] + ".tmp", sys.argv[1])
for it in range(200000):
    bsim.add_time(1e-5)
    comm.Sendrecv(bsim.buffer(100, MPI.BYTE), dest=(r + 1) % n,
                  recvbuf=bsim.buffer(100, MPI.BYTE), source=(r - 1) % n)
    comm.Allreduce(bsim.buffer(1, MPI.DOUBLE), bsim.buffer(1, MPI.DOUBLE))
'''


def _statuses(stdout: str) -> list[int]:
    """The 'status N' each process printed (two processes' lines may interleave)."""
    return [int(n) for n in re.findall(r"\d+", stdout)] if stdout.count("status") == 2 else []


# -- argument errors and --trace under mpiexec --------------------------------------------
@needs_mpiexec
def test_an_argument_error_is_printed_once_under_mpiexec(tmp_path):
    """mpiexec -n 2 with --partition nodes: one usage block and one error line (it was
    printed by each host process), and every process still exits with status 2."""
    prog = tmp_path / "ring.py"
    prog.write_text(RING)
    proc = run_mpiexec(2, MAIN.format(argv=["run", str(prog), "-n", "4", "--protocol", "bsim",
                                            "--partition", "nodes"]))
    assert proc.stderr.count("usage: bsim run") == 1, proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if "error: argument --partition" in ln]
    assert len(errors) == 1 and "unknown partition 'nodes'" in errors[0], proc.stderr
    assert _statuses(proc.stdout) == [2, 2], proc.stdout


@pytest.mark.parametrize("variable", ["PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"])
def test_an_argument_error_is_printed_by_the_first_process_only(variable, monkeypatch,
                                                                capsys):
    """The launcher's rank variable, before MPI is initialised: rank 1 exits with status 2
    silently, rank 0 prints the usage and the error."""
    from bsim.cli.main import main
    monkeypatch.delitem(sys.modules, "mpi4py.MPI", raising=False)
    argv = ["run", "prog.py", "--partition", "nodes"]
    monkeypatch.setenv(variable, "1")
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2 and capsys.readouterr().err == ""
    monkeypatch.setenv(variable, "0")
    with pytest.raises(SystemExit) as stop:
        main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "usage: bsim run" in err
    assert "error: argument --partition: unknown partition 'nodes'" in err


@needs_mpiexec
def test_a_refused_trace_is_one_line_under_mpiexec(tmp_path):
    """--trace with K = 2: only the real error, not first 'the run failed before anything
    was traced'."""
    prog = tmp_path / "ring.py"
    prog.write_text(RING)
    trace = tmp_path / "t.json"
    proc = run_mpiexec(2, MAIN.format(argv=["run", str(prog), "-n", "4", "--protocol", "bsim",
                                            "--trace", str(trace)]))
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("bsim: error: tracing is not supported in distributed runs")
    assert _statuses(proc.stdout) == [2, 2], proc.stdout
    assert not trace.exists()


# -- Ctrl-C under mpiexec ------------------------------------------------------------------
def _interrupt(tmp_path: Path, whole_job: bool) -> tuple[subprocess.CompletedProcess[str],
                                                         Path]:
    """Start LONG under mpiexec -n 2 with --json; once it runs, SIGINT the whole job (as
    Ctrl-C in a terminal does) or only the host process of the last rank."""
    prog = tmp_path / "long.py"
    prog.write_text(LONG)
    pid_file = tmp_path / "pid"
    out = tmp_path / "r.json"
    out.write_text("{}\n")
    assert MPIEXEC is not None
    cmd = [MPIEXEC, "-n", "2", sys.executable, "-m", "bsim", "run", str(prog), "-n", "8",
           "--protocol", "bsim", "--json", str(out), "--quiet", "--", str(pid_file)]
    env = dict(os.environ, PYTHONPATH=str(ROOT), BSIM_HOST_TIMEOUT="30")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=ROOT, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not pid_file.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        assert pid_file.exists(), proc.communicate(timeout=30)
        time.sleep(1.5)   # well inside the run
        if whole_job:
            os.killpg(proc.pid, signal.SIGINT)
        else:
            os.kill(int(pid_file.read_text()), signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert out.read_text() == "{}\n"   # nothing written
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr), out


@needs_mpiexec
def test_ctrl_c_under_mpiexec_gives_the_simulated_time(tmp_path):
    """Ctrl-C on the whole job (K = 2): one line with the simulated time, as with K = 1
    (it said 'bsim: interrupted, nothing written'), and status 130."""
    proc, _ = _interrupt(tmp_path, whole_job=True)
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("bsim:")]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("bsim: interrupted at simulated t="), proc.stderr
    # host process 0 prints it, or, when mpiexec's own handling of the signal kept it from
    # telling the others within 2 s (a loaded machine), the host process that waited
    assert re.search(r"\(host process \d's clock\), nothing written$", lines[0]), lines[0]
    assert proc.returncode == 130, proc.stderr


@needs_mpiexec
def test_a_sigint_to_one_host_process_says_so(tmp_path):
    """SIGINT to host process 1 only: one line (it said nothing) and status 130."""
    proc, _ = _interrupt(tmp_path, whole_job=False)
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("bsim:")]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("bsim: interrupted"), proc.stderr
    assert "at simulated t=" in lines[0] and "nothing written" in lines[0]
    assert proc.returncode == 130, proc.stderr


def test_another_host_process_s_ctrl_c_is_reported_as_an_interrupt(capsys):
    """Host process 0 told that host process 1 stopped on a Ctrl-C: the interrupt's line
    and status 130, not 'bsim: error: host process 1 failed: KeyboardInterrupt:'."""
    from bsim.cli.hosts import report
    from bsim.errors import SimulationError
    ns = argparse.Namespace(debug=False, run_state={"started": False})
    exc = SimulationError("host process 1 failed: KeyboardInterrupt: ")
    assert report(exc, ns, {"rank": 0, "size": 2, "comm": None}) == 130
    assert capsys.readouterr().err == ("bsim: interrupted (Ctrl-C on host process 1) "
                                       "before the simulation started, nothing written\n")


# -- sweep --quiet ------------------------------------------------------------------------
def test_sweep_quiet_silences_the_skeletons_own_output(tmp_path, capfd):
    """bsim sweep --quiet of HPL: nothing on stdout (HPL's result lines were printed);
    without --quiet HPL still prints them."""
    from bsim.cli.main import main
    argv = ["sweep", "hpl", "--param", "n=200", "--param", "p=1,2", "--param", "q=1",
            "--jobs", "1", "-o", str(tmp_path / "sw")]
    assert main(argv + ["--quiet"]) == 0
    out, err = capfd.readouterr()
    assert out == "" and err == "", (out, err)
    assert (tmp_path / "sw.json").exists()
    assert main(argv) == 0
    assert "WR1RR1" in capfd.readouterr().out   # HPL's result line


# -- plot: one line per problem -----------------------------------------------------------
def _grid_rows(tmp_path: Path) -> tuple[list[dict[str, Any]], str]:
    """A grid sweep over two nx (two problems, two baselines) on 1, 2 and 4 ranks."""
    from bsim.cli.sweep import parse_param_lists, run_sweep
    from bsim.outputs.scaling import write_json
    lists = parse_param_lists(["px=1,2,4", "py=1", "nx=64,256", "ny=64", "iterations=2"])
    rows = run_sweep("halo2d", lists, jobs=1)
    path = str(tmp_path / "grid.json")
    write_json(rows, path, target="halo2d", mode="grid")
    return rows, path


def test_the_scaling_plot_draws_one_line_and_one_ideal_line_per_problem(tmp_path):
    """Each nx its own predicted line (its own points) and its own ideal line from its own
    baseline; the efficiency panel one line per nx, each starting at 1."""
    pytest.importorskip("matplotlib")
    from bsim.outputs.plots import scaling
    rows, path = _grid_rows(tmp_path)
    fig = scaling(path)
    time_axes, eff_axes = fig.axes[:2]
    lines = {ln.get_label(): (list(ln.get_xdata()), list(ln.get_ydata()))
             for ln in time_axes.get_lines()}
    for nx in (64, 256):
        own = [r for r in rows if r["nx"] == nx]
        ts = [r["elapsed"] * 1e3 for r in sorted(own, key=lambda r: r["ranks"])]
        xs, ys = lines[f"nx={nx}"]
        assert [int(x) for x in xs] == [1, 2, 4] and ys == pytest.approx(ts)
        ideal = [key for key in lines if key.startswith("ideal") and key.endswith(f"nx={nx}")]
        assert len(ideal) == 1
        xs, ys = lines[ideal[0]]
        assert ys == pytest.approx([ts[0] / p for p in (1, 2, 4)])
    assert len(lines) == 4, list(lines)
    effs = [list(ln.get_ydata()) for ln in eff_axes.get_lines() if ln.get_label() != "_child0"
            and len(ln.get_xdata()) == 3]
    assert len(effs) == 2 and all(e[0] == pytest.approx(1.0) for e in effs), effs
