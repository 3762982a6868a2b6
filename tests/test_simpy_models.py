"""SimPy models inside a bsim run: the docs' I/O-server example, accounting, determinism."""

from __future__ import annotations

import re

import numpy as np
import pytest
import simpy
from conftest import ROOT

import bsim
from bsim.engine.simpy_bridge import shared, simpy_env, wait_for
from bsim.errors import MPIUsageError, RankError


def _docs_example() -> str:
    text = (ROOT / "docs" / "simpy.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 1
    return blocks[0]


def test_docs_example_runs_and_prints_the_documented_times(capsys):
    """docs/simpy.md's code runs as written and prints 1, 1, 2, 2 ms."""
    exec(compile(_docs_example(), "docs/simpy.md", "exec"), {"__name__": "__main__"})
    assert capsys.readouterr().out.split() == ["[1.", "1.", "2.", "2.]"]


def io_program(nbytes=1_000_000, bandwidth=1e9, capacity=2, t_compute=0.0):
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    bsim.add_time(t_compute * comm.rank)
    env = simpy_env()
    server = shared("io", lambda env: simpy.Resource(env, capacity=capacity))
    with server.request() as slot:
        wait_for(slot, account="wait")
        wait_for(env.timeout(nbytes / bandwidth), account="comm")


def test_queueing_is_wait_and_service_is_comm():
    """4 ranks, 2 slots, 1 ms per write: finish 1, 1, 2, 2 ms; wait 0, 0, 1, 1; comm 1 each."""
    r = bsim.simulate(io_program, ranks=4, network="zero")
    assert np.allclose(r.finish, [1e-3, 1e-3, 2e-3, 2e-3], rtol=0, atol=1e-15)
    assert np.allclose(r.wait, [0, 0, 1e-3, 1e-3], rtol=0, atol=1e-15)
    assert np.allclose(r.comm, [1e-3] * 4, rtol=0, atol=1e-15)
    assert np.allclose(r.finish, r.calc + r.wait + r.comm, rtol=1e-12, atol=0)


def test_staggered_arrivals_queue_only_behind_busy_slots():
    """Arrivals at 0, 0.6, 1.2, 1.8 ms (1 slot, 1 ms): each waits for the previous write.

    Rank k arrives at 0.6k ms and starts at max(arrival, end of k-1):
    starts 0, 1, 2, 3 ms; ends 1, 2, 3, 4 ms; waits 0, 0.4, 0.8, 1.2 ms.
    """
    r = bsim.simulate(io_program, ranks=4, network="zero",
                      kwargs={"capacity": 1, "t_compute": 0.6e-3})
    assert np.allclose(r.finish, [1e-3, 2e-3, 3e-3, 4e-3], rtol=0, atol=1e-15)
    assert np.allclose(r.wait, [0, 0.4e-3, 0.8e-3, 1.2e-3], rtol=0, atol=1e-15)
    assert np.allclose(r.calc, [0, 0.6e-3, 1.2e-3, 1.8e-3], rtol=0, atol=1e-15)


def test_runs_are_bit_identical():
    """Two runs of a SimPy model give the same per-rank times to the bit."""
    a = bsim.simulate(io_program, ranks=16, network="zero", kwargs={"capacity": 3})
    b = bsim.simulate(io_program, ranks=16, network="zero", kwargs={"capacity": 3})
    assert a.finish.tobytes() == b.finish.tobytes() and a.wait.tobytes() == b.wait.tobytes()


def test_a_simpy_process_serves_the_ranks():
    """A SimPy process (a generator) feeding a Store: ranks get items as it produces them."""
    def producer(env, store):
        for i in range(4):
            yield env.timeout(1e-3)
            yield store.put(i)

    def program():
        simpy_env()   # sync this rank: the store is made at its present

        def make(env):
            store = simpy.Store(env)
            env.process(producer(env, store))
            return store
        store = shared("store", make)
        return wait_for(store.get(), account="wait")

    r = bsim.simulate(program, ranks=4, network="zero")
    assert sorted(r.returns) == [0, 1, 2, 3]
    assert np.allclose(sorted(r.finish), [1e-3, 2e-3, 3e-3, 4e-3], rtol=0, atol=1e-15)


def test_a_failed_event_raises_in_the_rank():
    """An event that fails raises its exception in the waiting rank (with the rank named)."""
    def program():
        env = simpy_env()
        ev = env.event()
        ev.fail(ValueError("disk full"))
        wait_for(ev)

    with pytest.raises(RankError, match="rank 0 raised ValueError: disk full"):
        bsim.simulate(program, ranks=1, network="zero")


def test_bad_account_is_refused():
    """wait_for with an unknown account names the rank and the valid accounts."""
    def program():
        wait_for(simpy_env().timeout(1.0), account="idle")

    with pytest.raises(MPIUsageError, match=r"rank 0: wait_for\(account='idle'\)"):
        bsim.simulate(program, ranks=1, network="zero")


def test_engine_refuses_simpy_step():
    """SimPy's step() would switch rank greenlets outside bsim's loop: refused."""
    from bsim.engine.core import Engine
    with pytest.raises(RuntimeError, match="not supported"):
        Engine(1).step()


def _triggered() -> simpy.Event:
    return simpy.Environment().event().succeed(1)


@pytest.mark.parametrize("owner,name", [
    (simpy.Environment(), "_now"),
    (simpy.Environment(), "_active_proc"),
    (simpy.Environment().event(), "callbacks"),
    (_triggered(), "_ok"),
    (_triggered(), "_value"),
])
def test_simpy_internals_the_engine_relies_on_exist(owner, name):
    """The SimPy internals listed in docs/simpy.md are still there (pinned 4.1 series)."""
    assert hasattr(owner, name), f"SimPy {simpy.__version__} has no {type(owner).__name__}.{name}"


def test_simpy_internals_defused_and_empty_schedule():
    """Event._defused is how SimPy marks a handled failure; EmptySchedule still exists."""
    from simpy.core import EmptySchedule
    ev = simpy.Environment().event()
    ev.fail(ValueError("x"))
    ev.defused = True
    assert ev._defused is True and issubclass(EmptySchedule, Exception)
