"""The object forms of the rooted intercommunicator collectives cost what mpi4py makes
them do (``bsim/mpi/collectives/intercomm.py``).

mpi4py runs ``Intercomm.bcast`` as two intercommunicator ``Bcast`` calls, the pickle's
length (an ``MPI_Count``, 8 bytes) and then its bytes (``PyMPI_bcast``),
``Intercomm.scatter`` as a ``Scatter`` of the lengths and a ``Scatterv`` of the pickles
(``PyMPI_scatter``), and ``Intercomm.gather`` as a ``Gather`` of the lengths (not
charged, as on an intracommunicator) and a ``Gatherv`` of the pickles.  So each object
form must take, to the last bit, the time of the buffer calls it is made of, under the
formula and the expanded schedules alike.

Before, the remote group's members other than its leader sized their part of the local
broadcast at 0 bytes: under ``--collectives algorithmic`` they forwarded nothing (a
1 MiB bcast from 8 ranks to 8 reached the others in 2.1 ms, against the buffer form's
2.9 ms), and under the formula the local algorithm was not chosen by size (4.2 ms).
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import bsim
from bsim import MPI

NET = "hockney:latency=1e-6,bandwidth=1e9"


def _intercomm():
    """Even world ranks against odd ones; the roles of a rooted call from even rank 0."""
    w = MPI.COMM_WORLD
    color = w.Get_rank() % 2
    local = w.Split(color, w.Get_rank())
    ic = local.Create_intercomm(0, w, 1 - color, tag=5)
    if color == 0:
        root = MPI.ROOT if local.Get_rank() == 0 else MPI.PROC_NULL
    else:
        root = 0
    w.Barrier()
    return ic, root


def bcast_program(form: str, n: int) -> float:
    ic, root = _intercomm()
    data = np.arange(n, dtype=np.uint8)
    t0 = MPI.Wtime()
    if form == "object":
        got = ic.bcast(data if root == MPI.ROOT else None, root=root)
        if root == 0:
            assert np.array_equal(got, data)
    else:   # mpi4py's own sequence, with the buffer forms
        count = len(pickle.dumps(data, protocol=5))
        ic.Bcast(np.zeros(1, np.int64), root=root)
        ic.Bcast(np.zeros(count, np.uint8), root=root)
    return MPI.Wtime() - t0


def scatter_program(form: str, n: int) -> float:
    ic, root = _intercomm()
    remote = ic.Get_remote_size()
    items = [np.full(n, i, dtype=np.uint8) for i in range(remote)]
    t0 = MPI.Wtime()
    if form == "object":
        got = ic.scatter(items if root == MPI.ROOT else None, root=root)
        if root == 0:
            assert np.array_equal(got, items[ic.Get_rank()])
    else:
        count = len(pickle.dumps(items[0], protocol=5))
        big = root == MPI.ROOT
        ic.Scatter(np.zeros(remote, np.int64) if big else None, np.zeros(1, np.int64),
                   root=root)
        ic.Scatterv([np.zeros(remote * count, np.uint8), [count] * remote] if big else None,
                    np.zeros(count, np.uint8), root=root)
    return MPI.Wtime() - t0


def gather_program(form: str, n: int) -> float:
    ic, root = _intercomm()
    remote = ic.Get_remote_size()
    mine = np.full(n, ic.Get_rank(), dtype=np.uint8)
    t0 = MPI.Wtime()
    if form == "object":
        got = ic.gather(mine if root == 0 else None, root=root)
        if root == MPI.ROOT:
            assert [int(x[0]) for x in got] == list(range(remote))
    else:   # mpi4py's Gatherv of the pickles (its Gather of the lengths is not charged)
        count = len(pickle.dumps(mine, protocol=5))
        big = root == MPI.ROOT
        ic.Gatherv(None if big else np.zeros(count, np.uint8),
                   [np.zeros(remote * count, np.uint8), [count] * remote] if big else None,
                   root=root)
    return MPI.Wtime() - t0


def _times(program, form, n, collectives):
    return bsim.simulate(program, 16, network=NET, collectives=collectives,
                         kwargs=dict(form=form, n=n), protocol="bsim").returns


@pytest.mark.parametrize("collectives", ["analytic", "algorithmic"])
@pytest.mark.parametrize("program, n", [(bcast_program, 100), (bcast_program, 1 << 20),
                                        (scatter_program, 100),
                                        (scatter_program, 1 << 18),
                                        (gather_program, 100), (gather_program, 1 << 18)])
def test_an_object_form_costs_the_buffer_calls_mpi4py_makes(program, n, collectives):
    """8 ranks to 8: every rank's time equals that of the buffer calls, bit for bit."""
    assert _times(program, "object", n, collectives) == \
        _times(program, "buffer", n, collectives)


def test_the_remote_leader_receives_the_length_then_the_pickle():
    """Expanded, the remote leader receives two messages from the root, 8 bytes and the
    pickle of L bytes, each ``latency + size / bandwidth`` (the bsim protocol charges
    the sender nothing, and the leader's sends in the local broadcast come after):
    ``2 us + (8 + L) ns``. Before, it received the pickle alone: ``1 us + L ns``."""
    data = np.arange(100, dtype=np.uint8)
    length = len(pickle.dumps(data, protocol=5))
    times = _times(bcast_program, "object", 100, "algorithmic")
    assert times[1] == pytest.approx(2e-6 + (8 + length) * 1e-9, rel=1e-12)
    assert times[0] == 0.0   # the root's sends cost it nothing under the bsim protocol
