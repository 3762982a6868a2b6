"""A finished prediction is never lost: output files are written together, after the
summary, and a write that fails (a full disk, a file-size limit) names the option and the
path, keeps the files from before and exits non-zero.

The file-size limit is real: ``RLIMIT_FSIZE`` set in the child process (Python ignores
``SIGXFSZ``, so a write past the limit fails with ``EFBIG``, "File too large", as a write
onto a full disk fails with ``ENOSPC``)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = """\
from mpi4py import MPI
import bsim
comm = MPI.COMM_WORLD
for i in range(100):
    bsim.add_time(1e-3)
    comm.Barrier()
"""


def _limit(nbytes: int):
    def preexec() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))
    return preexec


def _bsim(args: list[str], limit: int | None = None, cwd: Path | None = None,
          launcher: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    cmd = (launcher or []) + [sys.executable, "-m", "bsim", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=240, cwd=cwd,
                          preexec_fn=_limit(limit) if limit else None,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.fixture()
def prog(tmp_path: Path) -> Path:
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    return path


def test_a_trace_past_the_file_size_limit_keeps_every_old_file(tmp_path, prog):
    """--json, --csv and --trace where the trace cannot be written: the summary and the
    JSON are on stdout, the error names --trace and its path, the old JSON and CSV are
    untouched (replaced together or not at all), no temporary is left, status 2.
    Before: 'bsim: error: [Errno 27] File too large' with neither option nor path, the
    JSON and CSV already replaced, no summary."""
    old = {name: f"old {name}\n" for name in ("r.json", "r.csv", "r.trace")}
    for name, text in old.items():
        (tmp_path / name).write_text(text)
    # 100 barriers on 4 ranks: a trace of ~80 kB, a JSON and CSV under 2 kB
    res = _bsim(["run", str(prog), "-n", "4", "--protocol", "bsim",
                 "--json", "r.json", "--csv", "r.csv", "--trace", "r.trace"],
                limit=20_000, cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    assert res.stderr.strip().splitlines()[-1].startswith(
        "bsim: error: --trace r.trace: cannot write the file (File too large)")
    assert "no output file was changed" in res.stderr
    assert "elapsed" in res.stdout                       # the summary was printed first
    document = json.loads(res.stdout[res.stdout.index("\n{") + 1:])
    assert document["ranks"] == 4
    for name, text in old.items():
        assert (tmp_path / name).read_text() == text, name
    assert _leftovers(tmp_path) == []


def test_a_json_past_the_limit_under_quiet_is_still_on_stdout(tmp_path, prog):
    """--quiet and a --json that cannot be written: the JSON goes to standard output
    (the result is not lost), the old file stays."""
    (tmp_path / "r.json").write_text("old\n")
    res = _bsim(["run", str(prog), "-n", "64", "--protocol", "bsim", "--quiet",
                 "--json", "r.json"], limit=3000, cwd=tmp_path)
    assert res.returncode == 2
    assert "--json r.json: cannot write the file (File too large)" in res.stderr
    assert json.loads(res.stdout)["ranks"] == 64
    assert (tmp_path / "r.json").read_text() == "old\n"
    assert _leftovers(tmp_path) == []


def test_a_sweep_replaces_both_files_or_neither(tmp_path, prog):
    """bsim sweep whose JSON passes the limit while its CSV fits: both old files kept
    (before: the CSV was replaced, the JSON old), the table printed, the error names
    -o and the path."""
    (tmp_path / "s.csv").write_text("old csv\n")
    (tmp_path / "s.json").write_text("old json\n")
    res = _bsim(["sweep", str(prog), "--param", "ranks=2,4", "--protocol", "bsim",
                 "--jobs", "1", "-o", "s"], limit=1500, cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    assert "bsim: error: -o s.json: cannot write the file (File too large)" in res.stderr
    assert "elapsed (s)" in res.stdout
    assert (tmp_path / "s.csv").read_text() == "old csv\n"
    assert (tmp_path / "s.json").read_text() == "old json\n"
    assert _leftovers(tmp_path) == []


@pytest.fixture()
def full_disk(tmp_path: Path):
    """A tmpfs of one page holding one old output: full (needs root to mount)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4k", "tmpfs", str(mount)],
                          capture_output=True)
    if done.returncode:
        pytest.skip("cannot mount a tmpfs here (not root)")
    try:
        (mount / "r.json").write_text("old\n")
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True)


def test_a_full_disk_names_the_option(full_disk, prog):
    """--json onto a full file system: 'No space left on device' with the option and the
    path (before: '[Errno 28] No space left on device' alone), the old file kept."""
    res = _bsim(["run", str(prog), "-n", "8", "--protocol", "bsim", "--quiet",
                 "--json", "r.json"], cwd=full_disk)
    assert res.returncode == 2
    assert ("bsim: error: --json r.json: cannot write the file (No space left on device)"
            in res.stderr)
    assert json.loads(res.stdout)["ranks"] == 8
    assert (full_disk / "r.json").read_text() == "old\n"
    assert _leftovers(full_disk) == []


def test_under_mpiexec_a_full_disk_names_the_option(full_disk, prog):
    """The same under mpiexec -n 2: one line naming --json and its path, non-zero status,
    the old file kept."""
    mpiexec = Path(sys.executable).parent / "mpiexec"
    if not mpiexec.exists():
        pytest.skip("no mpiexec beside the interpreter (the mpich wheel)")
    res = _bsim(["run", str(prog), "-n", "8", "--protocol", "bsim", "--quiet",
                 "--json", "r.json"], cwd=full_disk, launcher=[str(mpiexec), "-n", "2"])
    assert res.returncode != 0
    assert res.stderr.count("--json r.json: cannot write the file (No space left on "
                            "device)") == 1
    assert json.loads(res.stdout)["ranks"] == 8
    assert (full_disk / "r.json").read_text() == "old\n"
    assert _leftovers(full_disk) == []


def test_output_set_writes_all_temporaries_before_renaming(tmp_path):
    """OutputSet: when the second file cannot be written, the first is not replaced
    either (the directory of the second is a file: no temporary can be made there)."""
    from bsim.outputs.output_set import OutputSet, OutputWriteError
    (tmp_path / "a.json").write_text("old a\n")
    (tmp_path / "blocker").write_text("a file, not a folder\n")
    out = OutputSet()
    out.add("--json", tmp_path / "a.json", "new a\n")
    out.add("--csv", tmp_path / "blocker" / "b.csv", "new b\n")
    with pytest.raises(OutputWriteError, match=r"^--csv .*blocker/b.csv: cannot write"):
        out.commit()
    assert (tmp_path / "a.json").read_text() == "old a\n"
    assert not out.written
    assert _leftovers(tmp_path) == []
    good = OutputSet()
    good.add("--json", tmp_path / "a.json", "new a\n")
    good.add("--csv", tmp_path / "b.csv", b"new b\n")
    good.commit()
    assert (tmp_path / "a.json").read_text() == "new a\n"
    assert (tmp_path / "b.csv").read_text() == "new b\n"
    assert good.written
