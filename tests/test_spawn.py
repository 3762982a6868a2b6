"""``Spawn``/``Spawn_multiple``/``Get_parent``: new virtual ranks during the run
(``bsim/mpi/dynamic/spawn.py``, ``bsim/engine/spawning.py``), compared with real MPI and by
hand."""

from __future__ import annotations

import sys

import pytest
from conftest import LATENCY, needs_mpiexec, real_mpi_returns, simulated_returns

import bsim
from bsim.errors import MPIUsageError
from bsim.mpi.common.namespace import NotSimulatedError

CHILD = """
import sys
from mpi4py import MPI
parent = MPI.Comm.Get_parent()
world = MPI.COMM_WORLD
info = [world.Get_rank(), world.Get_size(), world.allreduce(world.Get_rank() + 1),
        sys.argv[1:], parent.Get_remote_size(), parent.Get_size(), parent.Get_rank(),
        world.Get_attr(MPI.APPNUM)]
parent.send(info, dest=0, tag=world.Get_rank())
parent.Barrier()
parent.Disconnect()
assert parent == MPI.COMM_NULL and MPI.Comm.Get_parent() == MPI.COMM_NULL
"""

PROGRAM = """
import sys
from mpi4py import MPI
CHILD = {child!r}

def main():
    comm = MPI.COMM_WORLD
    out = {{"parent_null": MPI.Comm.Get_parent() == MPI.COMM_NULL}}
    errcodes = []
    child = comm.Spawn(sys.executable, [CHILD, "x", str(comm.size)], maxprocs=2,
                       errcodes=errcodes)
    got = [child.recv(source=i, tag=i) for i in range(2)] if comm.rank == 0 else []
    child.Barrier()
    out["single"] = [child.Get_size(), child.Get_remote_size(), child.Get_rank(),
                     child.Is_inter(), errcodes, got]
    child.Disconnect()
    errs = []
    child = comm.Spawn_multiple([sys.executable] * 2, [[CHILD, "m0"], [CHILD]],
                                [1, 2], errcodes=errs)
    got = [child.recv(source=i, tag=i) for i in range(3)] if comm.rank == 0 else []
    child.Barrier()
    out["multiple"] = [child.Get_remote_size(), errs, got]
    child.Disconnect()
    out["world"] = comm.allreduce(comm.rank)
    return out
"""


@pytest.fixture
def program(tmp_path) -> str:
    """The parent program, its child a script file (MPICH cannot pass ``-c`` code with
    newlines through its process manager)."""
    child = tmp_path / "child.py"
    child.write_text(CHILD)
    return PROGRAM.format(child=str(child))


def _expected(n: int, rank: int) -> dict:
    """What MPI says each parent rank gets (derived from the program, not from a run)."""
    single = [[i, 2, 3, ["x", str(n)], n, 2, i, 0] for i in range(2)] if rank == 0 else []
    multiple = ([[0, 3, 6, ["m0"], n, 3, 0, 0], [1, 3, 6, [], n, 3, 1, 1],
                 [2, 3, 6, [], n, 3, 2, 1]] if rank == 0 else [])
    return {"parent_null": True,
            "single": [n, 2, rank, True, [0, 0], single],
            "multiple": [3, [[0], [0, 0]], multiple],
            "world": n * (n - 1) // 2}


@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_spawned_ranks_see_their_own_world_and_their_parents(ranks: int, program: str):
    assert simulated_returns(ranks, program, as_json=True)[:ranks] == [
        _expected(ranks, r) for r in range(ranks)]


@needs_mpiexec
@pytest.mark.parametrize("ranks", [1, 2])
def test_equal_real_mpi(ranks: int, program: str):
    assert (simulated_returns(ranks, program, as_json=True)[:ranks]
            == real_mpi_returns(ranks, program))


def test_the_result_lists_spawned_ranks_after_the_world(program: str):
    namespace: dict = {}
    exec(compile(program, "<program>", "exec"), namespace)
    res = bsim.simulate(namespace["main"], 2)
    assert res.ranks == 2 + 2 + 3 and res.spawned == 5 and res.returns[2:] == [None] * 5
    assert (res.finish > 0).all() and (res.messages[2:] > 0).all()
    assert "on 7 ranks (2 launched, 5 spawned)" in res.summary()
    again = bsim.Result.from_dict(res.to_dict())
    assert again.spawned == 5 and res.to_dict()["spawned"] == 5


def test_timing_by_hand(hockney_spec: str):
    """One rank spawns one child through ``COMM_SELF`` at t = 0: the child starts at 0,
    receives the parents' group (``8 * (1 + 4) = 40`` bytes, ``l + 40/w`` under the bsim
    protocol: sends are free) and replies with its own (40 bytes); broadcasts over one
    rank cost nothing.  So the child's program starts at ``l + 40/w`` and the root's
    ``Spawn`` returns at ``2 (l + 40/w)``."""
    from bsim import MPI
    code = "from mpi4py import MPI\nMPI.Comm.Get_parent().send(MPI.Wtime(), dest=0)\n"

    def main():
        child = MPI.COMM_SELF.Spawn(sys.executable, ["-c", code])
        t = MPI.Wtime()
        return t, child.recv(source=0)

    spawned, started = bsim.simulate(main, 1, network=hockney_spec, protocol="bsim").returns[0]
    one = LATENCY + 40 / 1e9
    assert started == pytest.approx(one) and spawned == pytest.approx(2 * one)


def test_a_script_with_a_shebang_runs_and_reads_its_arguments(tmp_path):
    from bsim import MPI
    script = tmp_path / "child"
    script.write_text(f"#!{sys.executable}\nimport sys\nfrom mpi4py import MPI\n"
                      "MPI.Comm.Get_parent().send(sys.argv[1:], dest=0)\n")

    def main():
        return MPI.COMM_SELF.Spawn(str(script), ["a", "b"]).recv(source=0)

    assert bsim.simulate(main, 2).returns[:2] == [["a", "b"], ["a", "b"]]


def test_what_is_not_python_is_not_simulated_and_bad_counts_are_refused():
    from bsim import MPI

    with pytest.raises(NotSimulatedError, match=r"rank 0: Spawn\('/bin/true'\) is not "
                                                r"simulated.*not a Python interpreter"):
        bsim.simulate(lambda: MPI.COMM_WORLD.Spawn("/bin/true"), 2)
    with pytest.raises(MPIUsageError, match=r"rank 1: Spawn: maxprocs=0"):
        bsim.simulate(lambda: MPI.COMM_SELF.Spawn(sys.executable, ["-c", ""], 0)
                      if MPI.COMM_WORLD.rank else None, 2)


def test_arguments_checked_as_mpi4py_checks_them():
    from bsim import MPI

    def main():
        cmds, args, maxp, info = [sys.executable], [["-c", ""]], [1], [MPI.INFO_NULL]
        out = []
        for bad in [(cmds[0], args, maxp, info), (cmds, args * 2, maxp, info),
                    (cmds, args, maxp, info * 2), (cmds, args, maxp * 2, info)]:
            try:
                MPI.COMM_SELF.Spawn_multiple(*bad)
            except ValueError as exc:
                out.append(str(exc))
        return out

    assert bsim.simulate(main, 1).returns[0] == [
        "expecting a sequence of path-like", "expecting 1 items, got 2",
        "expecting 1 items, got 2", "expecting 1 items, got 2"]


def test_a_network_without_room_refuses(tmp_path):
    from bsim import MPI

    def main():
        MPI.COMM_SELF.Spawn(sys.executable, ["-c", ""], 2)

    with pytest.raises(MPIUsageError, match=r"rank 0: Spawn: cannot place 2 more ranks: "
                                            r"torus.*(nodes|node)"):
        bsim.simulate(main, 8, network="torus:dims=2x2x2")
