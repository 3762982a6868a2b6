"""Noise after review: queued detours steal rate x mean, no interval hangs, and the noise's
nodes are the run's (machine cores on the command line, the network's placement)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from pathlib import Path

import pytest

import bsim
from bsim import MPI
from bsim.cli.main import main as cli
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


# -- 3. the noise's nodes are the run's ----------------------------------------------------
PROG = "import bsim\nbsim.add_time(1e-3)\n"


def finishes(tmp_path: Path, *args: str) -> list[float]:
    """Per-rank finish times (ms) of a 1 ms add_time under `bsim run ... args`."""
    prog, out = tmp_path / "p.py", tmp_path / "r.json"
    prog.write_text(PROG)
    assert cli(["run", str(prog), *args, "--json", str(out), "--quiet"]) == 0
    return [round(f * 1e3, 9) for f in json.loads(out.read_text())["per_rank"]["finish"]]


def test_core_k_on_the_command_line_takes_the_machines_cores(tmp_path):
    """es45 has 4-core nodes: core=3 slows ranks 3 and 7 (daemon of 0.1 ms each 1 ms at
    phase 0: 1 ms of work ends at 1.2 ms), as bsim.simulate does; the command line
    refused it ('core must be an int in 0..0')."""
    spec = "periodic:period=1e-3,duration=1e-4,phase=0,core=3"
    got = finishes(tmp_path, "-n", "8", "--machine", "es45", "--noise", spec)
    assert got == [1.0, 1.0, 1.0, 1.2, 1.0, 1.0, 1.0, 1.2]
    sim = bsim.simulate(lambda: bsim.add_time(1e-3), 8, machine="es45", noise=spec)
    assert [round(f * 1e3, 9) for f in sim.finish] == got


def test_a_core_outside_the_machines_nodes_is_still_refused(tmp_path):
    """core=4 on es45's 4-core nodes: one line, status 2 (checked once the run's cores are
    known); a core that is no number fails before the run."""
    prog = tmp_path / "p.py"
    prog.write_text(PROG)
    with pytest.raises(ValueError, match=r"core must be an int in 0..3"):
        bsim.simulate(lambda: None, 8, machine="es45",
                      noise="periodic:period=1e-3,duration=1e-4,core=4")
    assert cli(["run", str(prog), "-n", "8", "--machine", "es45", "--noise",
                "periodic:period=1e-3,duration=1e-4,core=4", "--quiet"]) == 2
    with pytest.raises(ValueError, match=r"core must be an int in 0..\d+ .* got -1"):
        build_noise("periodic:period=1e-3,duration=1e-4,core=-1", layout_known=False)


ROUNDROBIN = "twolevel:cores=2,mapping=roundrobin:nodes=2"   # nodes {0, 2} and {1, 3}


@pytest.mark.parametrize("extra", ["", ",cores_per_node=2", ",cores_per_node=4",
                                   ",ranks_per_node=2,layout=network"])
def test_core_k_hits_the_rank_on_that_core_of_the_networks_node(tmp_path, extra):
    """Round-robin on two 2-core nodes: ranks 2 and 3 are the second rank of their nodes,
    so core=1 slows them (1.2 ms) and not 1 and 3, whether or not cores_per_node is given
    (cores_per_node=2 switched the noise to the block layout: ranks 1 and 3 slowed)."""
    spec = "periodic:period=1e-3,duration=1e-4,phase=0,core=1" + extra
    got = finishes(tmp_path, "-n", "4", "--network", ROUNDROBIN, "--noise", spec)
    assert got == [1.0, 1.0, 1.2, 1.2]


@pytest.mark.parametrize("extra, asked", [(",ranks_per_node=2", "ranks_per_node=2"),
                                          (",layout=block", "layout=block")])
def test_a_block_layout_the_network_contradicts_is_refused(tmp_path, extra, asked, capsys):
    """A block layout of 2 a node puts ranks 0 and 1 together, the round-robin network
    apart: refused in one line naming both and what to change."""
    prog = tmp_path / "p.py"
    prog.write_text(PROG)
    spec = "periodic:period=1e-3,duration=1e-4,phase=0,core=1" + extra
    assert cli(["run", str(prog), "-n", "4", "--network", ROUNDROBIN, "--noise", spec,
                "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert (f"{asked} puts ranks 0 and 1 on one node, the network on two; the noise's nodes "
            f"are the network's: leave {asked} out") in err


def test_a_block_layout_that_agrees_with_the_network_is_its_layout():
    """es45:fattree puts 4 ranks a node in rank order: ranks_per_node=4 (or layout=block)
    is the same grouping, accepted and recorded as the network's layout; ranks_per_node=2
    splits the network's nodes and is refused; a cores_per_node below the network's 4
    ranks a node is refused (it made every rank its own node)."""
    def main():
        bsim.add_time(1e-3)
    noise = "periodic:period=1e-4,duration=3e-5,seed=3"
    base = bsim.simulate(main, 16, machine="es45:fattree", noise=noise)
    for extra in (",ranks_per_node=4", ",layout=block"):
        same = bsim.simulate(main, 16, machine="es45:fattree", noise=noise + extra)
        assert same.finish.tolist() == base.finish.tolist()
        assert same.noise.endswith("cores_per_node=4,layout=network")
    with pytest.raises(ValueError, match="the network puts ranks 0 and 2 on one node, "
                                         "ranks_per_node=2 on two"):
        bsim.simulate(main, 16, machine="es45:fattree", noise=noise + ",ranks_per_node=2")
    with pytest.raises(ValueError, match=r"cores_per_node=1, but the network puts 4 ranks on "
                                         r"node 0"):
        bsim.simulate(main, 16, machine="es45:fattree", noise=noise + ",cores_per_node=1")
