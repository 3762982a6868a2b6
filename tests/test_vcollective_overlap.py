"""Receive blocks of a v or w collective that write one location twice are an error (MPI
4.1 Sec. 6.6: "Such a call is erroneous"), named with the rank, the call, the two blocks
and the user's line; blocks that interleave through a resized datatype without sharing a
byte are fine."""

from __future__ import annotations

import numpy as np
import pytest

import bsim
from bsim import MPI
from bsim.cli.main import main as bsim_main
from bsim.errors import MPIUsageError

NET = "hockney:latency=1e-06,bandwidth=1e9"


def _run(program, n: int = 3) -> bsim.Result:
    return bsim.simulate(program, n, network=NET, protocol="bsim")


def _gatherv() -> None:
    comm = MPI.COMM_WORLD
    r = np.zeros(3) if comm.rank == 0 else None
    comm.Gatherv(np.array([10.0 * (comm.rank + 1)]),
                 [r, (1, 1, 1), (0, 1, 1), MPI.DOUBLE] if comm.rank == 0 else None, root=0)


def _igatherv() -> None:
    comm = MPI.COMM_WORLD
    r = np.zeros(3) if comm.rank == 0 else None
    comm.Igatherv(np.array([1.0]), [r, (1, 1, 1), (0, 1, 1), MPI.DOUBLE]
                  if comm.rank == 0 else None, root=0).Wait()


def _allgatherv() -> None:
    comm = MPI.COMM_WORLD
    r = np.zeros(4)
    comm.Allgatherv(np.array([1.0, 2.0]), [r, (2, 2, 2), (0, 2, 1), MPI.DOUBLE])


def _alltoallv() -> None:
    comm = MPI.COMM_WORLD
    r = np.zeros(6, "i4")
    comm.Alltoallv([np.arange(6, dtype="i4"), (2, 2, 2), (0, 2, 4), MPI.INT],
                   [r, (2, 2, 2), (0, 2, 3), MPI.INT])


def _alltoallw() -> None:
    comm = MPI.COMM_WORLD
    r = np.zeros(3, "i4")
    t = [MPI.INT] * 3
    comm.Alltoallw([np.arange(3, dtype="i4"), (1, 1, 1), (0, 4, 8), t],
                   [r, (1, 1, 1), (0, 4, 4), t])


def _neighbor_alltoallv() -> None:
    comm = MPI.COMM_WORLD
    ring = comm.Create_cart([comm.size], periods=[True])
    r = np.zeros(2)
    ring.Neighbor_alltoallv([np.ones(2), (1, 1), (0, 1), MPI.DOUBLE],
                            [r, (1, 1), (0, 0), MPI.DOUBLE])


@pytest.mark.parametrize("program, call, blocks", [
    (_gatherv, "Gatherv", "1 and 2"), (_igatherv, "Igatherv", "1 and 2"),
    (_allgatherv, "Allgatherv", "0 and 2"), (_alltoallv, "Alltoallv", "1 and 2"),
    (_alltoallw, "Alltoallw", "1 and 2"), (_neighbor_alltoallv, "Neighbor_alltoallv",
                                           "0 and 1"),
])
def test_overlapping_receive_blocks_named(program, call: str, blocks: str) -> None:
    """Before, each ran without a word (the later block overwrote the earlier)."""
    with pytest.raises(MPIUsageError, match=f"{call}: receive blocks {blocks} overlap"):
        _run(program)


def test_overlap_error_names_the_line(tmp_path, capsys) -> None:
    """bsim run: one line with the rank, the call and the user's file:line."""
    prog = tmp_path / "gv.py"
    prog.write_text("import numpy as np\nfrom mpi4py import MPI\ncomm = MPI.COMM_WORLD\n"
                    "r = np.zeros(3)\n"
                    "comm.Gatherv(np.ones(1), [r, (1, 1, 1), (0, 1, 1), MPI.DOUBLE])\n")
    assert bsim_main(["run", str(prog), "-n", "3", "--quiet", "--network", NET,
                      "--protocol", "bsim"]) == 2
    err = capsys.readouterr().err
    assert "rank 0: Gatherv: receive blocks 1 and 2 overlap" in err
    assert f"{prog}:5" in err


def _resized_columns() -> list[list[float]]:
    comm = MPI.COMM_WORLD
    n = 4
    col = MPI.DOUBLE.Create_vector(n, 1, comm.size).Create_resized(0, 8).Commit()
    a = np.zeros((n, comm.size))
    comm.Allgatherv(np.full(n, float(comm.rank)), [a, [1] * comm.size,
                                                     list(range(comm.size)), col])
    return a.tolist()


def test_interleaved_columns_are_not_an_overlap() -> None:
    """Columns of a row-major matrix through a vector type resized to one double: the
    packed blocks overlap in extent but no byte is written twice (column j = rank j)."""
    res = _run(_resized_columns, 3)
    assert res.returns[0] == [[0.0, 1.0, 2.0]] * 4
