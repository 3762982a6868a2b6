"""A rank that waits for another outside MPI ends the run with a report, or, on a
socket, lets the other ranks run.

All ranks share one OS thread, so rank 0 blocked in ``read()`` on a pipe rank 1 would
write can never be left by itself: without the watchdog the first test hangs.  A
blocking socket call polls instead (``bsim/engine/host_sockets.py``), so ranks that
meet through a socket do meet, and one that waits forever ends in a livelock report.
"""

from __future__ import annotations

import os
import socket
import time

import pytest
from conftest import needs_mpiexec, real_mpi_returns, simulated_returns

import bsim
from bsim import MPI
from bsim.engine.host_watchdog import HostBlockWatchdog, host_block_timeout
from bsim.errors import HostBlockedError, LivelockError, RankError


def _pipe_meeting() -> None:
    comm = MPI.COMM_WORLD
    if comm.rank == 0:
        r, w = os.pipe()
        comm.send(w, dest=1)
        os.read(r, 1)                        # rank 1 never gets to write
    else:
        os.write(comm.recv(source=0), b"x")


def test_a_rank_blocked_in_the_host_is_reported_with_its_line(monkeypatch):
    monkeypatch.setenv("BSIM_HOST_BLOCK_TIMEOUT", "0.5")
    t0 = time.monotonic()
    with pytest.raises(HostBlockedError) as err:
        bsim.simulate(_pipe_meeting, ranks=2, protocol="bsim")
    assert time.monotonic() - t0 < 20
    text = str(err.value)
    assert text.startswith("rank 0: blocked in a host call for 0.5 s")
    assert "test_host_watchdog.py:" in text and "BSIM_HOST_BLOCK_TIMEOUT" in text
    assert isinstance(err.value, RankError) and err.value.rank == 0


SOCKETS = """
import socket
from mpi4py import MPI

def main():
    comm = MPI.COMM_WORLD
    if comm.rank == 0:
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        comm.send(server.getsockname()[1], dest=1)
        conn, _ = server.accept()            # before rank 1 has connected
        got = conn.recv(5)                   # before rank 1 has sent
        conn.sendall(got.upper() * 100000)
        conn.close()
        server.close()
        return got.decode()
    port = comm.recv(source=0)
    conn = socket.create_connection(("127.0.0.1", port))
    conn.sendall(b"hello")
    data = b""
    while len(data) < 500000:
        data += conn.recv(65536)
    conn.close()
    return len(data), data[:5].decode()
"""


def test_ranks_meet_through_a_socket_as_processes_do():
    """Rank 0 accepts and reads before rank 1 has connected and sent; 500,000 bytes back
    fill the socket's buffer, so rank 1's reads interleave with rank 0's sends."""
    assert simulated_returns(2, SOCKETS, as_json=True) == ["hello", [500000, "HELLO"]]


@needs_mpiexec
def test_the_socket_meeting_gives_what_real_mpi_gives():
    assert simulated_returns(2, SOCKETS, as_json=True) == real_mpi_returns(2, SOCKETS)


def test_a_rank_waiting_on_a_socket_forever_ends_in_a_livelock_report():
    def main():
        if MPI.COMM_WORLD.rank == 0:
            server = socket.socket()
            server.bind(("127.0.0.1", 0))
            server.listen(1)
            server.accept()                  # nobody connects
        MPI.COMM_WORLD.Barrier()

    with pytest.raises(LivelockError, match=r"socket\.accept"):
        bsim.simulate(main, ranks=2, protocol="bsim")


def test_a_rank_computing_on_the_host_is_not_stopped(monkeypatch):
    """Busy CPU is not a block: a 1 s host loop runs past a 0.3 s limit."""
    monkeypatch.setenv("BSIM_HOST_BLOCK_TIMEOUT", "0.3")

    def main():
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            pass
        return MPI.COMM_WORLD.allreduce(1)

    assert bsim.simulate(main, ranks=2, protocol="bsim").returns == [2, 2]


def test_the_limit_comes_from_the_environment_and_zero_turns_it_off(monkeypatch):
    monkeypatch.setenv("BSIM_HOST_BLOCK_TIMEOUT", "0")
    dog = HostBlockWatchdog()
    dog.arm()
    assert not dog.armed
    monkeypatch.setenv("BSIM_HOST_BLOCK_TIMEOUT", "oops")
    assert host_block_timeout() == 60.0
    monkeypatch.delenv("BSIM_HOST_BLOCK_TIMEOUT")
    assert host_block_timeout() == 60.0
