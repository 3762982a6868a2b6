"""Noise after review: queued detours steal rate x mean, and no interval hangs."""

from __future__ import annotations

import math
import subprocess
import sys
import time
from pathlib import Path

import pytest

import bsim
from bsim import MPI
from bsim.engine.noise import DetourNoise, build_noise

ROOT = Path(__file__).resolve().parents[1]
MS = 1e-3


# -- 1. detours queue: the stolen fraction is rate x mean -----------------------------------
def test_a_detour_arriving_during_another_waits_for_it(monkeypatch):
    """Detours of 1 ms arriving at 1.0 and 1.5 ms hold the CPU over [1, 3) ms, not the
    merged [1, 2.5): 2 ms of work from 0 does 1 ms by 1.0 ms and the rest from 3.0, ending
    at 4.0 ms (3.5 ms when overlapping detours merged)."""
    noise = DetourNoise(rate=10, duration=1 * MS, seed=1)   # interval 0.4 s: both in i = 0
    monkeypatch.setattr(noise, "arrivals",
                        lambda node, i: [(1.0 * MS, 1 * MS), (1.5 * MS, 1 * MS)] if i == 0
                        else [])
    assert noise.end(0, 0.0, 2 * MS) == pytest.approx(4.0 * MS, rel=1e-12)
    assert noise.end(0, 2.0 * MS, 0.5 * MS) == pytest.approx(3.5 * MS, rel=1e-12)  # queued
    assert noise.end(0, 0.2 * MS, 0.5 * MS) == pytest.approx(0.7 * MS, rel=1e-12)  # clear


@pytest.mark.parametrize("rate, length, work, nodes", [
    (100, {"mean": 1e-3}, 18.0, 30),       # rho 0.1: 1 - exp(-rho) = 0.0952 when merged
    (500, {"mean": 1e-3}, 10.0, 10),       # rho 0.5: merged 0.393
    (500, {"duration": 1e-3}, 10.0, 10),   # rho 0.5, fixed lengths
    (900, {"duration": 1e-3}, 2.0, 10),    # rho 0.9: long busy periods
])
def test_the_long_run_stolen_fraction_is_rate_times_mean(rate, length, work, nodes):
    """Over `nodes` independent nodes each doing `work` seconds from t = 0, the fraction
    of the wall time the detours hold is rate x E[length] within 4 standard deviations.

    The busy time over a wall time T is the work the detours bring, a compound Poisson
    sum of variance rate x E[S^2] x T (E[S^2] = 2 mean^2 exponential, duration^2 fixed),
    less the backlog left at T, of mean rate x E[S^2] / (2 (1 - rho)) (Pollaczek-Khinchine):
    sd = sqrt(rate E[S^2] / T_total); 150 seeds of 2 s gave sample sds within 10% of it.
    (Merging overlaps stole about 1 - exp(-rho): 0.0957 to 0.595, failing by 7 to 71 sds.)"""
    noise = DetourNoise(rate=rate, seed=2026, **length)
    rho = rate * (length.get("mean") or length.get("duration"))
    s2 = 2 * length["mean"] ** 2 if "mean" in length else length["duration"] ** 2
    walls = [noise.stretch(n, 0.0, work) for n in range(nodes)]   # wall time from t = 0
    total = sum(walls)
    stolen = 1.0 - nodes * work / total
    sd = math.sqrt(rate * s2 / total)
    bias = rate * s2 / (2 * (1 - rho)) / (total / nodes)
    assert abs(stolen - rho) <= 4 * sd + bias, (stolen, rho, sd)
    assert noise.stolen_fraction == rho


@pytest.mark.parametrize("length", ["mean=1e-2", "duration=1.2e-2"])
def test_detours_that_would_never_leave_the_cpu_free_are_refused(length):
    """rate x mean >= 1: the queue never empties; one line says so."""
    with pytest.raises(ValueError, match=r"rate x (mean|duration) = 1(\.2)? >= 1: the detours "
                                         r"would keep the CPU busy forever"):
        build_noise(f"detour:rate=100,{length}")


# -- 2. no interval hangs ------------------------------------------------------------------
@pytest.mark.parametrize("interval", [1e-9, 1e-7, 1e4, 0.0])
def test_an_interval_far_from_the_detour_rate_is_refused(interval):
    """rate=10: an interval holding under 0.01 or over 1,000 expected detours is refused
    with one line saying why (1e-9 hung: each add_time walked back 20 x mean / interval
    = 2e7 intervals; 0 silently meant the default)."""
    with pytest.raises(ValueError, match=r"interval must hold 0.01 to 1000 expected detours "
                                         r"\(rate x interval; the cost grows"):
        DetourNoise(rate=10, mean=1e-3, interval=interval)


def test_the_command_line_refuses_a_tiny_interval_at_once(tmp_path):
    """The reviewer's run (no output in 300 s) ends at once with status 2 and one line."""
    prog = tmp_path / "p.py"
    prog.write_text("import bsim\nfrom mpi4py import MPI\nfor i in range(10):\n"
                    "    bsim.add_time(1e-3)\n    MPI.COMM_WORLD.Allreduce(bsim.Buffer(8), "
                    "bsim.Buffer(8))\n")
    run = subprocess.run([sys.executable, "-m", "bsim", "run", str(prog), "-n", "2", "--noise",
                          "detour:rate=10,mean=1e-3,interval=1e-9", "--quiet"],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and "interval must hold" in run.stderr


def test_the_smallest_interval_and_the_longest_detours_run_briskly():
    """rate x interval = 0.01 with rho = 0.99 (mean 100 x the interval): a 2-rank run of 10
    x (1 ms + allreduce) takes a fraction of a second of host time (the queue is served
    forward once; nothing walks back mean / interval intervals per add_time)."""
    def main():
        for _ in range(10):
            bsim.add_time(1e-3)
            MPI.COMM_WORLD.allreduce(1.0)
    t0 = time.process_time()
    res = bsim.simulate(main, 2, noise="detour:rate=10,mean=0.099,interval=1e-3,seed=3")
    assert time.process_time() - t0 < 20.0
    assert res.elapsed >= 10e-3
