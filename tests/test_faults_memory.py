"""The memory check reads the process's own limits (``ulimit -v``, ``ulimit -d``, the
cgroup's) as well as free memory, and a ``MemoryError`` during a run is one line that
says how far the run got, the estimate and what to try, naming no rank."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

import bsim
from bsim.cli.failures import report

ROOT = Path(__file__).resolve().parents[1]
KIB_PER_RANK = 12   # bsim.engine.host_memory.KIB_PER_RANK
PROGRAM = "from mpi4py import MPI\nMPI.COMM_WORLD.Barrier()\n"


def _run_limited(tmp_path: Path, megabytes: int, args: list[str]
                 ) -> subprocess.CompletedProcess[str]:
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (megabytes << 20, megabytes << 20))
    return subprocess.run([sys.executable, "-m", "bsim", "run", str(prog), "--protocol",
                           "bsim", "--quiet", *args], capture_output=True, text=True,
                          timeout=300, preexec_fn=limit,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_the_address_space_limit_refuses_the_run_before_it_starts(tmp_path):
    """400,000 ranks (4.6 GiB at 12 KiB each) under ulimit -v 2 GiB: refused at once
    naming that limit, though the machine's free memory would hold them (before: the
    check read MemAvailable only, and the run allocated until a MemoryError)."""
    free = next((int(line.split()[1]) * 1024 for line in open("/proc/meminfo")
                 if line.startswith("MemAvailable:")), None)
    if free is None or free < 400_000 * KIB_PER_RANK * 1024:
        pytest.skip("this machine's free memory alone would refuse the run")
    res = _run_limited(tmp_path, 2048, ["-n", "400000"])
    assert res.returncode == 2
    assert res.stderr.startswith("bsim: error: 400,000 virtual ranks need about 4.6 GiB "
                                 "(12 KiB each) but ")
    assert "GiB is left under the address-space limit (ulimit -v)" in res.stderr


def test_out_of_memory_while_creating_ranks_is_one_line(tmp_path):
    """--no-memory-check and 10**9 ranks under ulimit -v 700 MiB: one line saying how
    many ranks were created, the estimate and what to try (before: 'bsim: error:' with
    an empty message)."""
    res = _run_limited(tmp_path, 700, ["-n", str(10**9), "--no-memory-check"])
    assert res.returncode == 2, res.stderr
    line = res.stderr.strip()
    assert "\n" not in line
    assert line.startswith("bsim: error: out of memory after ")
    assert "ranks were created of a 1,000,000,000-rank run, estimate 12 KiB per rank" in line
    assert "try fewer ranks" in line and "rank 0" not in line


def test_a_memory_error_in_a_rank_blames_no_rank():
    """A MemoryError raised in rank 3 at t = 0.5 s is the host's: 'out of memory at
    simulated t=0.5 s', not 'rank 3 raised MemoryError:' (before)."""
    def main():
        comm = bsim.MPI.COMM_WORLD
        bsim.add_time(0.5)
        if comm.Get_rank() == 3:
            raise MemoryError
        comm.Barrier()
    with pytest.raises(MemoryError) as err:
        bsim.simulate(main, 4, protocol="bsim")
    text = str(err.value)
    assert text.startswith("out of memory at simulated t=0.5 s of a 4-rank run, estimate "
                           "12 KiB per rank")
    assert "rank 3" not in text


def test_an_empty_memory_error_is_never_an_empty_line(capsys):
    """report(MemoryError()) prints a message, not 'bsim: error:' alone."""
    assert report(MemoryError()) == 2
    err = capsys.readouterr().err
    assert err.startswith("bsim: error: out of memory (MemoryError); try fewer ranks")


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_the_cgroup_limit_is_read(tmp_path, monkeypatch, version):
    """A control group limited to 3 GiB with 1 GiB in use: 2 GiB left, named as the
    cgroup's (a hand-made /sys/fs/cgroup tree; the group's folder under the root, as
    outside a container, with an unlimited parent)."""
    from bsim.engine import host_memory
    root = tmp_path / "cgroup"
    if version == "v2":
        (tmp_path / "self").write_text("0::/job/step\n")
        group, files = root / "job" / "step", ("memory.max", "memory.current")
        (root / "job").mkdir(parents=True)
        (root / "job" / "memory.max").write_text("max\n")
    else:
        (tmp_path / "self").write_text("5:cpu:/\n4:memory:/job/step\n")
        group, files = root / "memory" / "job" / "step", ("memory.limit_in_bytes",
                                                          "memory.usage_in_bytes")
    group.mkdir(parents=True)
    (group / files[0]).write_text(f"{3 << 30}\n")
    (group / files[1]).write_text(f"{1 << 30}\n")
    monkeypatch.setattr(host_memory, "CGROUP_ROOT", root)
    monkeypatch.setattr(host_memory, "PROC_CGROUP", tmp_path / "self")
    monkeypatch.setattr(host_memory, "_meminfo", lambda: 100 << 30)
    assert host_memory._cgroup_room() == 2 << 30
    room = host_memory.available_memory()
    if resource.getrlimit(resource.RLIMIT_AS)[0] == resource.RLIM_INFINITY:
        assert room == (2 << 30, "left under the control group's memory limit (cgroup)")
    with pytest.raises(MemoryError, match=r"about 2\.3 GiB .* but 2\.0 GiB is left under "
                                          r"the control group's memory limit"):
        host_memory.check_rank_memory(200_000)
