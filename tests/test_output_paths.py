"""Output paths: links followed, devices and FIFOs written in place, one file per option,
standard output carrying only the result, and host-measured compute recorded."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import ROOT

from bsim.cli.main import main
from bsim.outputs.result import Result

NET = "hockney:latency=1e-06,bandwidth=1000000000.0"
PROGRAM = "import bsim\nfrom mpi4py import MPI\nbsim.add_time(1e-3)\nMPI.COMM_WORLD.Barrier()\n"
# prints through Python, through descriptor 1 and through a subprocess
PRINTER = ("import os, subprocess, sys\nfrom mpi4py import MPI\n"
           "print('hello from', MPI.COMM_WORLD.rank)\n"
           "os.write(1, b'raw write to fd 1\\n')\n"
           "subprocess.run([sys.executable, '-c', 'print(\"child output\")'])\n"
           "MPI.COMM_WORLD.Barrier()\n")


@pytest.fixture
def prog(tmp_path: Path) -> Path:
    """A 1 ms compute step then a barrier (elapsed 1 ms + the barrier's cost)."""
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    return path


def _run(prog: Path, *args: str) -> int:
    return main(["run", str(prog), "-n", "2", "--network", NET, "--quiet", *args])


def _error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err   # one line, no traceback
    return lines[0]


# -- item 1: links followed, non-regular files written in place -------------------------------
def test_symlink_stays_a_link_and_its_target_holds_the_json(tmp_path, prog):
    """--json LINK replaces the link's target atomically; the link is still a link."""
    (tmp_path / "real.json").write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to("real.json")
    assert _run(prog, "--json", str(link)) == 0
    assert link.is_symlink() and os.readlink(link) == "real.json"
    assert json.loads((tmp_path / "real.json").read_text())["ranks"] == 2


def test_dangling_symlink_creates_its_target(tmp_path, prog):
    """A link to a file not there yet: the file is created, the link kept."""
    link = tmp_path / "link.csv"
    link.symlink_to(tmp_path / "sub" / "new.csv")
    assert _run(prog, "--csv", str(link)) == 0
    assert link.is_symlink()
    assert (tmp_path / "sub" / "new.csv").read_text().startswith("rank,finish")


def test_fifo_stays_a_fifo_and_its_reader_gets_the_json(tmp_path, prog):
    """--json FIFO: checked without blocking, written in place, read whole by a reader."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    try:
        assert _run(prog, "--json", str(fifo)) == 0
        out, _ = reader.communicate(timeout=30)
    finally:
        reader.kill()
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert json.loads(out)["ranks"] == 2


def test_character_device_is_written_not_replaced(tmp_path, prog):
    """--json and --csv on a null device (as /dev/null): it stays a character device."""
    null = tmp_path / "mynull"
    try:
        os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, AttributeError):
        pytest.skip("cannot create a device node here")
    assert _run(prog, "--json", str(null), "--csv", str(null)) == 0   # a device takes both
    assert stat.S_ISCHR(os.lstat(null).st_mode)


def test_descriptor_path_as_from_process_substitution(prog):
    """--csv /dev/fd/N (bash's >(...)) passes the check and writes through the descriptor."""
    r, w = os.pipe()
    try:
        assert _run(prog, "--csv", f"/dev/fd/{w}") == 0
        os.close(w)
        with os.fdopen(r, "rb") as fh:
            text = fh.read().decode()
    finally:
        for fd in (r, w):
            try:
                os.close(fd)
            except OSError:
                pass
    assert text.splitlines()[0] == "rank,finish,calc,wait,comm,ops,messages,bytes"
    assert len(text.splitlines()) == 3


def test_descriptor_not_open_is_refused_before_the_run(prog, capsys):
    """A /dev/fd/N that this process does not hold: one line, status 2."""
    fd = os.open(os.devnull, os.O_RDONLY)
    os.close(fd)
    assert _run(prog, "--json", f"/dev/fd/{fd}") == 2
    assert _error_line(capsys.readouterr().err) == (
        f"bsim: error: --json /dev/fd/{fd}: file descriptor {fd} is not open")


def test_unix_socket_gets_the_json_and_stays_a_socket(tmp_path, prog):
    """--json SOCKET connects to it and sends the document."""
    path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    server.settimeout(30)
    got: list[bytes] = []

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            got.append(b"".join(iter(lambda: conn.recv(65536), b"")))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        assert _run(prog, "--json", str(path)) == 0
        thread.join(30)
    finally:
        server.close()
    assert stat.S_ISSOCK(os.lstat(path).st_mode)
    assert json.loads(got[0])["ranks"] == 2


# -- item 2: one file per option, no empty path --------------------------------------------
@pytest.mark.parametrize("first,second", [
    (("--json", "same.out"), ("--csv", "same.out")),
    (("--json", "same.out"), ("--csv", "./same.out")),
    (("--csv", "same.out"), ("--trace", "sub/../same.out")),
    (("--json", "link.out"), ("--trace", "same.out")),      # link.out -> same.out
])
def test_two_options_naming_one_file_are_refused(tmp_path, prog, capsys, monkeypatch,
                                                  first, second):
    """Both options in one line, status 2, nothing written (the run did not start)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "link.out").symlink_to("same.out")
    assert _run(prog, *first, *second) == 2
    line = _error_line(capsys.readouterr().err)
    assert line == (f"bsim: error: {first[0]} {first[1]} and {second[0]} {second[1]} name the "
                    f"same file: give each output its own path")
    assert not (tmp_path / "same.out").exists()


@pytest.mark.parametrize("option", ["--json", "--csv", "--trace"])
def test_empty_output_path_is_refused(prog, capsys, option):
    """--json "" is an error (it wrote nothing and exited 0)."""
    assert _run(prog, option, "") == 2
    assert _error_line(capsys.readouterr().err) == (
        f"bsim: error: {option}: empty path (give a file name, or '-' for standard output)")


# -- item 3: standard output carries only the result -----------------------------------------
def test_json_to_stdout_parses_while_the_program_prints(tmp_path):
    """--json -: the program's print(), raw fd-1 writes and children go to stderr."""
    path = tmp_path / "printer.py"
    path.write_text(PRINTER)
    proc = subprocess.run([sys.executable, "-m", "bsim", "run", str(path), "-n", "2",
                           "--network", NET, "--json", "-"], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["ranks"] == 2
    for line in ("hello from 0", "hello from 1", "raw write to fd 1", "child output",
                 "bsim prediction"):
        assert line in proc.stderr


def test_csv_to_stdout_in_process_keeps_prints_off_stdout(tmp_path, capsys):
    """--csv - through main(): the program's prints are on stderr, stdout is the CSV;
    without a '-' output they stay on stdout."""
    path = tmp_path / "p.py"
    path.write_text("from mpi4py import MPI\nprint('rank says hi', MPI.COMM_WORLD.rank)\n")
    assert main(["run", str(path), "-n", "2", "--network", NET, "--csv", "-"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0] == "rank,finish,calc,wait,comm,ops,messages,bytes"
    assert len(out.splitlines()) == 3 and "rank says hi 1" in err
    assert main(["run", str(path), "-n", "2", "--network", NET, "--quiet"]) == 0
    assert "rank says hi 0" in capsys.readouterr().out


# -- item 4: host-measured compute recorded; --compute-scale checked ---------------------------
def test_measured_compute_and_scale_are_recorded(tmp_path, prog, capsys):
    """JSON key compute, the summary's compute line, read back, and compare names it."""
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert main(["run", str(prog), "-n", "2", "--network", NET, "--compute", "measure",
                 "--compute-scale", "10", "--json", str(a)]) == 0
    assert "  compute   measure:scale=10.0" in capsys.readouterr().out
    data = json.loads(a.read_text())
    assert data["compute"] == "measure:scale=10.0"
    assert Result.from_json(a).compute == "measure:scale=10.0"
    assert _run(prog, "--json", str(b)) == 0
    assert "compute" not in json.loads(b.read_text())      # add_time only: as before
    capsys.readouterr()
    assert main(["compare", str(b), str(a)]) == 0
    assert "compute differ: none -> measure:scale=10.0" in capsys.readouterr().out


def test_older_json_without_compute_reads(tmp_path, prog):
    """A result written before the compute field still loads (compute = '')."""
    path = tmp_path / "r.json"
    assert _run(prog, "--json", str(path)) == 0
    data = json.loads(path.read_text())
    data.pop("compute", None)
    assert Result.from_dict(data).compute == ""


def test_compute_scale_without_measure_is_refused(prog, capsys):
    """--compute-scale only scales host-measured compute: alone it is an error."""
    assert _run(prog, "--compute-scale", "2") == 2
    assert _error_line(capsys.readouterr().err) == (
        "bsim: error: --compute-scale 2 needs --compute measure (it scales host-measured "
        "compute; add_time is not scaled)")


@pytest.mark.parametrize("value", ["0", "-0", "-1", "inf", "nan"])
def test_compute_scale_must_be_positive(prog, capsys, value):
    """Zero, negative and non-finite scales: one line naming the option."""
    assert _run(prog, "--compute", "measure", f"--compute-scale={value}") == 2
    line = _error_line(capsys.readouterr().err)
    assert line.startswith("bsim: error: --compute-scale must be a number > 0")
