"""Process state a rank can observe is its own, as under ``mpiexec``: the global random
generators of ``random`` and ``numpy.random``, and an import that runs while other ranks
wait (no other rank runs while a module is half imported)."""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap

import numpy as np

import bsim
from bsim import MPI

NET = "hockney:latency=1e-06,bandwidth=1e9"


def _seeded_draws() -> tuple[float, float, int]:
    comm = MPI.COMM_WORLD
    random.seed(comm.rank)
    np.random.seed(comm.rank)
    comm.Barrier()   # every rank has seeded before any draws
    return random.random(), float(np.random.rand()), int(np.random.randint(0, 1000))


def test_seeded_global_generators_are_per_rank() -> None:
    """random.seed(rank) / numpy.random.seed(rank), Barrier, draw: each rank its own
    stream (expected: fresh generators seeded the same way, outside any run)."""
    res = bsim.simulate(_seeded_draws, 3, network=NET, protocol="bsim")
    for r, got in enumerate(res.returns):
        rs = np.random.RandomState(r)
        want = (random.Random(r).random(), float(rs.rand()), int(rs.randint(0, 1000)))
        assert got == want


def _unseeded() -> tuple[float, float]:
    MPI.COMM_WORLD.Barrier()
    return random.random(), float(np.random.rand())


def test_unseeded_ranks_draw_differently_and_host_state_is_kept() -> None:
    """Unseeded ranks draw different values (each a fresh process's generator); the
    host's own generators are neither drawn from nor reseeded by the run."""
    random.seed(12345)
    np.random.seed(12345)
    res = bsim.simulate(_unseeded, 4, network=NET, protocol="bsim")
    assert len({v[0] for v in res.returns}) == 4
    assert len({v[1] for v in res.returns}) == 4
    assert random.random() == random.Random(12345).random()
    assert float(np.random.rand()) == float(np.random.RandomState(12345).rand())


IMPORT_AFTER_BARRIER = """
from mpi4py import MPI
comm = MPI.COMM_WORLD
comm.Barrier()


def draw():
    import numpy.random
    import logging.handlers
    import decimal
    numpy.random.seed(comm.rank)
    return int(numpy.random.randint(0, 1000))


print(comm.rank, draw(), flush=True)
"""


def test_import_after_first_call_with_three_ranks(tmp_path) -> None:
    """A module imported inside a function after comm.Barrier() with 3 ranks imports once,
    whole (RecursionError in importlib before: another rank ran while numpy.random was
    half imported, because a free lock handed the turn over)."""
    prog = tmp_path / "late_import.py"
    prog.write_text(textwrap.dedent(IMPORT_AFTER_BARRIER))
    done = subprocess.run([sys.executable, "-m", "bsim", "run", str(prog), "-n", "3",
                           "--quiet", "--network", NET, "--protocol", "bsim"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = sorted(done.stdout.split("\n"))[1:]
    want = [f"{r} {np.random.RandomState(r).randint(0, 1000)}" for r in range(3)]
    assert lines == want
