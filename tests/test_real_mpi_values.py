"""Realistic buffer programs give what mpi4py + MPICH give: refused operations, counts,
user operations over padded structs and datatypes with gaps in the collectives.

Each program's ``main()`` returns plain values; the literal expectations were read off
real ``mpiexec -n 2`` (MPICH 4, mpi4py 4.1.2) and are compared again with it when mpiexec
and mpi4py are installed.
"""

from __future__ import annotations

import pytest
from conftest import ERROR_CLASS_PRELUDE, needs_mpiexec, real_mpi_returns, simulated_returns

from bsim.cli.main import main as bsim_main

OPS = '''
from mpi4py import MPI
import numpy as np

NAMES = {getattr(MPI, n): n for n in dir(MPI) if n.startswith("ERR_")
         and isinstance(getattr(MPI, n), int) and n != "ERR_LASTCODE"}


def attempt(fn):
    try:
        out = fn()
    except MPI.Exception as exc:
        return NAMES.get(exc.Get_error_class(), "?")
    return out


def allreduce(dtype, op, vals):
    a = np.array(vals, dtype=dtype)
    b = np.zeros_like(a)
    MPI.COMM_WORLD.Allreduce(a, b, op=op)
    return [[v.real, v.imag] if isinstance(v, complex) else v for v in b.tolist()]


def main():
    comm = MPI.COMM_WORLD
    r = comm.rank
    pair = MPI.DOUBLE.Create_contiguous(2).Commit()
    vec = MPI.INT.Create_vector(2, 1, 2).Commit()
    dup = MPI.DOUBLE.Dup()
    a, b = np.array([r, 10.0 * r, 1, 2] * 2), np.zeros(4)
    x, y = np.array([r, 100, 2 * r, 100], "i4"), np.full(4, -1, "i4")
    di = np.array([(float(r), r)], dtype=np.dtype([("v", "f8"), ("i", "i4")], align=True))
    out = {
        "contig_allreduce": attempt(lambda: comm.Allreduce([a, 2, pair], [b, 2, pair])),
        "contig_reduce": attempt(lambda: comm.Reduce([a, 2, pair], [b, 2, pair], root=0)),
        "contig_scan": attempt(lambda: comm.Scan([a, 2, pair], [b, 2, pair])),
        "contig_rsb": attempt(lambda: comm.Reduce_scatter_block([a, 2, pair], [b, 2, pair])),
        "vector_max": attempt(lambda: comm.Reduce([x, 1, vec], [y, 1, vec], op=MPI.MAX)),
        "dup_double": attempt(lambda: comm.Allreduce([a, 4, dup], [b, 4, dup])),
        "sum_bool": attempt(lambda: allreduce("?", MPI.SUM, [True, False])),
        "lor_f8": attempt(lambda: allreduce("f8", MPI.LOR, [0.0, r])),
        "band_f8": attempt(lambda: allreduce("f8", MPI.BAND, [1.0, 2.0])),
        "max_c16": attempt(lambda: allreduce("c16", MPI.MAX, [1j, r])),
        "min_bool": attempt(lambda: allreduce("?", MPI.MIN, [True, r == 0])),
        "replace_i4": attempt(lambda: allreduce("i4", MPI.REPLACE, [1, 2])),
        "no_op_i4": attempt(lambda: allreduce("i4", MPI.NO_OP, [1, 2])),
        "maxloc_f8": attempt(lambda: allreduce("f8", MPI.MAXLOC, [1.0, 2.0])),
        "sum_c8": attempt(lambda: allreduce("c8", MPI.SUM, [1 + 2j, r * 1j])),
        "land_bool": attempt(lambda: allreduce("?", MPI.LAND, [True, r == 0])),
        "lxor_i4": attempt(lambda: allreduce("i4", MPI.LXOR, [r, 1])),
        "sum_bytearray": attempt(lambda: list(_bytes_sum(comm, r))),
        "bor_byte": attempt(lambda: _byte_bor(comm, r)),
        "maxloc_pair": attempt(lambda: _maxloc(comm, di)),
        "reduce_local_contig": attempt(lambda: MPI.SUM.Reduce_local([a, 2, pair], [b, 2, pair])),
    }
    return out


def _bytes_sum(comm, r):
    out = bytearray(2)
    comm.Allreduce(bytearray([r + 1, 2]), out, op=MPI.SUM)
    return out


def _byte_bor(comm, r):
    out = bytearray(1)
    comm.Allreduce([bytearray([1 << r]), MPI.BYTE], [out, MPI.BYTE], op=MPI.BOR)
    return out[0]


def _maxloc(comm, di):
    out = np.zeros_like(di)
    comm.Allreduce([di, MPI.DOUBLE_INT], [out, MPI.DOUBLE_INT], op=MPI.MAXLOC)
    return [float(out["v"][0]), int(out["i"][0])]
'''
OPS_EXPECTED = {
    "contig_allreduce": "ERR_OP", "contig_reduce": "ERR_OP", "contig_scan": "ERR_OP",
    "contig_rsb": "ERR_OP", "vector_max": "ERR_OP", "dup_double": "ERR_OP",
    "sum_bool": "ERR_OP", "lor_f8": "ERR_OP", "band_f8": "ERR_OP", "max_c16": "ERR_OP",
    "min_bool": "ERR_OP", "replace_i4": "ERR_OP", "no_op_i4": "ERR_OP", "maxloc_f8": "ERR_OP",
    "sum_c8": [[2.0, 4.0], [0.0, 1.0]], "land_bool": [True, False], "lxor_i4": [1, 0],
    "sum_bytearray": [3, 4], "bor_byte": 3, "maxloc_pair": [1.0, 1],
    "reduce_local_contig": "ERR_OP",
}


def test_predefined_operations_refuse_derived_and_invalid_types():
    """A predefined op on a derived datatype (contiguous, vector, even a Dup of DOUBLE) and
    the op/type pairs MPI 4.0 Sec. 6.9.2 leaves out (SUM on bool, LOR on double, MAX on
    complex, REPLACE and NO_OP outside accumulates) raise ERR_OP on every rank, in every
    reduction; the valid pairs still compute (bsim reduced garbage before)."""
    for out in simulated_returns(2, OPS):
        assert out == OPS_EXPECTED


@needs_mpiexec
def test_predefined_operations_match_real_mpi():
    real = real_mpi_returns(2, OPS)
    assert real == [OPS_EXPECTED, OPS_EXPECTED]


def test_an_invalid_operation_is_one_line(tmp_path, capsys):
    """Uncaught, the refusal is one line naming rank, call, op, type and file:line."""
    prog = tmp_path / "badop.py"
    prog.write_text("from mpi4py import MPI\nimport numpy as np\nx = np.ones(2)\n"
                    "MPI.COMM_WORLD.Allreduce(x, np.zeros(2), op=MPI.LOR)\n")
    assert bsim_main(["run", str(prog), "-n", "2", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "rank 0: Allreduce: invalid operation MPI.LOR on datatype DOUBLE" in err[0]
    assert f"{prog}:4" in err[0]


BUFFERS = '''
from mpi4py import MPI
import numpy as np


def attempt(fn):
    try:
        return fn()
    except (ValueError, KeyError, BufferError, TypeError) as exc:
        text = str(exc.args[0]) if isinstance(exc, KeyError) else str(exc)
        cls = next(c.__name__ for c in (BufferError, KeyError, ValueError, TypeError)
                   if isinstance(exc, c))
        return [cls] + [key for key in ("cannot infer count", "cannot map") if key in text]


def main():
    comm = MPI.COMM_WORLD
    r = comm.rank
    packed = np.dtype([("v", "f8"), ("i", "i4")])          # 12 bytes, no padding
    val = np.array([(float(r), r)] * 2, dtype=packed)
    rec = np.dtype([("x", "f8"), ("id", "i4")])
    ro = np.zeros(2)
    ro.setflags(write=False)
    col = MPI.DOUBLE.Create_vector(2, 1, 2).Commit()      # extent 24
    return {
        "maxloc_packed": attempt(lambda: comm.Allreduce(
            [val, MPI.DOUBLE_INT], [np.zeros_like(val), MPI.DOUBLE_INT], op=MPI.MAXLOC)),
        "vector_no_count": attempt(lambda: comm.Bcast([np.zeros(4), col], root=0)),
        "vector_count": attempt(lambda: comm.Bcast([np.zeros(4), 1, col], root=0)),
        "struct_no_datatype": attempt(lambda: comm.Allgather(
            np.zeros(2, rec), np.zeros(2 * comm.size, rec))),
        "readonly_recv": attempt(lambda: comm.Allreduce(np.ones(2), ro)),
    }
'''
BUFFERS_EXPECTED = {
    "maxloc_packed": ["ValueError", "cannot infer count"],
    "vector_no_count": ["ValueError", "cannot infer count"],
    "vector_count": None,
    "struct_no_datatype": ["KeyError", "cannot map"],
    "readonly_recv": ["BufferError"],
}


def test_buffers_are_refused_as_mpi4py_refuses_them():
    """A packed (value, int) record with DOUBLE_INT (extent 16) does not divide its buffer
    (bsim reduced garbage), a structured numpy array without a datatype has no MPI
    datatype (bsim mapped it), a read-only receive buffer is a BufferError (was TypeError)."""
    assert simulated_returns(2, BUFFERS) == [BUFFERS_EXPECTED] * 2


@needs_mpiexec
def test_buffers_match_real_mpi():
    assert real_mpi_returns(2, BUFFERS) == [BUFFERS_EXPECTED] * 2


USER_OP = '''
from mpi4py import MPI
import numpy as np

REC = np.dtype([("v", "f8"), ("i", "i4")], align=True)    # 16 bytes: 4 of padding


def absmax(inbuf, inoutbuf, datatype):
    a, b = np.frombuffer(inbuf, dtype=REC), np.frombuffer(inoutbuf, dtype=REC)
    assert len(memoryview(inbuf).cast("B")) == 16 * len(a)
    m = np.abs(a["v"]) > np.abs(b["v"])
    b[m] = a[m]


def main():
    comm = MPI.COMM_WORLD
    r = comm.rank
    st = MPI.Datatype.Create_struct([1, 1], [0, 8], [MPI.DOUBLE, MPI.INT])
    st = st.Create_resized(0, REC.itemsize).Commit()
    op = MPI.Op.Create(absmax, commute=True)
    s = np.array([((-1) ** r * (r + 1) * 1.5, r), (r, 7 - r)], dtype=REC)
    o = np.zeros_like(s)
    comm.Allreduce([s, 2, st], [o, 2, st], op=op)
    x = np.array([(-5.0, 1), (1.0, 2)], REC)
    y = np.array([(2.0, 3), (-4.0, 4)], REC)
    op.Reduce_local([x, 2, st], [y, 2, st])
    op.Free()
    return [[[float(v), int(i)] for v, i in z.tolist()] for z in (o, y)]
'''
USER_OP_EXPECTED = [[[-3.0, 1], [1.0, 6]], [[-5.0, 1], [-4.0, 4]]]


def test_a_user_operation_sees_the_datatype_s_layout():
    """MPICH hands a user op buffers laid out by the datatype (16 bytes per padded struct
    element); bsim handed the packed 12 and np.frombuffer failed.  absmax of 1.5 and -3.0
    is -3.0 from rank 1; of 0 and 1, 1 from rank 1.  Op.Reduce_local too (it refused
    the gapped buffers)."""
    assert simulated_returns(2, USER_OP) == [USER_OP_EXPECTED] * 2


@needs_mpiexec
def test_a_user_operation_matches_real_mpi():
    assert real_mpi_returns(2, USER_OP) == [USER_OP_EXPECTED] * 2


GAPS = '''
from mpi4py import MPI
import numpy as np


def main():
    comm = MPI.COMM_WORLD
    r, n = comm.rank, comm.size
    col = MPI.DOUBLE.Create_vector(n, 1, n)
    colr = col.Create_resized(0, 8).Commit()              # consecutive columns
    out = {}
    M = np.zeros((n, n))                                   # gather column r from rank r
    comm.Gather(np.arange(n, dtype="f8") + 10 * r, [M, 1, colr], root=0)
    out["gather_cols"] = M.tolist() if r == 0 else None
    A = np.arange(n * n, dtype="f8").reshape(n, n)
    c = np.zeros(n)
    comm.Scatter([A, 1, colr], c, root=0)
    out["scatter_cols"] = c.tolist()
    B = np.zeros((n, n))
    comm.Alltoall([A + 100 * r, 1, colr], [B, 1, colr])
    out["alltoall_cols"] = B.tolist()
    rec = np.dtype([("x", "f8"), ("id", "i4")], align=True)
    st = MPI.Datatype.Create_struct([1, 1], [0, 8], [MPI.DOUBLE, MPI.INT])
    st = st.Create_resized(0, rec.itemsize).Commit()
    s = np.array([(r, 10 * r)], dtype=rec)
    rs = np.zeros(n, dtype=rec)
    comm.Allgather([s, st], [rs, st])
    out["allgather_struct"] = rs["id"].tolist()
    V = np.zeros((n, n))
    comm.Allgatherv(np.full(n, float(r)), [V, [1] * n, list(range(n)), colr])
    out["allgatherv_cols"] = V.tolist()
    W = np.zeros((n, n))
    comm.Alltoallw([A + 100 * r, [1] * n, [8 * i for i in range(n)], [colr] * n],
                   [W, [1] * n, [8 * i for i in range(n)], [colr] * n])
    out["alltoallw_cols"] = W.tolist()
    return out
'''
GAPS_EXPECTED = [
    {"gather_cols": [[0.0, 10.0], [1.0, 11.0]], "scatter_cols": [0.0, 2.0],
     "alltoall_cols": [[0.0, 100.0], [2.0, 102.0]], "allgather_struct": [0, 10],
     "allgatherv_cols": [[0.0, 1.0], [0.0, 1.0]],
     "alltoallw_cols": [[0.0, 100.0], [2.0, 102.0]]},
    {"gather_cols": None, "scatter_cols": [1.0, 3.0],
     "alltoall_cols": [[1.0, 101.0], [3.0, 103.0]], "allgather_struct": [0, 10],
     "allgatherv_cols": [[0.0, 1.0], [0.0, 1.0]],
     "alltoallw_cols": [[1.0, 101.0], [3.0, 103.0]]},
]


def test_collectives_move_data_through_datatypes_with_gaps():
    """The classic idioms: Gather into matrix columns through a resized vector type,
    Scatter and Alltoall of columns, Allgather of an aligned struct, Allgatherv and
    Alltoallw into columns (bsim refused types with gaps in all of them)."""
    assert simulated_returns(2, GAPS) == GAPS_EXPECTED


@needs_mpiexec
def test_collectives_with_gaps_match_real_mpi():
    assert real_mpi_returns(2, GAPS) == GAPS_EXPECTED


@pytest.mark.parametrize("n", [3, 4])
def test_gather_into_columns_at_more_ranks(n):
    """Column r of the root's n x n matrix is rank r's vector (hand-checked)."""
    out = simulated_returns(n, GAPS)
    assert out[0]["gather_cols"] == [[i + 10.0 * r for r in range(n)] for i in range(n)]
    for r in range(n):
        assert out[r]["scatter_cols"] == [float(i * n + r) for i in range(n)]


INTER_OPS = ERROR_CLASS_PRELUDE + '''
import numpy as np


def main():
    world = MPI.COMM_WORLD
    color = world.rank % 2
    local = world.Split(color, world.rank)
    ic = local.Create_intercomm(0, world, 1 - color, 7)
    ic.Set_errhandler(MPI.ERRORS_RETURN)
    a, b = np.ones(2, dtype=bool), np.zeros(2, dtype=bool)
    f, g = np.ones(2), np.zeros(2)
    return {"sum_bool": cls(ic.Allreduce, a, b, MPI.SUM),
            "lor_f8": cls(ic.Allreduce, f, g, MPI.LOR),
            "sum_f8": cls(ic.Allreduce, f, g, MPI.SUM),
            "rsb_max_c16": cls(ic.Reduce_scatter_block, np.ones(1, complex),
                               np.zeros(1, complex), MPI.MAX)}
'''


def test_intercommunicator_reductions_refuse_invalid_operations():
    """An intercommunicator's Allreduce / Reduce_scatter_block refuse what MPICH refuses
    (they computed SUM on bool, LOR on doubles, MAX on complex without a word)."""
    expected = {"sum_bool": "ERR_OP", "lor_f8": "ERR_OP", "sum_f8": "no error",
                "rsb_max_c16": "ERR_OP"}
    assert simulated_returns(2, INTER_OPS) == [expected, expected]


INTER_RSB_COUNTS = '''
from mpi4py import MPI
import numpy as np


def main():
    world = MPI.COMM_WORLD
    color = world.rank % 3 == 0   # groups of 1 and 2 ranks (3 ranks)
    local = world.Split(int(color), world.rank)
    ic = local.Create_intercomm(0, world, 1 if color else 0, 7)
    rc = 4 if color else 2   # each group's vectors: 1 x 4 = 2 x 2 elements
    out = {}
    for name, n in (("right", ic.Get_size()), ("short", ic.Get_size() - 1),
                    ("long", ic.Get_size() + 1)):
        try:
            ic.Reduce_scatter_block(np.ones(n * rc), np.zeros(rc), MPI.SUM)
            out[name] = "no error"
        except ValueError:
            out[name] = "ValueError"
    counts = [rc] * ic.Get_size()
    for name, send, recv in (("v_right", sum(counts), rc), ("v_short", sum(counts) - 1, rc),
                             ("v_recv", sum(counts), rc + 1)):
        try:
            ic.Reduce_scatter(np.ones(send), np.zeros(recv), counts, MPI.SUM)
            out[name] = "no error"
        except ValueError:
            out[name] = "ValueError"
    return out
'''


def test_intercommunicator_reduce_scatter_refuses_count_mismatches():
    """Reduce_scatter_block's send buffer holds the local group's blocks, ``local size x
    receive count`` elements, and Reduce_scatter's ``sum(counts)``, with the receive
    buffer ``counts[rank]``, as mpi4py requires (other counts were reduced without a
    word)."""
    expected = {"right": "no error", "short": "ValueError", "long": "ValueError",
                "v_right": "no error", "v_short": "ValueError", "v_recv": "ValueError"}
    assert simulated_returns(3, INTER_RSB_COUNTS) == [expected] * 3


CONSTANTS = '''
from mpi4py import MPI


def main():
    comm = MPI.COMM_WORLD
    cart = comm.Create_cart([comm.size])
    graph = comm.Create_graph(list(range(1, comm.size + 1)), list(range(comm.size)))
    return [MPI.ERR_OTHER, MPI.ERR_INTERN, MPI.CART, MPI.GRAPH, MPI.DIST_GRAPH,
            cart.Get_topology(), graph.Get_topology(), MPI.Get_error_class(15),
            MPI.Get_error_class(16)]
'''


def test_error_class_and_topology_constants_are_mpichs():
    """MPICH numbers ERR_OTHER 15 and ERR_INTERN 16, GRAPH 1, CART 2, DIST_GRAPH 3 (an
    outside review): bsim had ERR_OTHER = 16 (so every generic usage error reported
    MPICH's internal-error class) and CART and GRAPH swapped."""
    assert simulated_returns(2, CONSTANTS) == [[15, 16, 2, 1, 3, 2, 1, 15, 16]] * 2


PREDEFINED_ATTRS = '''
from mpi4py import MPI


def main():
    world = MPI.COMM_WORLD
    comms = [world, world.Dup(), MPI.COMM_SELF, world.Split(0, world.rank)]
    return [c.Get_attr(MPI.TAG_UB) == world.Get_attr(MPI.TAG_UB) for c in comms] + \\
        [world.Dup().Get_attr(MPI.TAG_UB) is not None]
'''


def test_predefined_attributes_are_on_every_communicator():
    """TAG_UB (and the other predefined attributes) answer on every communicator, as
    MPICH's do (an outside review): on a Dup, COMM_SELF or a Split bsim returned None."""
    assert simulated_returns(2, PREDEFINED_ATTRS) == [[True] * 5] * 2


TRUNCATED = '''
from mpi4py import MPI
import numpy as np


def main():
    w = MPI.COMM_WORLD
    w.Set_errhandler(MPI.ERRORS_RETURN)
    if w.rank == 0:
        w.Send(np.arange(10, dtype="i4"), dest=1, tag=8)
        return None
    buf = np.full(4, -1, "i4")
    status = MPI.Status()
    try:
        w.Recv(buf, source=0, tag=8, status=status)
    except MPI.Exception as exc:
        return [exc.Get_error_class(), status.Get_source(), status.Get_tag(),
                status.Get_count(MPI.INT), buf.tolist()]
    return "no error"
'''


def test_a_truncated_receive_fills_its_status_and_buffer():
    """Ten ints into a buffer of four: ERR_TRUNCATE, and, as MPICH does, a status naming
    the message's source and tag with the count the buffer took, and the buffer holding
    the message's first four ints (an outside review: the status stayed empty, source
    ANY_SOURCE, and the buffer untouched)."""
    assert simulated_returns(2, TRUNCATED) == [None, [14, 0, 8, 4, [0, 1, 2, 3]]]


COMPUTE_DIMS = '''
from mpi4py import MPI


def main():
    out = []
    for args in [(4, [3, 0]), (4, [-1, 0]), (4, [5, 1]), (4, 0), (12, [0, 0]), (8, [2, 0, 0])]:
        try:
            out.append(MPI.Compute_dims(*args))
        except MPI.Exception as exc:
            out.append(exc.Get_error_class())
    return out
'''


def test_compute_dims_refuses_with_err_dims_and_takes_no_dimensions():
    """Impossible fixed dimensions are MPI.Exception ERR_DIMS (11), as MPICH raises, not a
    bare ValueError that ``except MPI.Exception`` misses; zero dimensions give [] (an
    outside review).  12 on two free dims: 4 x 3; 8 with one fixed 2: 2 x 2 x 2."""
    assert simulated_returns(1, COMPUTE_DIMS) == [[11, 11, 11, [], [4, 3], [2, 2, 2]]]


WAITANY = '''
from mpi4py import MPI
import numpy as np


def main():
    comm = MPI.COMM_WORLD
    if comm.rank == 1:
        for _ in range(2):
            comm.Send(np.array([1], "i"), 0, tag=1)   # arrives first
            comm.Send(np.array([0], "i"), 0, tag=0)
        comm.Barrier()
        return None
    comm.Barrier()
    comm.Probe(1, tag=0)   # the second message is there, so the first is too
    a, b = np.zeros(1, "i"), np.zeros(1, "i")
    reqs = [comm.Irecv(a, 1, tag=0), comm.Irecv(b, 1, tag=1)]
    first = MPI.Request.Waitany(reqs)
    MPI.Request.Waitall(reqs)
    comm.Probe(1, tag=0)
    reqs = [comm.Irecv(a, 1, tag=0), comm.Irecv(b, 1, tag=1)]
    some = MPI.Request.Waitsome(reqs)
    return [first, some, int(a[0]), int(b[0])]
'''


@pytest.mark.parametrize("protocol", ["bsim", "loggp"])
def test_waitany_takes_the_first_request_complete_at_the_call(protocol):
    """Two receives both complete when Waitany is called: MPI_Waitany scans the array and
    returns the first complete one (MPICH, Open MPI; and Testany here), index 0, though
    index 1's message arrived first: under loggp, where a receive completes when its
    data arrived, bsim returned 1, the earlier completion. Waitsome then completes
    both, in index order."""
    import bsim
    namespace: dict = {}
    exec(compile(WAITANY, "<program>", "exec"), namespace)
    returns = bsim.simulate(namespace["main"], 2, protocol=protocol).returns
    assert returns == [[0, [0, 1], 0, 1], None]


PERSISTENT_CHECKS = '''
from mpi4py import MPI
import numpy as np


def main():
    comm = MPI.COMM_WORLD
    other = 1 - comm.rank
    buf = np.zeros(1, "i")
    out = []
    for fn in (lambda: comm.Send_init(buf, other, tag=-5),
               lambda: comm.Ssend_init(buf, other, tag=2**29),
               lambda: comm.Rsend_init(buf, other, tag=2**29),
               lambda: comm.Recv_init(buf, other, tag=2**29),
               lambda: comm.Send_init(buf, 5, tag=0),
               lambda: comm.Recv_init(buf, 7, tag=0)):
        try:
            fn().Free()
            out.append("ok")
        except MPI.Exception as exc:
            out.append(exc.Get_error_class())
    return out
'''


def test_persistent_calls_check_their_peer_and_tag_at_the_call():
    """A bad tag (ERR_TAG 4: -5, or 2^29, one above MPICH's TAG_UB) or peer (ERR_RANK 6)
    is refused by Send_init, Ssend_init, Rsend_init and Recv_init themselves, as MPICH
    refuses them; bsim returned a request and refused it at Start (an outside review)."""
    assert simulated_returns(2, PERSISTENT_CHECKS) == [[4, 4, 4, 4, 6, 6]] * 2


# programs whose every rank's return must be the same under bsim and real mpiexec -n N
SAME_AS_REAL = {"intercomm-reductions": (INTER_OPS, 2),
                "intercomm-reduce-scatter-counts": (INTER_RSB_COUNTS, 3),
                "constants": (CONSTANTS, 2), "predefined-attributes": (PREDEFINED_ATTRS, 2),
                "truncated-receive": (TRUNCATED, 2), "compute-dims": (COMPUTE_DIMS, 1),
                "waitany": (WAITANY, 2), "persistent-checks": (PERSISTENT_CHECKS, 2)}


@needs_mpiexec
@pytest.mark.parametrize("case", SAME_AS_REAL)
def test_the_program_returns_what_real_mpi_returns(case):
    code, n = SAME_AS_REAL[case]
    assert real_mpi_returns(n, code) == simulated_returns(n, code)
