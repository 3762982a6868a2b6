"""The bsim command's failures: one clear line, the right exit status, nothing lost."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT

from bsim.cli.main import main

HALO = ["run", "halo2d", "--param", "px=2", "--param", "py=2", "--param", "iterations=1"]


def _bsim(*args: str, **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bsim", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=120, **kw)


@pytest.mark.parametrize("where,expected", [
    ("dir", "is a directory"),
    ("under_file", "{f} is a file, not a directory"),
])
def test_unwritable_output_is_refused_before_the_run(tmp_path, capsys, where, expected):
    """--json onto a directory or under a file: one line naming the option, status 2, no run."""
    (tmp_path / "d").mkdir()
    (tmp_path / "f").write_text("")
    target = {"dir": tmp_path / "d", "under_file": tmp_path / "f" / "out.json"}[where]
    assert main([*HALO, "--json", str(target)]) == 2
    out, err = capsys.readouterr()
    assert err.strip() == f"bsim: error: --json {target}: " + expected.format(f=tmp_path / "f")
    assert "bsim prediction" not in out   # refused before simulating


def test_output_folders_are_created(tmp_path, capsys):
    """A missing folder of an output path is not an error: it is created."""
    target = tmp_path / "new" / "deeper" / "r.json"
    assert main([*HALO, "--json", str(target), "--quiet"]) == 0
    assert target.is_file()


def test_syntax_error_shows_pythons_message(tmp_path):
    """A program that does not compile: Python's own message (file, line), no bsim frames."""
    prog = tmp_path / "bad.py"
    prog.write_text("x = 1\ny = (\n")
    proc = _bsim("run", str(prog), "-n", "2")
    assert proc.returncode == 2
    assert f'File "{prog}", line 2' in proc.stderr
    assert "SyntaxError" in proc.stderr and "Traceback" not in proc.stderr


def test_debug_shows_the_traceback(tmp_path):
    """--debug re-raises: the full traceback is shown."""
    proc = _bsim("--debug", *HALO, "--json", str(tmp_path))
    assert proc.returncode == 1 and "Traceback" in proc.stderr


def test_broken_pipe_exits_quietly():
    """`bsim run ... | head -1`: no BrokenPipeError, status 0."""
    proc = subprocess.run(f"{sys.executable} -m bsim {' '.join(HALO)} | head -1", shell=True,
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.stdout.startswith("bsim prediction")
    assert proc.stderr == ""


def _wait_until_bsim_handles_signals(pid: int, timeout: float = 120) -> None:
    """Until the ``bsim`` command in process *pid* has started (its imports done): its
    ``main`` catches SIGTERM (``bsim/cli/signals.py``), which ``/proc/PID/status`` shows
    in the ``SigCgt`` mask. A SIGINT before then is a KeyboardInterrupt in an import,
    outside the command, and kills the process as the signal's default action does."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = Path(f"/proc/{pid}/status").read_text()
        caught = int(next(line for line in status.splitlines()
                          if line.startswith("SigCgt:")).split()[1], 16)
        if caught >> (signal.SIGTERM - 1) & 1:
            return
        time.sleep(0.05)
    raise AssertionError(f"bsim did not start within {timeout} s")


def test_ctrl_c_exits_130_and_writes_nothing(tmp_path):
    """SIGINT during a run: one line, status 130, an earlier output left intact."""
    out = tmp_path / "r.json"
    out.write_text("earlier\n")
    # a job started in the background by a non-interactive shell inherits SIGINT ignored
    # (and Python then keeps ignoring it): give the child the default disposition, as a
    # terminal's foreground job has
    p = subprocess.Popen([sys.executable, "-m", "bsim", "run", "sweep3d", "--param",
                          "iterations=200", "--json", str(out)], cwd=ROOT, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    _wait_until_bsim_handles_signals(p.pid)   # a loaded machine imports for seconds
    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=60)
    assert p.returncode == 130
    assert stderr.strip().startswith("bsim: interrupted at simulated t=")
    assert stderr.strip().endswith("s, nothing written")
    assert "Traceback" not in stderr
    assert out.read_text() == "earlier\n"


def test_missing_optional_package_names_the_extra(tmp_path, capsys, monkeypatch):
    """`bsim fit kernel` without scipy says which extra to install."""
    data = tmp_path / "k.csv"
    data.write_text("flops,seconds\n1,1e-9\n2,2e-9\n3,3e-9\n")
    for name in [m for m in sys.modules if m == "scipy" or m.startswith("scipy.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "scipy", None)   # import scipy -> ImportError
    assert main(["fit", "kernel", str(data), "--model", "linear"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == ("bsim: error: this needs the optional package scipy: "
                           "pip install 'bsim[fit]' (or pip install scipy)")


def test_plot_output_checked_first(tmp_path, capsys):
    """bsim plot -o onto a directory: refused with one line before reading the input."""
    assert main(["plot", str(tmp_path / "missing.json"), "-o", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == f"bsim: error: -o {tmp_path}: is a directory"


def test_sweep_outputs_checked_before_the_points(tmp_path, capsys):
    """bsim sweep -o PREFIX under a file: refused before any point runs."""
    (tmp_path / "f").write_text("")
    prefix = tmp_path / "f" / "sw"
    rc = main(["sweep", "halo2d", "--param", "px=1,2", "--jobs", "1", "-o", str(prefix)])
    assert rc == 2
    captured = capsys.readouterr()
    assert "[1/2]" not in captured.err
    assert captured.err.strip().endswith("is a file, not a directory")
    assert not Path(f"{prefix}.csv").exists()


@pytest.mark.parametrize("argv, says", [
    # an empty trace, found only when read
    (["run", "tests/programs/pingpong.py", "-n", "2", "--trace", "{tmp}/t.json",
      "--trace-ranks", "100"], "none of the ranks it records (100 and up)"),
    # the second silently won
    (["run", "tests/programs/pingpong.py", "-n", "2", "--collective", "bcast=analytic",
      "--collective", "BCAST=clog:c=1,d=0"], "--collective BCAST: given twice"),
    # wrote {tmp}/.csv and {tmp}/.json
    (["sweep", "halo2d", "--param", "px=1,2", "--param", "iterations=1", "--network",
      "hockney", "-o", "{tmp}/"], "a prefix names files"),
    # wrote a key "" under [kernels.k]
    (["fit", "kernel", "{tmp}/k.csv", "--model", "linear", "--profile", "{tmp}/p.toml",
      "--kernel", ""], "--kernel must name a kernel table key"),
    # wrote cores_per_node = 2 without a word
    (["calibrate", "network", "--quick", "--profile", "{tmp}/m.toml", "--cores-per-node",
      "0"], "--cores-per-node must be an integer >= 1"),
    # measured everything, then failed on a temporary file's name
    (["calibrate", "network", "--quick", "--profile", "{tmp}/m.toml", "--data", "{tmp}"],
     "--data {tmp}: is a directory"),
    (["calibrate", "collectives", "--quick", "--profile", "", "--csv", "{tmp}"],
     "--csv {tmp}: is a directory"),
])
def test_bad_options_are_one_line_before_any_work(tmp_path, capsys, monkeypatch, argv, says):
    monkeypatch.chdir(ROOT)
    (tmp_path / "k.csv").write_text("flops,seconds\n1,1e-9\n2,2e-9\n4,4e-9\n8,8e-9\n")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("bsim: error:"), err
    assert says.replace("{tmp}", str(tmp_path)) in err[0], err
    assert not list(tmp_path.glob(".*")) and not (tmp_path / "p.toml").exists()
