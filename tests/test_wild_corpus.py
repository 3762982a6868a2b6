"""Ordinary mpi4py programs, run unmodified under real ``mpiexec`` and under bsim.

``tests/wild/`` holds programs written in the styles of public tutorials and courses
(point-to-point, collectives, communicators, datatypes, one-sided, MPI-IO, task farms,
small applications, Spawn, ``mpi4py.futures``, threads); files starting with ``_`` are
helpers the programs spawn.  Each program's first lines say how to run it: ``# ranks: N``
and, optionally, ``# command: -m mpi4py.futures`` (as ``python -m mpi4py.futures
prog.py``).  Each runs under ``mpiexec -n N`` (the venv's MPICH) and under ``bsim run
prog.py -n N`` in this process; the lines printed, sorted (ranks interleave differently),
must be equal.  ``docs/mpi_coverage.md`` reports the rate.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import MPIEXEC, needs_mpiexec

from bsim.cli.main import main as bsim_main

WILD = Path(__file__).resolve().parent / "wild"
PROGRAMS = sorted(p for p in WILD.glob("*.py") if not p.name.startswith("_"))
NET = ["--network", "hockney:latency=1e-06,bandwidth=1e9", "--protocol", "bsim"]


def header(path: Path) -> tuple[int, list[str]]:
    """``(ranks, command)`` from the program's ``# ranks:`` and ``# command:`` lines."""
    ranks, command = 1, []
    for line in path.read_text().splitlines()[:3]:
        if line.startswith("# ranks:"):
            ranks = int(line.split(":", 1)[1])
        elif line.startswith("# command:"):
            command = line.split(":", 1)[1].split()
    return ranks, command


def real_lines(path: Path, cwd: Path) -> list[str]:
    """The lines every rank printed under real mpiexec: one output file per rank
    (MPICH's ``-outfile-pattern``), as two ranks' prints interleave within a line on a
    shared standard output."""
    ranks, command = header(path)
    assert MPIEXEC is not None
    done = subprocess.run([MPIEXEC, "-outfile-pattern", "stdout.%r", "-n", str(ranks),
                           sys.executable, *command, str(path)],
                          cwd=cwd, capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=""))
    assert done.returncode == 0, done.stderr[-2000:]
    lines = []
    for out in sorted(cwd.glob("stdout.*")):
        lines += out.read_text().splitlines()
        out.unlink()
    return sorted(lines)


def simulated_lines(path: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    ranks, command = header(path)
    capsys.readouterr()
    status = bsim_main(["run", *command, str(path), "-n", str(ranks), "--quiet", *NET])
    out, err = capsys.readouterr()
    assert status == 0, err[-2000:]
    return sorted(out.splitlines())


def test_corpus_is_large_and_covers_every_style() -> None:
    """At least 60 programs, in every style the corpus promises."""
    assert len(PROGRAMS) >= 60
    prefixes = {p.name.split("_")[0] for p in PROGRAMS}
    assert {"p2p", "coll", "comm", "dt", "rma", "io", "farm", "app", "spawn", "futures",
            "threads"} <= prefixes


@needs_mpiexec
@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_same_output_as_mpiexec(path: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    """The program prints the same lines under bsim as under real mpiexec."""
    pytest.importorskip("mpi4py")
    real_dir, sim_dir = tmp_path / "real", tmp_path / "sim"
    real_dir.mkdir()
    sim_dir.mkdir()
    want = real_lines(path, real_dir)
    monkeypatch.chdir(sim_dir)
    # a fresh interpreter's root logger, not pytest's (logging.basicConfig then acts)
    monkeypatch.setattr(logging.root, "handlers", [])
    assert simulated_lines(path, capsys) == want
