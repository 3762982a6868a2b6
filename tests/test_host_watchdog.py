"""A rank that waits for another outside MPI (a socket) ends the run with a report.

All ranks share one OS thread, so rank 0 blocked in ``accept()`` for the connection
rank 1 would make can never be left by itself: without the watchdog this test hangs.
"""

from __future__ import annotations

import socket
import time

import pytest

import bsim
from bsim import MPI
from bsim.engine.host_watchdog import HostBlockWatchdog, host_block_timeout
from bsim.errors import HostBlockedError, RankError


def _socket_meeting() -> None:
    comm = MPI.COMM_WORLD
    if comm.rank == 0:
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        comm.send(server.getsockname()[1], dest=1)
        conn, _ = server.accept()            # rank 1 never gets to connect
        conn.close()
        server.close()
    else:
        port = comm.recv(source=0)
        socket.create_connection(("127.0.0.1", port)).close()


def test_a_rank_blocked_on_a_socket_is_reported_with_its_line(monkeypatch):
    monkeypatch.setenv("BSIM_HOST_BLOCK_TIMEOUT", "0.5")
    t0 = time.monotonic()
    with pytest.raises(HostBlockedError) as err:
        bsim.simulate(_socket_meeting, ranks=2)
    assert time.monotonic() - t0 < 20
    text = str(err.value)
    assert text.startswith("rank 0: blocked in the host call accept() for 0.5 s")
    assert "test_host_watchdog.py:" in text and "BSIM_HOST_BLOCK_TIMEOUT" in text
    assert isinstance(err.value, RankError) and err.value.rank == 0


def test_a_rank_computing_on_the_host_is_not_stopped(monkeypatch):
    """Busy CPU is not a block: a 1 s host loop runs past a 0.3 s limit."""
    monkeypatch.setenv("BSIM_HOST_BLOCK_TIMEOUT", "0.3")

    def main():
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            pass
        return MPI.COMM_WORLD.allreduce(1)

    assert bsim.simulate(main, ranks=2).returns == [2, 2]


def test_the_limit_comes_from_the_environment_and_zero_turns_it_off(monkeypatch):
    monkeypatch.setenv("BSIM_HOST_BLOCK_TIMEOUT", "0")
    dog = HostBlockWatchdog()
    dog.arm()
    assert not dog.armed
    monkeypatch.setenv("BSIM_HOST_BLOCK_TIMEOUT", "oops")
    assert host_block_timeout() == 60.0
    monkeypatch.delenv("BSIM_HOST_BLOCK_TIMEOUT")
    assert host_block_timeout() == 60.0
