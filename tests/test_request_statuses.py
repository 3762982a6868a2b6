"""Status lists of the calls over request lists, as mpi4py fills them
(bsim/mpi/requests/multiple_completions.py).

mpi4py (``reqimpl.pxi``, ``_p_rs.release``) fills an array of one empty status per
request and copies it into the caller's list: the list grows to the completed
count but is never shortened, and entries past the completed ones become empty
(``[3, -2, -2]`` after a ``Waitsome`` completing one of three receives).  The
expectations are real ``mpiexec -n 2`` output (MPICH 4, mpi4py 4.1.2); they are
compared with it again when mpiexec is installed.
"""

from __future__ import annotations

from conftest import needs_mpiexec, real_mpi_returns, simulated_returns

PROGRAM = '''import numpy as np
from mpi4py import MPI


def filled(n):
    out = []
    for k in range(n):
        st = MPI.Status()
        st.source, st.tag = 7, 40 + k
        out.append(st)
    return out


def view(sts):
    return [[s.source, s.tag, s.error] for s in sts]


def main():
    comm = MPI.COMM_WORLD
    r = comm.rank
    log = []
    if r == 0:
        rs = [comm.Irecv(np.zeros(1), source=1, tag=t) for t in (1, 2, 3)]
        sts = filled(3)
        log.append(["testsome-none", MPI.Request.Testsome(rs, sts), view(sts)])
        sts = filled(3)
        log.append(["testall-false", MPI.Request.Testall(rs, sts), view(sts)])
        comm.Barrier()   # rank 1 sends tag 3
        comm.Barrier()
        sts = filled(4)
        log.append(["waitsome", MPI.Request.Waitsome(rs, sts), view(sts)])
        comm.Barrier()   # rank 1 sends tag 1
        comm.Barrier()
        idx, sts = [], []
        while not idx:   # until the message is there: Testsome with [] keeps it []
            sts = []
            idx = MPI.Request.Testsome(rs, sts)
        log.append(["testsome-empty-list", idx, view(sts)])
        comm.Barrier()   # rank 1 sends tag 2
        comm.Barrier()
        sts = filled(1)
        log.append(["waitsome-short", MPI.Request.Waitsome(rs, sts), view(sts)])
        sts = filled(2)
        log.append(["waitsome-none-active", MPI.Request.Waitsome(rs, sts), view(sts)])
        sts = filled(2)
        log.append(["testsome-none-active", MPI.Request.Testsome(rs, sts), view(sts)])
        rs = [comm.Irecv(np.zeros(1), source=1, tag=t) for t in (5, 6)]
        comm.Barrier()   # rank 1 sends 5, 6
        sts = filled(1)
        log.append(["waitall-short", MPI.Request.Waitall(rs, sts), view(sts)])
        rs = [comm.Irecv(np.zeros(1), source=1, tag=t) for t in (7, 8)] + [MPI.REQUEST_NULL]
        comm.Barrier()   # rank 1 sends 7, 8
        sts = filled(4)
        log.append(["waitall-long", MPI.Request.Waitall(rs, sts), view(sts)])
        rs = [comm.Irecv(np.zeros(1), source=1, tag=9)]
        comm.Barrier()   # rank 1 sends 9
        sts = filled(2)
        flag = False
        while not flag:
            flag = MPI.Request.Testall(rs, sts)
        log.append(["testall-true", flag, view(sts)])
        st = filled(1)[0]
        log.append(["waitany-none", MPI.Request.Waitany([MPI.REQUEST_NULL], st), view([st])])
        rs = [comm.irecv(source=1, tag=t) for t in (11, 12, 13)]
        sts = filled(3)
        log.append(["get_status_all-false", MPI.Request.Get_status_all(rs, sts), view(sts)])
        comm.Barrier()   # rank 1 sends 13
        idx = []
        while not idx:
            sts = filled(3)
            idx = MPI.Request.Get_status_some(rs, sts)
        log.append(["get_status_some", idx, view(sts)])
        sts = filled(3)
        idx, objs = MPI.Request.waitsome(rs, sts)
        log.append(["waitsome-obj", idx, objs, view(sts)])
        comm.Barrier()   # rank 1 sends 11, 12
        sts = filled(2)
        log.append(["waitall-obj", MPI.Request.waitall(rs, sts), view(sts)])
    else:
        comm.Barrier()
        comm.Send(np.zeros(1), dest=0, tag=3)
        comm.Barrier()
        comm.Barrier()
        comm.Send(np.zeros(1), dest=0, tag=1)
        comm.Barrier()
        comm.Barrier()
        comm.Send(np.zeros(1), dest=0, tag=2)
        comm.Barrier()
        comm.Send(np.zeros(1), dest=0, tag=5)
        comm.Send(np.zeros(1), dest=0, tag=6)
        comm.Barrier()
        comm.Send(np.zeros(1), dest=0, tag=7)
        comm.Send(np.zeros(1), dest=0, tag=8)
        comm.Barrier()
        comm.Send(np.zeros(1), dest=0, tag=9)
        comm.Barrier()
        comm.send("c", dest=0, tag=13)
        comm.Barrier()
        comm.Barrier()
        comm.send("a", dest=0, tag=11)
        comm.send("b", dest=0, tag=12)
    return log


'''

# [call, result, [[source, tag, error] of each status in the caller's list]]; statuses
# the call leaves alone read 7, 40 + k (filled(n)); an empty one -2, -1, 0 (ANY_SOURCE)
EXPECTED = [
    ['testsome-none', [], [[-2, -1, 0], [-2, -1, 0], [-2, -1, 0]]],
    ['testall-false', False, [[-2, -1, 0], [-2, -1, 0], [-2, -1, 0]]],
    ['waitsome', [2], [[1, 3, 0], [-2, -1, 0], [-2, -1, 0], [7, 43, 0]]],
    ['testsome-empty-list', [0], [[1, 1, 0]]],
    ['waitsome-short', [1], [[1, 2, 0]]],
    ['waitsome-none-active', None, [[7, 40, 0], [7, 41, 0]]],
    ['testsome-none-active', None, [[7, 40, 0], [7, 41, 0]]],
    ['waitall-short', True, [[1, 5, 0], [1, 6, 0]]],
    ['waitall-long', True, [[1, 7, 0], [1, 8, 0], [-2, -1, 0], [7, 43, 0]]],
    ['testall-true', True, [[1, 9, 0], [7, 41, 0]]],
    ['waitany-none', -32766, [[-2, -1, 0]]],
    ['get_status_all-false', False, [[-2, -1, 0], [-2, -1, 0], [-2, -1, 0]]],
    ['get_status_some', [2], [[1, 13, 0], [-2, -1, 0], [-2, -1, 0]]],
    ['waitsome-obj', [2], ['c'], [[1, 13, 0], [-2, -1, 0], [-2, -1, 0]]],
    ['waitall-obj', ['a', 'b', None], [[1, 11, 0], [1, 12, 0], [-2, -1, 0]]],
]


def test_status_lists_as_mpi4py_fills_them():
    """Waitsome/Testsome/Waitall/Testall/Get_status_*: growth, no shortening, emptied tails."""
    assert simulated_returns(2, PROGRAM, as_json=True) == [EXPECTED, []]


@needs_mpiexec
def test_the_same_under_mpiexec():
    """The literal expectations are real MPICH's."""
    assert real_mpi_returns(2, PROGRAM) == [EXPECTED, []]
