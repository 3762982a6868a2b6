"""Nothing hangs: polling forever is a livelock report; runs can be bounded in time and events."""

from __future__ import annotations

import time

import pytest

import bsim
from bsim import MPI

NET = "hockney:latency=1e-6,bandwidth=1e9"


def test_iprobe_forever_for_a_message_nobody_sends_is_a_livelock():
    """Rank 0 polls Iprobe for rank 1, which finished: LivelockError, fast, naming the call."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            while not comm.Iprobe(source=1, tag=7):   # the line the report points at
                pass
    t0 = time.perf_counter()
    with pytest.raises(bsim.LivelockError, match=r"1 of 2 ranks polling") as info:
        bsim.simulate(main, ranks=2, network=NET)
    assert time.perf_counter() - t0 < 10
    (rank, call, where), = info.value.blocked
    assert rank == 0 and call == "polling Iprobe" and where.endswith("test_livelock.py:20")


def test_a_poller_does_not_hide_a_deadlock_of_the_others():
    """Rank 0 tests a request forever while ranks 1 and 2 wait on each other: all are listed."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            req = comm.Irecv(bsim.Buffer(8), source=1)
            while not req.Test():
                pass
        else:
            comm.Recv(bsim.Buffer(8), source=3 - comm.rank)   # 1 <- 2 and 2 <- 1
    with pytest.raises(bsim.LivelockError, match="1 of 3 ranks polling and 2 blocked") as info:
        bsim.simulate(main, ranks=3, network=NET)
    calls = {r: call for r, call, _ in info.value.blocked}
    assert calls[0].startswith("polling Irecv") and calls[1].startswith("Recv")
    assert isinstance(info.value, bsim.DeadlockError)   # a kind of deadlock


def test_a_poller_waiting_for_a_slow_sender_is_not_a_livelock():
    """Polling while the sender computes for 1 s (10^6 polls) ends normally when it sends."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 1:
            bsim.add_time(1.0)
            comm.Send(bsim.Buffer(8), dest=0)
        else:
            req = comm.Irecv(bsim.Buffer(8), source=1)
            polls = 0
            while not req.Test():
                polls += 1
            return polls
    r = bsim.simulate(main, ranks=2, network=NET)
    assert r.returns[0] > 100_000 and r.finish[0] >= 1.0


@pytest.mark.parametrize("poll", ["Iprobe", "Test"])
def test_polls_with_compute_between_them_and_nothing_to_find_are_a_livelock(poll):
    """``while not comm.Iprobe(...): add_time(dt)`` (or a Test loop) for a message nobody
    sends: each poll first brings the engine up to the rank's clock, and that wake-up
    counted as the rank acting, so the loop ran forever; it is a livelock as the loop
    without add_time is."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            req = comm.Irecv(bsim.Buffer(8), source=1, tag=7)
            while not (comm.Iprobe(source=1, tag=7) if poll == "Iprobe" else req.Test()):
                bsim.add_time(1e-7)
    t0 = time.perf_counter()
    with pytest.raises(bsim.LivelockError, match=r"1 of 2 ranks polling"):
        bsim.simulate(main, ranks=2, network=NET)
    assert time.perf_counter() - t0 < 30


def test_polls_with_compute_between_them_for_a_slow_sender_are_not_a_livelock():
    """The same loop while the sender computes for 0.1 s (about 10^5 iterations of 1 us
    polls and 0.1 us computes, more than the livelock check's 100,000 polls) ends
    normally when the message comes."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 1:
            bsim.add_time(0.1)
            comm.Send(bsim.Buffer(8), dest=0, tag=7)
        else:
            polls = 0
            while not comm.Iprobe(source=1, tag=7):
                bsim.add_time(1e-7)
                polls += 1
            comm.Recv(bsim.Buffer(8), source=1, tag=7)
            return polls
    r = bsim.simulate(main, ranks=2, network=NET)
    assert r.returns[0] > 50_000 and r.finish[0] >= 0.1


def test_max_sim_time_stops_a_long_run_with_a_clear_error():
    """A run past max_sim_time raises SimulationLimitError naming the limit and a rank."""
    def main():
        for _ in range(1000):
            bsim.add_time(1.0)
            MPI.COMM_WORLD.Barrier()
    with pytest.raises(bsim.SimulationLimitError,
                       match=r"max_sim_time=10\.0 s at t=.* with 2 of 2 ranks unfinished"):
        bsim.simulate(main, ranks=2, network=NET, max_sim_time=10.0)


def test_max_events_stops_a_run():
    """max_events bounds the events processed."""
    def main():
        for _ in range(100_000):
            MPI.COMM_WORLD.Barrier()
    with pytest.raises(bsim.SimulationLimitError, match=r"max_events=20,000"):
        bsim.simulate(main, ranks=2, network=NET, max_events=20_000)


@pytest.mark.parametrize("kw", [{"max_sim_time": 0}, {"max_sim_time": True},
                                {"max_events": 0}, {"max_events": 1.5}])
def test_limits_are_checked(kw):
    """Limits must be positive numbers (a bool is not one)."""
    with pytest.raises(ValueError, match="max_"):
        bsim.simulate(lambda: None, ranks=1, **kw)


def test_cli_limits(tmp_path, capsys):
    """bsim run --max-sim-time: one line, exit 2."""
    from bsim.cli.main import main
    prog = tmp_path / "long.py"
    prog.write_text("import bsim\nfrom mpi4py import MPI\nfor _ in range(100):\n"
                    "    bsim.add_time(1.0)\n    MPI.COMM_WORLD.Barrier()\n")
    assert main(["run", str(prog), "-n", "2", "--max-sim-time", "5"]) == 2
    assert "max_sim_time=5.0 s" in capsys.readouterr().err


def _exchanges() -> None:
    comm = MPI.COMM_WORLD
    for _ in range(20):
        comm.Sendrecv(bsim.Buffer(8), dest=1 - comm.rank, recvbuf=bsim.Buffer(8),
                      source=1 - comm.rank)


def test_max_events_is_exact():
    """A run of N events passes with max_events=N and fails with N - 1, wherever N falls
    (it was checked only at every 16,384th event: a 656-event halo passed with a limit
    of 400 in one process and failed under mpiexec, which checks at each exchange)."""
    n = bsim.simulate(_exchanges, ranks=2, network=NET).events
    assert n < 1 << 14
    assert bsim.simulate(_exchanges, ranks=2, network=NET, max_events=n).events == n
    with pytest.raises(bsim.SimulationLimitError, match=f"max_events={n - 1:,}"):
        bsim.simulate(_exchanges, ranks=2, network=NET, max_events=n - 1)


def test_max_sim_time_stops_a_rank_that_passes_it_in_add_time():
    """A rank whose last add_time crosses the limit has no event after it: the run
    finished at t = 10 s under a 1 s limit without a word."""
    def main():
        MPI.COMM_WORLD.Barrier()
        if MPI.COMM_WORLD.rank == 1:
            bsim.add_time(10.0)
    with pytest.raises(bsim.SimulationLimitError,
                       match=r"max_sim_time=1\.0 s: rank 1 finished at t=10\.0"):
        bsim.simulate(main, ranks=2, network="zero", max_sim_time=1.0)
    assert bsim.simulate(main, ranks=2, network="zero", max_sim_time=10.0).elapsed == 10.0
