"""More one-line errors: groups, Cartesian topologies, freed operations and packing with an
uncommitted datatype.

Each bad call ends ``bsim run`` with status 2 and one ``bsim: error:`` line naming the rank,
the call, what was wrong and the user's ``file:line``; the error classes are MPICH's
(compared with real MPI when mpiexec and mpi4py are installed).
"""

from __future__ import annotations

import pytest
from conftest import ERROR_CLASS_PRELUDE, needs_mpiexec, real_mpi_returns, simulated_returns

from bsim.cli.main import main

NET = ["--network", "hockney:latency=1e-6,bandwidth=1e9"]
FREED_OP = "op = MPI.Op.Create(lambda a, b, t: b, commute=True); op.Free(); "
VECTOR = "v = MPI.INT.Create_vector(2, 1, 2); "
# line 4 of the program: (statement, what the one line must contain after "rank R: ")
CASES = {
    "group_null_rank": ("MPI.GROUP_NULL.Get_rank()",
                        "Group.Get_rank: the group is GROUP_NULL"),
    "freed_group_rank": ("g = comm.Get_group(); g.Free(); g.Get_rank()",
                         "Group.Get_rank: the group is GROUP_NULL"),
    "group_incl": ("comm.Get_group().Incl([comm.size])",
                   "Group.Incl: ranks[0] = 2 is not a rank of the group (0..1)"),
    "group_union_null": ("MPI.Group.Union(MPI.GROUP_NULL, comm.Get_group())",
                         "Group.Union: the group is GROUP_NULL"),
    "group_range_stride": ("comm.Get_group().Range_incl([(0, 1, 0)])",
                           "Group.Range_incl: ranges[0] = (0, 1, 0)"),
    "shift_negative": ("comm.Create_cart([comm.size]).Shift(-1, 1)",
                       "Cartcomm.Shift(direction=-1, disp=1): direction -1 out of range 0..0"),
    "shift_too_large": ("comm.Create_cart([comm.size]).Shift(5, 1)",
                        "Cartcomm.Shift(direction=5, disp=1): direction 5 out of range 0..0"),
    "cart_rank_length": ("comm.Create_cart([comm.size]).Get_cart_rank([0, 0])",
                         "Cartcomm.Get_cart_rank([0, 0]): 2 coordinates"),
    "freed_op_allreduce": (FREED_OP + "comm.allreduce(1, op=op)",
                           "allreduce(op=OP_NULL): the operation is OP_NULL"),
    "freed_op_Allreduce": (FREED_OP + "comm.Allreduce(bsim.Buffer(8), bsim.Buffer(8), op=op)",
                           "Allreduce(op=OP_NULL): the operation is OP_NULL"),
    "freed_op_reduce": (FREED_OP + "comm.reduce(1, op=op, root=0)",
                        "reduce(op=OP_NULL): the operation is OP_NULL"),
    "freed_op_free": (FREED_OP + "op.Free()", "Op.Free: the operation is OP_NULL"),
    "freed_op_commutative": (FREED_OP + "op.Is_commutative()",
                             "Op.Is_commutative: the operation is OP_NULL"),
    "pack_uncommitted": (VECTOR + "v.Pack(bytearray(16), bytearray(64), 0, comm)",
                         "Datatype.Pack: datatype vector(INT) is not committed"),
    "unpack_uncommitted": (VECTOR + "v.Unpack(bytearray(64), 0, bytearray(16), comm)",
                           "Datatype.Unpack: datatype vector(INT) is not committed"),
    "pack_size_uncommitted": (VECTOR + "v.Pack_size(1, comm)",
                              "Datatype.Pack_size: datatype vector(INT) is not committed"),
    "pack_external_uncommitted": (
        VECTOR + "v.Pack_external('external32', bytearray(16), bytearray(64), 0)",
        "Datatype.Pack_external: datatype vector(INT) is not committed"),
    "unpack_external_uncommitted": (
        VECTOR + "v.Unpack_external('external32', bytearray(64), 0, bytearray(16))",
        "Datatype.Unpack_external: datatype vector(INT) is not committed"),
}


def _run(prog, statement: str, capsys) -> tuple[int, str]:
    prog.write_text("import bsim\nfrom mpi4py import MPI\ncomm = MPI.COMM_WORLD\n"
                    f"{statement}\n")
    status = main(["run", str(prog), "-n", "2", *NET])
    return status, capsys.readouterr().err


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_call_is_one_line_naming_rank_call_and_line(case, tmp_path, capsys):
    """Status 2 and one line: ``rank R: <call>: <what was wrong> (at prog.py:4)`` (these
    lacked the rank, named no call, or were accepted)."""
    statement, expected = CASES[case]
    prog = tmp_path / f"{case}.py"
    status, err = _run(prog, statement, capsys)
    lines = [ln for ln in err.splitlines() if ln.startswith("bsim: error:")]
    assert status == 2 and len(lines) == 1, err
    assert lines[0].startswith("bsim: error: rank 0: "), lines[0]
    assert expected in lines[0] and lines[0].endswith(f" (at {prog}:4)"), lines[0]


CLASSES = ERROR_CLASS_PRELUDE + '''

def main():
    comm = MPI.COMM_WORLD
    comm.Set_errhandler(MPI.ERRORS_RETURN)
    g = comm.Get_group()
    cart = comm.Create_cart([comm.size])
    cart.Set_errhandler(MPI.ERRORS_RETURN)
    op = MPI.Op.Create(lambda a, b, t: b, commute=True)
    op.Free()
    v = MPI.INT.Create_vector(2, 1, 2)
    buf, packed = bytearray(16), bytearray(64)
    out = {
        "group_null_rank": cls(MPI.GROUP_NULL.Get_rank),
        "group_incl": cls(g.Incl, [5]),
        "group_excl": cls(g.Excl, [5]),
        "group_translate": cls(MPI.Group.Translate_ranks, g, [5], g),
        "group_union_null": cls(MPI.Group.Union, MPI.GROUP_NULL, g),
        "group_incl_null": cls(MPI.GROUP_NULL.Incl, [0]),
        "group_range_incl": cls(g.Range_incl, [(0, 5, 1)]),
        "shift_negative": cls(cart.Shift, -1, 1),
        "shift_too_large": cls(cart.Shift, 5, 1),
        "coords": cls(cart.Get_coords, 5),
        "cart_rank": cls(cart.Get_cart_rank, [5]),
        "freed_op_Allreduce": cls(comm.Allreduce, MPI.IN_PLACE, [bytearray(4), MPI.INT], op),
        "freed_op_free": cls(op.Free),
        "freed_op_commutative": cls(op.Is_commutative),
        "freed_op_reduce_local": cls(op.Reduce_local, bytearray(4), bytearray(4)),
        "pack": cls(v.Pack, buf, packed, 0, comm),
        "unpack": cls(v.Unpack, packed, 0, buf, comm),
        "pack_size": cls(v.Pack_size, 1, comm),
        "pack_external": cls(v.Pack_external, "external32", buf, packed, 0),
        "unpack_external": cls(v.Unpack_external, "external32", packed, 0, buf),
        "pack_external_size": cls(v.Pack_external_size, "external32", 1),
    }
    v.Free()
    cart.Free()
    return out
'''
# MPICH 4's classes (mpi4py + MPICH, checked with mpiexec); it accepts an uncommitted
# type in Pack_external_size only
EXPECTED = {
    "group_null_rank": "ERR_GROUP", "group_incl": "ERR_RANK", "group_excl": "ERR_RANK",
    "group_translate": "ERR_RANK", "group_union_null": "ERR_GROUP",
    "group_incl_null": "ERR_GROUP", "group_range_incl": "ERR_ARG",
    "shift_negative": "ERR_ARG", "shift_too_large": "ERR_ARG", "coords": "ERR_RANK",
    "cart_rank": "ERR_ARG", "freed_op_Allreduce": "ERR_OP", "freed_op_free": "ERR_OP",
    "freed_op_commutative": "ERR_OP", "freed_op_reduce_local": "ERR_OP",
    "pack": "ERR_TYPE", "unpack": "ERR_TYPE", "pack_size": "ERR_TYPE",
    "pack_external": "ERR_TYPE", "unpack_external": "ERR_TYPE",
    "pack_external_size": "no error",
}


def test_the_error_classes_are_mpich_s():
    """Each bad call raises MPI.Exception with MPICH's class (several raised a plain
    ValueError, ERR_OTHER or nothing)."""
    assert simulated_returns(2, CLASSES) == [EXPECTED, EXPECTED]


@needs_mpiexec
def test_the_error_classes_match_real_mpi():
    """The same program under real mpiexec gives the same classes."""
    assert real_mpi_returns(2, CLASSES) == simulated_returns(2, CLASSES)
