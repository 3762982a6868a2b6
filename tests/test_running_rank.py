"""Which rank an MPI call belongs to.

Compiled, the engine notes the rank whose greenlet it switches into (``rank.enter_rank``)
and an MPI call of that rank finds it there (``rank.running_rank``) without asking
greenlet at every call; as Python, a call whose greenlet is not a rank's looks for the
rank its greenlet descends from.  Either way a greenlet of the program's own, made and
switched to in a rank, makes its calls as that rank; but it cannot wait in one: the engine
resumes the rank's own greenlet, not it, so a blocking call from it raises before the rank
would wait (``rank.refuse_other_greenlet``).  Outside a run, and from another host thread,
there is no running rank.
"""

from __future__ import annotations

import _thread
import threading
from typing import Any

import greenlet
import pytest

import bsim
from bsim import MPI
from bsim.engine.rank import current

NET = "hockney:latency=1e-6,bandwidth=1e9"


def test_a_programs_own_greenlet_sends_and_computes_as_its_rank() -> None:
    def main() -> list[Any]:
        comm = MPI.COMM_WORLD
        rank = comm.Get_rank()
        box: list[Any] = []

        def inner() -> None:   # nonblocking calls only: its rank waits for them
            bsim.add_time(1e-3)
            box.append(comm.Isend(bsim.Buffer(1000), dest=1 - rank, tag=7))
            box.append(comm.Irecv(bsim.Buffer(1000), source=1 - rank, tag=7))
            box.append(current().rank)

        greenlet.greenlet(inner).switch()
        MPI.Request.Waitall(box[:2])
        return [box[2], MPI.Wtime()]

    res = bsim.simulate(main, 2, network=NET)
    # each rank: 1 ms of calculation, then a 1,000-byte message each way, received
    # after t_s + latency + n / bandwidth (the bsim protocol's receive rule)
    end = 1e-3 + 1e-6 + 1000 / 1e9
    assert [r[0] for r in res.returns] == [0, 1]
    assert [r[1] for r in res.returns] == pytest.approx([end, end], rel=1e-12)
    assert res.messages.tolist() == [1, 1]
    assert res.calc.tolist() == pytest.approx([1e-3, 1e-3], rel=1e-12)


@pytest.mark.parametrize("call", ["Recv", "Barrier", "Waitall", "Wait"])
def test_a_programs_own_greenlet_cannot_wait_in_an_mpi_call(call: str) -> None:
    def main() -> None:
        comm = MPI.COMM_WORLD
        rank = comm.Get_rank()

        def inner() -> None:
            if call == "Recv":
                comm.Recv(bsim.Buffer(8), source=1 - rank)
            elif call == "Barrier":
                comm.Barrier()
            elif call == "Waitall":
                MPI.Request.Waitall([comm.Irecv(bsim.Buffer(8), source=1 - rank)])
            else:
                comm.Irecv(bsim.Buffer(8), source=1 - rank).Wait()

        if rank == 0:
            greenlet.greenlet(inner).switch()
        comm.Send(bsim.Buffer(8), dest=1 - rank)

    # one line naming the rank, the call that would wait and the program's line
    with pytest.raises(bsim.MPIUsageError,
                       match=r"^rank 0: \S+: waits in a greenlet that is not the rank's own "
                             r"\(.*\) \(at .*test_running_rank\.py:\d+"):
        bsim.simulate(main, 2, network=NET)


def test_no_running_rank_outside_a_run_or_in_another_host_thread() -> None:
    with pytest.raises(bsim.NotInSimulationError, match="outside a simulated rank"):
        current()
    # a host thread (started before the run: a thread a rank starts is a thread context
    # of that rank, bsim/engine/rank_threads.py) asks while rank 0 runs, rank 0 waiting
    # for it on a lock made before the run (the host's own: a lock made during the run,
    # as threading.Event.wait makes one, is cooperative and would suspend the rank)
    asked, answered = _thread.allocate_lock(), _thread.allocate_lock()
    asked.acquire()
    answered.acquire()
    seen: list[str] = []

    def host() -> None:
        asked.acquire(timeout=30)
        try:
            seen.append(f"rank {current().rank}")
        except bsim.NotInSimulationError:
            seen.append("refused")
        answered.release()

    t = threading.Thread(target=host)
    t.start()

    def main() -> None:
        asked.release()
        answered.acquire(timeout=30)

    bsim.simulate(main, 1)
    t.join()
    assert seen == ["refused"]
    with pytest.raises(bsim.NotInSimulationError, match="outside a simulated rank"):
        current()   # the run is over: its last rank is not running any more
