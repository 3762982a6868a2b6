"""A file program's own ``__main__`` (bsim/cli/targets.py, bsim/engine/private_modules.py).

Under ``mpiexec`` each process runs the file as its ``__main__`` module: a class
or function the file defines pickles by reference (``__main__.Particle``) and
unpickles as the receiving process's own.  Under ``bsim run`` each rank runs the
file in its own module that is ``sys.modules["__main__"]`` while the rank runs,
with private and with shared modules; bsim's own ``__main__`` is back afterwards.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from conftest import MPIEXEC, ROOT, needs_mpiexec

from bsim.cli.main import main

PICKLES = textwrap.dedent("""
    import sys
    from dataclasses import dataclass
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    r = comm.rank

    @dataclass
    class Particle:
        x: float
        v: float

    def kernel(a):
        return a + 1

    got = comm.sendrecv(Particle(r, -r), dest=(r + 1) % comm.size,
                        source=(r - 1) % comm.size)
    mine = type(got) is Particle and sys.modules["__main__"].Particle is Particle
    fn = comm.bcast(kernel if r == 0 else None)
    parts = comm.gather(Particle(r, 2), root=0)
    line = f"{r} particle {got} {mine} fn {fn(r)} {fn is kernel} gather {parts}"
    lines = comm.gather(line, root=0)   # one writer: mpiexec interleaves processes' output
    if r == 0:
        print("\\n".join(lines), flush=True)
""")

POOL = textwrap.dedent("""
    from mpi4py import MPI
    from mpi4py.futures import MPICommExecutor, MPIPoolExecutor

    def square(x):
        return x * x + 1

    if __name__ == "__main__":
        with MPICommExecutor(MPI.COMM_WORLD, root=0) as ex:
            if ex is not None:
                print("comm", sum(ex.map(square, range(20))), flush=True)
        with MPIPoolExecutor(max_workers=2) as ex:
            print("pool", MPI.COMM_WORLD.rank, list(ex.map(square, range(6), chunksize=2)),
                  flush=True)
""")


def _expected_pickles(n: int) -> list[str]:
    """Each rank's line: its left neighbour's Particle, of its own class; its own kernel."""
    parts = [f"Particle(x={r}, v=2)" for r in range(n)]
    return sorted(f"{r} particle Particle(x={(r - 1) % n}, v={-((r - 1) % n)}) True fn "
                  f"{r + 1} True gather {'[' + ', '.join(parts) + ']' if r == 0 else None}"
                  for r in range(n))


def _lines(out: str) -> list[str]:
    return sorted(line for line in out.splitlines() if line.strip())


@pytest.mark.parametrize("shared", [False, True])
@pytest.mark.parametrize("n", [1, 3])
def test_what_the_main_file_defines_pickles(tmp_path, capsys, n, shared):
    """A dataclass and a function of the file cross ranks; each rank gets its own class."""
    prog = tmp_path / "pickles.py"
    prog.write_text(PICKLES)
    before = sys.modules["__main__"]
    args = ["run", str(prog), "-n", str(n), "--quiet"] + (["--shared-modules"] if shared else [])
    assert main(args) == 0
    assert _lines(capsys.readouterr().out) == _expected_pickles(n)
    assert sys.modules["__main__"] is before


@pytest.mark.parametrize("shared", [False, True])
def test_mpi4py_futures_map_a_function_of_the_main_file(tmp_path, capsys, shared):
    """MPICommExecutor and MPIPoolExecutor map a function the file defines."""
    prog = tmp_path / "pool.py"
    prog.write_text(POOL)
    args = ["run", str(prog), "-n", "2", "--quiet"] + (["--shared-modules"] if shared else [])
    assert main(args) == 0
    squares = [x * x + 1 for x in range(6)]
    assert _lines(capsys.readouterr().out) == [f"comm {sum(x * x + 1 for x in range(20))}",
                                               f"pool 0 {squares}", f"pool 1 {squares}"]


@needs_mpiexec
def test_the_same_as_under_mpiexec(tmp_path):
    """The pickling program prints the same lines under real mpiexec."""
    prog = tmp_path / "pickles.py"
    prog.write_text(PICKLES)
    assert MPIEXEC is not None
    real = subprocess.run([MPIEXEC, "-n", "3", sys.executable, str(prog)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert real.returncode == 0, real.stderr
    assert _lines(real.stdout) == _expected_pickles(3)


def test_bsims_main_is_back_after_a_failing_run(tmp_path, capsys):
    """A rank that raises ends the run with bsim's own ``__main__`` in place."""
    prog = tmp_path / "fails.py"
    prog.write_text("import sys\nfrom mpi4py import MPI\nMPI.COMM_WORLD.Barrier()\n"
                    "raise RuntimeError(sys.modules['__main__'].__file__)\n")
    before = sys.modules["__main__"]
    assert main(["run", str(prog), "-n", "2", "--quiet"]) == 2
    assert "fails.py" in capsys.readouterr().err
    assert sys.modules["__main__"] is before


def test_simulate_from_a_script_keeps_the_scripts_main(tmp_path):
    """bsim.simulate() from a user's script: its ``__main__`` is the script's, and a class it
    defines crosses ranks; ``python -m bsim run`` runs a file as ``bsim run`` does."""
    script = tmp_path / "user.py"
    script.write_text(textwrap.dedent("""
        import sys
        import bsim
        from mpi4py import MPI

        class Token:
            def __init__(self, rank):
                self.rank = rank

        def main():
            comm = MPI.COMM_WORLD
            got = comm.sendrecv(Token(comm.rank), dest=(comm.rank + 1) % comm.size,
                                source=(comm.rank - 1) % comm.size)
            return got.rank, type(got) is Token, sys.modules["__main__"].__file__ == __file__

        if __name__ == "__main__":
            me = sys.modules["__main__"]
            print(bsim.simulate(main, 3, network="zero").returns, sys.modules["__main__"] is me)
    """))
    out = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[0] == "[(2, True, True), (0, True, True), (1, True, True)] True"
    prog = tmp_path / "pickles.py"
    prog.write_text(PICKLES)
    run = subprocess.run([sys.executable, "-m", "bsim", "run", str(prog), "-n", "3", "--quiet"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert _lines(run.stdout) == _expected_pickles(3)
