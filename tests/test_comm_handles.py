"""Communicator and group handles as mpi4py has them, under real mpiexec and under bsim.

Null and freed handles, pickling of predefined and user handles, the MPI-4 calls
(``Create_from_group``, ``Idup``) and the Python properties: the same program gives the
same values under both.
"""

from __future__ import annotations

import json

from conftest import needs_mpiexec, real_mpi_returns

import bsim

PROGRAM = '''
import pickle
from mpi4py import MPI


def pickles(obj):
    try:
        return pickle.loads(pickle.dumps(obj)) is obj
    except ValueError:
        return "ValueError"


def main():
    world = MPI.COMM_WORLD
    out = {}
    group = world.Get_group()
    out["range_excl"] = [world.Get_group().Range_excl([(0, group.Get_size() - 1, 2)]).size,
                         group.Range_excl([]).Compare(group) == MPI.IDENT]
    out["translate"] = (group.Translate_ranks([MPI.PROC_NULL, 0], MPI.GROUP_EMPTY)
                        == [MPI.PROC_NULL, MPI.UNDEFINED])
    out["group_pickle"] = [pickles(MPI.GROUP_NULL), pickles(MPI.GROUP_EMPTY), pickles(group),
                           pickle.loads(pickle.dumps(MPI.Group(MPI.GROUP_EMPTY)))
                           == MPI.GROUP_EMPTY]
    group.Free()
    out["group_freed"] = [group == MPI.GROUP_NULL, bool(group), bool(MPI.GROUP_EMPTY),
                          MPI.Group() == MPI.GROUP_NULL, MPI.GROUP_EMPTY == MPI.GROUP_NULL]
    dup = world.Dup()
    out["comm_pickle"] = [pickles(MPI.COMM_WORLD), pickles(MPI.COMM_NULL), pickles(dup),
                          pickle.loads(pickle.dumps(MPI.Comm(MPI.COMM_WORLD))) == world]
    out["names"] = [MPI.COMM_NULL.Get_name()]
    dup.name = "mine"
    out["names"].append(dup.Get_name())
    out["props"] = [dup.is_intra, dup.is_inter, dup.is_topo, dup.topology == MPI.UNDEFINED,
                    type(dup.group).__name__, dup.size == dup.Get_size()]
    new, req = world.Idup()
    req.Wait()
    out["idup"] = MPI.Comm.Compare(world, new) == MPI.CONGRUENT
    new.Free()
    evens = world.Get_group().Incl(list(range(0, world.Get_size(), 2)))
    if world.Get_rank() % 2 == 0:
        made = MPI.Intracomm.Create_from_group(evens, "bsim.test")
        out["from_group"] = [made.Get_size(), made.Get_rank(),
                             made.allreduce(world.Get_rank())]
        made.Free()
    else:
        out["from_group"] = None
    try:
        MPI.Comm((1, 2, 3))
        out["ctor"] = "no error"
    except TypeError:
        out["ctor"] = "TypeError"
    dup.Free()
    out["freed"] = dup == MPI.COMM_NULL
    return out
'''


def _simulate(ranks: int) -> bsim.Result:
    namespace: dict = {}
    exec(compile(PROGRAM, "<program>", "exec"), namespace)
    return bsim.simulate(namespace["main"], ranks)


def test_handles_by_hand():
    out = _simulate(3).returns
    assert [o["from_group"] for o in out] == [[2, 0, 2], None, [2, 1, 2]]
    first = out[0]
    assert first["range_excl"] == [1, True]        # ranks 0 and 2 of 3 excluded
    assert first["translate"] is True
    assert first["group_pickle"] == [True, True, "ValueError", True]
    assert first["group_freed"] == [True, False, True, True, False]
    assert first["comm_pickle"] == [True, True, "ValueError", True]
    assert first["names"] == ["MPI_COMM_NULL", "mine"]
    assert first["props"] == [True, False, False, True, "Group", True]
    assert first["idup"] and first["ctor"] == "TypeError" and first["freed"]


@needs_mpiexec
def test_handles_equal_real_mpi():
    real = real_mpi_returns(3, PROGRAM)
    assert real == json.loads(json.dumps(_simulate(3).returns))


SPLIT_PROGRAM = '''
from mpi4py import MPI


def main():
    world = MPI.COMM_WORLD
    out = {}
    for name in ("COMM_TYPE_HW_GUIDED", "COMM_TYPE_RESOURCE_GUIDED"):
        kind = getattr(MPI, name)
        info = MPI.Info.Create()
        nulls = [world.Split_type(kind) == MPI.COMM_NULL,
                 world.Split_type(kind, info=info) == MPI.COMM_NULL]
        info.Set("mpi_hw_resource_type", "@no-such-resource@")
        nulls.append(world.Split_type(kind, info=info) == MPI.COMM_NULL)
        info.Set("mpi_hw_resource_type", "mpi_shared_memory")
        comm = world.Split_type(kind, info=info)
        out[name] = nulls + [comm != MPI.COMM_NULL, info.Get("mpi_hw_resource_type")]
        comm.Free()
        info.Free()
    sizes, comm = [world.Get_size()], world
    while True:
        info = MPI.Info.Create()
        sub = comm.Split_type(MPI.COMM_TYPE_HW_UNGUIDED, key=comm.Get_rank(), info=info)
        named = bool(info.Get("mpi_hw_resource_type"))
        info.Free()
        if sub == MPI.COMM_NULL:
            break
        assert named and sub.Get_size() < comm.Get_size()
        sizes.append(sub.Get_size())
        comm = sub
    out["unguided_sizes"] = sizes
    return out
'''


def _simulate_split(ranks: int) -> list:
    namespace: dict = {}
    exec(compile(SPLIT_PROGRAM, "<program>", "exec"), namespace)
    return bsim.simulate(namespace["main"], ranks,
                         network="torus:dims=2,cores=4").returns


def test_split_type_guided_and_unguided_by_hand():
    for out in _simulate_split(8):      # two nodes of four cores
        for name in ("COMM_TYPE_HW_GUIDED", "COMM_TYPE_RESOURCE_GUIDED"):
            assert out[name] == [True, True, True, True, "mpi_shared_memory"]
        assert out["unguided_sizes"] == [8, 4, 1]   # the nodes, then single cores


@needs_mpiexec
def test_split_type_equals_real_mpi():
    """Which hardware levels an unguided split finds is the machine's (MPICH reads hwloc):
    compared is that the sizes fall strictly, as MPI requires (checked in the program)."""
    real = real_mpi_returns(2, SPLIT_PROGRAM)
    sim = json.loads(json.dumps(_simulate_split(2)))
    for out in real + sim:
        sizes = out.pop("unguided_sizes")
        assert sizes[0] == 2 and sizes == sorted(set(sizes), reverse=True)
    assert real == sim


def test_the_null_intercommunicator_is_get_parents_answer():
    """No run is spawned by another: Get_parent() is the null intercommunicator, equal to
    COMM_NULL, and its accessors are ERR_COMM errors (as mpi4py's suite expects)."""
    from bsim import MPI

    def main():
        parent = MPI.Comm.Get_parent()
        out = [isinstance(parent, MPI.Intercomm), parent == MPI.COMM_NULL, bool(parent)]
        for call in (parent.Get_remote_size, parent.Get_remote_group):
            try:
                call()
            except MPI.Exception as exc:
                out.append(exc.Get_error_class() == MPI.ERR_COMM)
        return out

    assert bsim.simulate(main, 2).returns == [[True, True, False, True, True]] * 2
