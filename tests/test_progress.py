"""The progress line: drawn on a terminal after a delay, silent otherwise."""

from __future__ import annotations

import io

import pytest

import bsim
from bsim import MPI
from bsim.outputs.progress import ProgressBar, make_progress


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


def chatter():
    comm = MPI.COMM_WORLD
    for _ in range(2500):
        comm.sendrecv(None, dest=(comm.rank + 1) % 8, source=(comm.rank - 1) % 8)


def test_progress_line_shows_time_ops_and_rate():
    """With no delay, a long run draws lines with simulated time, ops, events and rate."""
    stream = FakeTTY()
    bar = ProgressBar(stream, delay=0.0, interval=0.0)
    res = bsim.simulate(chatter, 8, network="hockney:latency=1e-6,bandwidth=1e9", progress=bar)
    text = stream.getvalue()
    assert text.startswith("\rbsim t=") and "ev/s" in text
    assert " t=" in text and "ranks " in text
    last = text.split("\r")[-1]
    assert int(last.split("events ")[1].split()[0].replace(",", "")) <= res.events
    bar.close()
    assert stream.getvalue().endswith("\r")


def test_silent_when_quiet_or_not_a_terminal():
    """make_progress gives no hook for --quiet or a non-terminal stream."""
    assert make_progress(quiet=True, stream=FakeTTY()) is None
    assert make_progress(stream=io.StringIO()) is None
    assert isinstance(make_progress(stream=FakeTTY()), ProgressBar)


def test_short_runs_print_nothing():
    """Below the delay nothing is drawn."""
    stream = FakeTTY()
    bar = ProgressBar(stream, delay=60.0)
    bsim.simulate(chatter, 8, network="hockney:latency=1e-6,bandwidth=1e9", progress=bar)
    bar.close()
    assert stream.getvalue() == ""


def test_status_line_fits_the_terminal(monkeypatch):
    """In an 80-column terminal every redraw is at most 79 characters: it never wraps."""
    import io
    import os
    import shutil

    from bsim.outputs.progress import ProgressBar
    monkeypatch.setattr(shutil, "get_terminal_size",
                        lambda fallback=None: os.terminal_size((80, 24)))
    out = io.StringIO()
    bar = ProgressBar(stream=out)
    bar.draw("x" * 200)
    bar.draw("short")
    lines = out.getvalue().split("\r")
    assert max(len(s.rstrip()) for s in lines) <= 79
    assert all(len(s) <= 79 for s in lines)


def test_eta_only_with_a_limit():
    """Without a limit the end is unknown: no ETA; with max_events the line says the time
    left to the limit at the rate it shows: (limit - events) / rate, from the same line."""
    stream = FakeTTY()
    bar = ProgressBar(stream, delay=0.0, interval=0.0)
    bsim.simulate(chatter, 8, network="hockney:latency=1e-6,bandwidth=1e9", progress=bar)
    assert "eta<=" not in stream.getvalue()
    stream = FakeTTY()
    bar = ProgressBar(stream, delay=0.0, interval=0.0)
    bsim.simulate(chatter, 8, network="hockney:latency=1e-6,bandwidth=1e9", progress=bar,
                  max_events=10**7)
    lines = [x for x in stream.getvalue().split("\r") if "eta<=" in x]
    assert lines, stream.getvalue()[:300]
    for line in lines:
        eta = float(line.split("eta<=")[1].split("s")[0])
        events = int(line.split("events ")[1].split()[0].replace(",", ""))
        rate = float(line.split(" ev/s")[0].split()[-1].replace(",", ""))
        assert eta == pytest.approx((10**7 - events) / rate, abs=1.0)
