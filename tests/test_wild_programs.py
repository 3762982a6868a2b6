"""Ordinary mpi4py programs of ``tests/wild/own/``, run unmodified under bsim.

Each program prints values (never times); the lines, sorted (ranks interleave), are
compared with what the MPI standard and mpi4py's documentation say by hand for the
programs whose behaviour a fix changed, and, where ``mpiexec`` is installed, with the
same program under real ``mpiexec -n 3`` (MPICH, one output file per rank).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import MPIEXEC, needs_mpiexec

from bsim.cli.main import main as bsim_main

OWN = Path(__file__).resolve().parent / "wild" / "own"
NET = ["--network", "hockney:latency=1e-06,bandwidth=1e9", "--protocol", "bsim"]
# not compared with mpiexec: p12 counts simulated nodes (hockney: one rank per node;
# mpiexec here: one host), p27 spins on Wtime (bsim refuses it, test below)
DIFFERENT_BY_DESIGN = {"p12_shared_split", "p27_wtime_spin"}
PROGRAMS = sorted(p for p in OWN.glob("p*.py") if p.stem not in DIFFERENT_BY_DESIGN)


def simulated(path: Path, ranks: int, capsys: pytest.CaptureFixture[str],
              *args: str) -> tuple[int, list[str], str]:
    capsys.readouterr()
    status = bsim_main(["run", str(path), "-n", str(ranks), "--quiet", *NET, "--", *args])
    out, err = capsys.readouterr()
    return status, sorted(out.splitlines()), err


def test_init_by_the_program_with_rc_initialize_false(capsys, tmp_path, monkeypatch) -> None:
    """mpi4py.rc.initialize = False: not initialized until MPI.Init(), then initialized,
    and still initialized after Finalize (MPI 4.1 Sec. 11.2.1); a second Init is an
    error naming the rank and the call."""
    monkeypatch.chdir(tmp_path)
    status, lines, err = simulated(OWN / "p19_init_finalize.py", 2, capsys)
    assert status == 0, err
    assert lines == sorted(["before init False"] * 2
                           + [f"rank {r} after init True 2" for r in range(2)]
                           + [f"rank {r} finalized True" for r in range(2)])
    twice = tmp_path / "twice.py"
    twice.write_text("import mpi4py\nmpi4py.rc.initialize = False\nfrom mpi4py import MPI\n"
                     "MPI.Init()\nMPI.Init_thread()\n")
    status, _, err = simulated(twice, 2, capsys)
    assert status != 0
    assert "rank 0: MPI.Init_thread(3): MPI is already initialized" in err
    assert "twice.py:5" in err


def test_thread_level_is_what_the_program_asked(capsys, tmp_path, monkeypatch) -> None:
    """Query_thread reports rc.thread_level at import (funneled = 1), THREAD_SINGLE
    with rc.threads = False, Init_thread's provided level (its request), and
    THREAD_SINGLE after a plain Init (MPICH provides what is asked)."""
    monkeypatch.chdir(tmp_path)
    status, lines, err = simulated(OWN / "p20_init_thread.py", 1, capsys)
    assert status == 0, err
    assert "rank 0 level True main True" in lines
    cases = {"mpi4py.rc.threads = False": 0, "mpi4py.rc.thread_level = 'serialized'": 2,
             "mpi4py.rc.initialize = False\nfrom mpi4py import MPI\n"
             "print('provided', MPI.Init_thread(MPI.THREAD_FUNNELED))": 1,
             "mpi4py.rc.initialize = False\nfrom mpi4py import MPI\nMPI.Init()": 0,
             "pass": 3}
    for i, (head, level) in enumerate(cases.items()):
        prog = tmp_path / f"level{i}.py"
        prog.write_text(f"import mpi4py\n{head}\nfrom mpi4py import MPI\n"
                        f"print('level', MPI.Query_thread())\n")
        status, lines, err = simulated(prog, 1, capsys)
        assert status == 0, err
        assert f"level {level}" in lines, (head, lines)


def test_a_type_error_inside_a_user_op_reaches_the_program(capsys, tmp_path,
                                                         monkeypatch) -> None:
    """A three-argument user function that raises TypeError itself: the program sees
    that error ('dict' + 'dict'), not a retry's complaint about a missing argument."""
    monkeypatch.chdir(tmp_path)
    prog = tmp_path / "op.py"
    prog.write_text("from mpi4py import MPI\n"
                    "def merge(a, b, datatype):\n    return a + b\n"
                    "op = MPI.Op.Create(merge, commute=True)\n"
                    "try:\n    MPI.COMM_WORLD.allreduce({1: 1}, op=op)\n"
                    "except TypeError as e:\n    print('TypeError', e)\n"
                    "two = MPI.Op.Create(lambda a, b: a + b)\n"
                    "print('two', MPI.COMM_WORLD.allreduce([1], op=two))\n")
    status, lines, err = simulated(prog, 2, capsys)
    assert status == 0, err
    assert lines == sorted(["TypeError unsupported operand type(s) for +: 'dict' and 'dict'"]
                           * 2 + ["two [1, 1]"] * 2)


def test_a_spin_on_wtime_is_one_clear_error(capsys, tmp_path, monkeypatch) -> None:
    """while MPI.Wtime() - t0 < 0.01 never ends on a simulated clock that only MPI calls
    advance: one line naming the rank, the call and the program's line."""
    monkeypatch.chdir(tmp_path)
    status, _, err = simulated(OWN / "p27_wtime_spin.py", 2, capsys)
    assert status != 0
    line = [ln for ln in err.splitlines() if "MPI.Wtime()" in ln]
    assert len(line) == 1 and "rank 0" in line[0] and "p27_wtime_spin.py:7" in line[0]


def real_lines(path: Path, ranks: int, cwd: Path) -> list[str]:
    assert MPIEXEC is not None
    done = subprocess.run([MPIEXEC, "-outfile-pattern", "stdout.%r", "-n", str(ranks),
                           sys.executable, str(path)], cwd=cwd, capture_output=True,
                          text=True, timeout=60, env=dict(os.environ, PYTHONPATH=""))
    assert done.returncode == 0, done.stderr[-2000:]
    lines = []
    for out in sorted(cwd.glob("stdout.*")):
        lines += out.read_text().splitlines()
    return sorted(lines)


@needs_mpiexec
@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_same_lines_as_mpiexec_at_three_ranks(path: Path, tmp_path: Path, capsys,
                                              monkeypatch) -> None:
    """The program prints the same lines under bsim as under real mpiexec -n 3."""
    pytest.importorskip("mpi4py")
    real_dir, sim_dir = tmp_path / "real", tmp_path / "sim"
    real_dir.mkdir()
    sim_dir.mkdir()
    want = real_lines(path, 3, real_dir)
    monkeypatch.chdir(sim_dir)
    status, lines, err = simulated(path, 3, capsys)
    assert status == 0, err[-2000:]
    assert lines == want


def test_atexit_handlers_run_at_the_end_of_their_rank(capsys, tmp_path, monkeypatch) -> None:
    """atexit.register in a rank: the handler runs when that rank's program ends and may
    still call MPI (mpi4py finalizes after them); unregister removes one; none is left
    for the host's exit."""
    import atexit
    monkeypatch.chdir(tmp_path)
    prog = tmp_path / "bye.py"
    prog.write_text("import atexit\nfrom mpi4py import MPI\ncomm = MPI.COMM_WORLD\n"
                    "rank = comm.Get_rank()\n"
                    "def bye():\n    print('bye', rank, comm.allreduce(rank))\n"
                    "def never():\n    print('never')\n"
                    "atexit.register(bye)\natexit.register(print, 'last', rank)\n"
                    "atexit.register(never)\natexit.unregister(never)\n")
    before = atexit._ncallbacks()
    status, lines, err = simulated(prog, 3, capsys)
    assert status == 0, err
    # sum of ranks 0 + 1 + 2 = 3 on every rank
    assert lines == sorted([f"bye {r} 3" for r in range(3)] + [f"last {r}" for r in range(3)])
    assert atexit._ncallbacks() == before


def test_a_library_s_atexit_handler_registered_in_a_rank_stays_the_host_s(capsys, tmp_path,
                                                                          monkeypatch) -> None:
    """A module of the standard library or an installed package that registers an atexit
    handler when first imported inside a rank (``logging`` does) registers it for the host
    process: it is not run when that rank ends (the other ranks may still need it)."""
    import atexit
    import sysconfig
    monkeypatch.chdir(tmp_path)
    # code whose file is in the standard library, as a library module's would be
    lib = Path(sysconfig.get_paths()["stdlib"]) / "bsim_fake_library.py"
    prog = tmp_path / "libexit.py"
    prog.write_text(
        "from mpi4py import MPI\n"
        f"code = compile('import atexit\\natexit.register(print, \\'library handler\\')\\n', "
        f"{str(lib)!r}, 'exec')\n"
        "if MPI.COMM_WORLD.Get_rank() == 0:\n    exec(code, {})\n"
        "print('done', MPI.COMM_WORLD.Get_rank())\n")
    before = atexit._ncallbacks()
    try:
        status, lines, err = simulated(prog, 2, capsys)
        assert status == 0, err
        assert lines == ["done 0", "done 1"]   # not run at rank 0's end
        assert atexit._ncallbacks() == before + 1   # the host's, for its exit
    finally:
        atexit.unregister(print)
