"""Errors are exact and early, name the rank and the call, and nothing hangs."""

from __future__ import annotations

import math

import pytest

import bsim
from bsim import MPI


def only_rank(r, fn):
    def main():
        if MPI.COMM_WORLD.rank == r:
            fn(MPI.COMM_WORLD)
    return main


@pytest.mark.parametrize("bad", [-3, 4, 99])
def test_invalid_dest_names_rank_call_and_range(bad):
    """Send to a rank outside the communicator raises MPIUsageError naming both."""
    with pytest.raises(bsim.MPIUsageError, match=rf"rank 1: Send\(dest={bad}, tag=0\): "
                                                  rf"invalid dest {bad} .*0\.\.3"):
        bsim.simulate(only_rank(1, lambda c: c.Send(bsim.Buffer(1), dest=bad)), ranks=4)


def test_invalid_tag_and_source():
    """Negative send tags and out-of-range sources are rejected."""
    with pytest.raises(bsim.MPIUsageError, match="rank 0: send.*invalid tag -5"):
        bsim.simulate(only_rank(0, lambda c: c.send(1, dest=1, tag=-5)), ranks=2)
    with pytest.raises(bsim.MPIUsageError, match="rank 1: recv.*invalid source 7"):
        bsim.simulate(only_rank(1, lambda c: c.recv(source=7)), ranks=2)


def test_invalid_count():
    """A negative count in a buffer spec is an error naming the call."""
    with pytest.raises(bsim.MPIUsageError, match="rank 0: Send: bad buffer: count must be"):
        bsim.simulate(only_rank(0, lambda c: c.Send([None, -1, MPI.INT], dest=1)), ranks=2)


def test_truncation_is_reported_by_the_receiver():
    """A 80-byte message into an 8-byte receive raises TruncationError on the receiver."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            comm.Send(bsim.Buffer(80), dest=1, tag=3)
        else:
            comm.Recv(bsim.Buffer(8), source=0, tag=3)

    with pytest.raises(bsim.TruncationError, match="rank 1: Recv: message of 80 bytes from "
                                                   "rank 0 .tag 3. truncated.*8 bytes"):
        bsim.simulate(main, ranks=2)


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf, "1"])
def test_add_time_rejects_bad_durations(bad):
    """Negative, NaN, infinite or non-numeric add_time raises AddTimeError with the rank."""
    with pytest.raises(bsim.AddTimeError, match="rank 2: add_time"):
        bsim.simulate(only_rank(2, lambda c: bsim.add_time(bad)), ranks=3)


def test_exception_in_one_rank_is_reraised_with_its_number():
    """A user exception becomes RankError(rank=...) with the original as __cause__."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 2:
            raise KeyError("boom")
        comm.recv(source=MPI.ANY_SOURCE)   # the others block: they must be torn down

    with pytest.raises(bsim.RankError, match="rank 2 raised KeyError") as info:
        bsim.simulate(main, ranks=4)
    assert info.value.rank == 2
    assert isinstance(info.value.__cause__, KeyError)


def test_an_error_inside_a_library_call_is_located_at_the_users_call():
    """``json.loads("{x")`` fails in the standard library's decoder; the error names the
    program's line that called it (it named ``json/decoder.py``), and an argparse exit
    is located where ``parse_args`` was called."""
    import argparse
    import json
    import sys

    def bad_json():
        json.loads("{x")
    line = bad_json.__code__.co_firstlineno + 1
    with pytest.raises(bsim.RankError, match=rf"JSONDecodeError.*\(at {__file__}:{line}\)"):
        bsim.simulate(bad_json, ranks=1)

    def bad_args():
        argparse.ArgumentParser(prog="p").parse_args(["--bogus"])
    line = bad_args.__code__.co_firstlineno + 1
    saved = sys.stderr
    try:
        with pytest.raises(bsim.RankError, match=rf"sys.exit\(2\) \(at {__file__}:{line}\)"):
            bsim.simulate(bad_args, ranks=1)
    finally:
        sys.stderr = saved


def test_deadlock_lists_every_blocked_rank_with_call_and_line():
    """A receive cycle is a DeadlockError naming each rank, its pending call and source line."""
    def main():
        comm = MPI.COMM_WORLD
        comm.recv(source=(comm.rank + 1) % comm.size, tag=5)   # the deadlocking line

    with pytest.raises(bsim.DeadlockError) as info:
        bsim.simulate(main, ranks=3)
    blocked = info.value.blocked
    assert [b[0] for b in blocked] == [0, 1, 2]
    assert blocked[0][1] == "recv(source=world 1, tag=5)"
    assert all(b[2].endswith(f"test_errors.py:{_line_of('the deadlocking line')}")
               for b in blocked)


def test_partial_deadlock_after_others_finish():
    """Ranks that finished are not listed; the one left waiting is."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 1:
            comm.Recv(bsim.Buffer(4), source=0, tag=9)

    with pytest.raises(bsim.DeadlockError, match="1 of 2 ranks blocked") as info:
        bsim.simulate(main, ranks=2)
    assert [b[0] for b in info.value.blocked] == [1]


def test_unknown_network_and_parameter_list_valid_ones():
    """Spec errors list the valid models and parameters."""
    with pytest.raises(ValueError,
                       match="unknown network model 'nosuch'; valid: .*hockney"):
        bsim.simulate(lambda: None, ranks=1, network="nosuch")
    with pytest.raises(ValueError, match="unknown parameter.*lat; valid: latency"):
        bsim.simulate(lambda: None, ranks=1, network="hockney:lat=1")
    with pytest.raises(ValueError, match="unknown protocol 'tcp'; valid: bsim, loggops, loggp"):
        bsim.simulate(lambda: None, ranks=1, protocol="tcp")


def _line_of(marker: str) -> int:
    with open(__file__, encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            if marker in line and "_line_of" not in line:
                return i
    raise AssertionError(marker)


@pytest.mark.parametrize("fault,expected", [
    ("deadlock", "deadlock"),
    ("exception", "ZeroDivisionError"),
    ("usage", "invalid dest"),
    ("truncation", "truncat"),
    ("root", "invalid root"),
])
def test_reports_point_at_the_users_file_not_bsims(tmp_path, fault, expected):
    """A program file run by `bsim run`: the report names its file and line, never a frame
    of bsim's own packages (engine/, mpi/, cli/...)."""
    import subprocess
    import sys

    from conftest import ROOT
    prog = tmp_path / "user_prog.py"
    body = {
        "deadlock": "comm.Recv(bsim.Buffer(4), source=(comm.rank + 1) % 2)   # FAULT",
        "exception": "x = 1 / (comm.rank - comm.rank)   # FAULT",
        "usage": "comm.Send(bsim.Buffer(4), dest=99)   # FAULT",
        "truncation": "comm.Sendrecv(bsim.Buffer(8), 1 - comm.rank, recvbuf=bsim.Buffer(4))",
        "root": "comm.Bcast(bsim.Buffer(4), root=5)   # FAULT",
    }[fault]
    prog.write_text("import bsim\nfrom mpi4py import MPI\ncomm = MPI.COMM_WORLD\n"
                    f"bsim.add_time(1e-3)\n{body}\n")
    proc = subprocess.run([sys.executable, "-m", "bsim", "run", str(prog), "-n", "2"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 2
    assert expected in proc.stderr
    assert f"{prog}:5" in proc.stderr, proc.stderr
    assert "/bsim/" not in proc.stderr.replace(str(ROOT), "")


def test_deadlock_time_is_when_the_ranks_blocked():
    """A skipped barrier: ranks block at 3 and 4 ms (their clocks), reported as such."""
    def main():
        comm = MPI.COMM_WORLD
        bsim.add_time(1e-3 * (comm.rank + 2))   # rank r reaches the barrier at (r + 2) ms
        if comm.rank:
            comm.Barrier()

    with pytest.raises(bsim.DeadlockError, match=r"deadlock at t=0\.004: 2 of 3") as info:
        bsim.simulate(main, ranks=3)
    assert "(blocked since t=0.003)" in str(info.value)


def test_simulate_refuses_a_program_that_is_not_callable_and_a_bool_rank_count():
    """``simulate(42, 2)`` failed only inside rank 0 and ``simulate(main, True)`` ran on one
    rank; both are refused before anything runs."""
    with pytest.raises(TypeError, match="main must be callable"):
        bsim.simulate(42, 2)
    with pytest.raises(ValueError, match="ranks must be an int >= 1, got True"):
        bsim.simulate(lambda: None, True)


def test_messages_never_received_are_reported():
    """Under the ``bsim`` protocol a send completes without its receive, so a program that
    forgets a receive ran to the end silently; the result counts what each rank was sent
    and never received (JSON ``unreceived``) and the summary warns."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            comm.Send(bsim.Buffer(8), dest=1, tag=3)
            comm.Send(bsim.Buffer(8), dest=2, tag=3)
            comm.Send(bsim.Buffer(8), dest=2, tag=4)
        elif comm.rank == 2:
            comm.Recv(bsim.Buffer(8), source=0, tag=4)

    res = bsim.simulate(main, ranks=3)
    assert res.unreceived == {1: 1, 2: 1}
    assert "2 messages sent were never received, by rank(s) 1 (1), 2 (1)" in res.summary()
    assert res.to_dict()["unreceived"] == {"1": 1, "2": 1}
    assert bsim.simulate(lambda: None, ranks=3).unreceived == {}


@pytest.mark.parametrize("protocol,call", [("bsim", "Ssend"), ("loggp", "Send")])
def test_a_blocked_send_names_its_destination_tag_and_size(protocol, call):
    """A send nobody receives (a synchronous send; a rendezvous above loggp's eager limit)
    is listed with the world rank it goes to, its tag and its bytes: 100,000 doubles =
    800,000 bytes, above any eager limit."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            getattr(comm, call)(bsim.Buffer(100_000, MPI.DOUBLE), dest=2, tag=7)
        elif comm.rank == 2:
            comm.Recv(bsim.Buffer(8), source=0, tag=5)

    with pytest.raises(bsim.DeadlockError) as info:
        bsim.simulate(main, ranks=3, protocol=protocol)
    lines = dict((b[0], b[1]) for b in info.value.blocked)
    assert lines[0] == f"{call}(dest=world 2, tag=7, 800000 bytes)"
    assert lines[2] == "Recv(source=world 0, tag=5)"


def test_os_exit_in_a_rank_is_an_error_naming_rank_code_and_line():
    """os._exit would end the one host process, every rank and the result with it: it is a
    RankError naming the rank, the code and the line (0 too: no MPI_Finalize either), and
    os._exit is the real one again after the run."""
    import os
    real = os._exit

    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 1:
            os._exit(0)   # the exiting line
        comm.Barrier()

    with pytest.raises(bsim.RankError, match=r"rank 1 called os\._exit\(0\)") as info:
        bsim.simulate(main, ranks=3)
    assert f"test_errors.py:{_line_of('the exiting line')}" in str(info.value)
    assert os._exit is real


def test_os_exit_in_a_child_a_rank_forked_exits_the_child():
    """A child process forked by a rank through multiprocessing (which ends its children
    with os._exit) really exits with its code; the rank goes on.  (A bare os.fork() in a
    rank is refused: tests/test_faults_inputs.py.)"""
    import multiprocessing
    import os

    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            child = multiprocessing.get_context("fork").Process(target=os._exit, args=(5,))
            child.start()
            child.join()
            assert child.exitcode == 5
        comm.Barrier()

    res = bsim.simulate(main, ranks=2)
    assert len(res.finish) == 2
