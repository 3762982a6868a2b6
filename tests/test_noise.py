"""OS and network noise: exact stretches, determinism, and slowdown growing with scale."""

from __future__ import annotations

import argparse
import math
import random

import pytest

import bsim
from bsim import MPI
from bsim.engine.network_noise import NoisyNetwork
from bsim.engine.noise import (
    CombinedNoise,
    DetourNoise,
    PeriodicNoise,
    build_noise,
    uniform,
)
from netmodels import build_network

NET = "hockney:latency=2e-6,bandwidth=1e9"
MS = 1e-3


@pytest.mark.parametrize("start, work, expected", [
    # period 1 ms, daemon 0.1 ms at [k, k + 0.1) ms; free 0.9 ms per period
    (0.05, 2.5, 2.75),   # starts in a daemon: free at 0.1; 0.9 + 0.9 + 0.7 ms of work ->
                         # ends 2.8 ms = 0.05 + 2.5 + 0.05 + 0.1 + 0.1 (daemon overlap 0.25)
    (0.2, 0.5, 0.5),     # fits in the free part: no stretch
    (0.1, 0.9, 0.9),     # ends exactly at the next daemon's start (the first such time)
    (0.5, 0.6, 0.7),     # 0.5 ms to 1.0, daemon to 1.1, 0.1 ms more: ends 1.2
    (0.0, 0.0, 0.0),     # no work, no stretch even inside a daemon
    (1.95, 1.8, 2.0),    # 0.05 to 2.0, daemon to 2.1, 0.9 to 3.0, daemon to 3.1, 0.85 more
])
def test_periodic_stretch_by_hand(start, work, expected):
    """Hand-computed stretches of the periodic daemon model (phase 0)."""
    noise = PeriodicNoise(period=1 * MS, duration=0.1 * MS, phase=0.0)
    assert noise.stretch(0, start * MS, work * MS) == pytest.approx(expected * MS, rel=1e-12)


def test_periodic_end_satisfies_the_defining_equation():
    """E = t + w + daemon time overlapping [t, E), over random cases and random phases."""
    rng = random.Random(5)
    for i in range(300):
        P = rng.choice([1e-3, 2.5e-3])
        d = rng.uniform(0, 0.8) * P
        noise = PeriodicNoise(P, d, seed=i)
        node, t, w = rng.randrange(4), rng.uniform(0, 0.02), rng.uniform(0, 0.01)
        end, phi = noise.end(node, t, w), noise.node_phase(node)
        ks = range(math.floor((t - phi) / P) - 1, math.ceil((end - phi) / P) + 1)
        overlap = sum(max(0.0, min(phi + k * P + d, end) - max(phi + k * P, t)) for k in ks)
        assert end == pytest.approx(t + w + overlap, abs=1e-15)


def test_periodic_phases_per_node_and_cores_per_node():
    """Random phases differ by node and are seeded; ranks of one node share them."""
    a = PeriodicNoise(1e-3, 1e-4, seed=3, cores_per_node=4)
    b = PeriodicNoise(1e-3, 1e-4, seed=3, cores_per_node=4)
    c = PeriodicNoise(1e-3, 1e-4, seed=4, cores_per_node=4)
    phases = [a.node_phase(n) for n in range(8)]
    assert len(set(phases)) == 8 and all(0 <= p < 1e-3 for p in phases)
    assert phases == [b.node_phase(n) for n in range(8)]
    assert phases != [c.node_phase(n) for n in range(8)]
    s = [a.stretch(r, 0.0, 5e-3) for r in range(8)]
    assert s[0] == s[1] == s[2] == s[3] and s[4] == s[7]


def test_detour_determinism_independent_of_call_order():
    """Same seed, queries in shuffled orders -> identical stretches; another seed differs."""
    queries = [(r, random.Random(r).uniform(0, 1.0), 1e-2) for r in range(40)]
    first = DetourNoise(rate=50, mean=1e-3, seed=7)
    expected = {q: first.stretch(*q) for q in queries}
    for order_seed in range(3):
        shuffled = list(queries)
        random.Random(order_seed).shuffle(shuffled)
        again = DetourNoise(rate=50, mean=1e-3, seed=7)
        assert {q: again.stretch(*q) for q in shuffled} == expected
    other = DetourNoise(rate=50, mean=1e-3, seed=8)
    assert {q: other.stretch(*q) for q in queries} != expected
    assert all(expected[q] >= q[2] for q in queries)


def test_detour_stretch_is_exact_against_a_fifo_queue_of_the_detours():
    """end() equals a direct walk over the detours served one after another from t = 0
    (a detour arriving during another starts when it ends), across interval ends.  (The
    model merged overlapping detours: the overlap was lost.)"""
    noise = DetourNoise(rate=400, mean=2e-3, seed=1)   # rho = 0.8: long queues
    L = noise.interval
    rng = random.Random(2)
    for _ in range(100):
        node, t, w = rng.randrange(3), rng.uniform(0, 0.05), rng.uniform(0, 0.02)
        busy, free = [], 0.0
        for k in range(math.floor((t + 20 * w + 0.1) / L)):
            for a, s in noise.arrivals(node, k):
                start = max(a, free)
                free = start + s
                busy.append((start, free))
        cur, rem = t, w
        for a, b in busy:
            if b <= cur:
                continue
            if a > cur:
                if rem <= a - cur:
                    break
                rem -= a - cur
            cur = b
        assert noise.end(node, t, w) == pytest.approx(cur + rem, abs=1e-15)


def test_detour_long_run_steals_rate_times_mean():
    """Over 50 s, fixed 1 ms detours at 10/s take about 1% of the time."""
    noise = DetourNoise(rate=10, duration=1e-3, seed=11)
    frac = noise.stretch(0, 0.0, 50.0) / 50.0 - 1.0
    assert 0.008 < frac < 0.012


def bulk_sync(iterations=40, t_compute=1e-3):
    comm = MPI.COMM_WORLD
    for _ in range(iterations):
        bsim.add_time(t_compute)
        comm.allreduce(1.0)


def test_slowdown_grows_with_node_count():
    """The ASCI Q lesson: same per-node noise, larger slowdown on more nodes (1..64)."""
    def slowdown(n, noise):
        clean = bsim.simulate(bulk_sync, n, network=NET, protocol="bsim").elapsed
        return bsim.simulate(bulk_sync, n, network=NET, noise=noise,
                             protocol="bsim").elapsed / clean

    unsync = [slowdown(n, PeriodicNoise(10e-3, 0.5e-3, seed=2)) for n in (1, 4, 16, 64)]
    assert unsync == sorted(unsync) and unsync[0] < unsync[-1] - 0.05
    assert unsync[0] < 1.06 < unsync[-1]
    # daemons at the same time on every node cost about what they cost on one node
    cosched = [slowdown(n, PeriodicNoise(10e-3, 0.5e-3, phase=0.0)) for n in (1, 64)]
    assert cosched[-1] == pytest.approx(cosched[0], abs=0.01) and cosched[-1] < unsync[-1] - 0.05


def test_noise_counts_as_calc_and_keeps_accounting():
    """Noisy add_time is calc; finish = calc + wait + comm still holds."""
    res = bsim.simulate(bulk_sync, 8, network=NET,
                        noise=CombinedNoise([PeriodicNoise(1e-3, 1e-4, seed=1),
                                             DetourNoise(rate=100, mean=1e-4, seed=1)]),
                                             protocol="bsim")
    assert (res.calc > 40e-3).all()
    assert res.finish == pytest.approx(res.calc + res.wait + res.comm, rel=1e-9)


def test_noisy_network_delegates_and_adds_per_pair_delays():
    """cost = inner + delay(src, dst, k); k counts per pair; attributes are the inner's."""
    inner = build_network(NET)
    net = NoisyNetwork(inner, mean=1e-6, seed=3)
    net.prepare(4)
    assert net.latency == inner.latency and net.min_cost() == inner.min_cost()
    c = inner.cost(0, 1, 1000)
    seq01 = [net.cost(0, 1, 1000) - c for _ in range(3)]
    net2 = NoisyNetwork(inner, mean=1e-6, seed=3)   # interleave another pair: same sequence
    got = []
    for _ in range(3):
        net2.cost(2, 3, 10)
        got.append(net2.cost(0, 1, 1000) - c)
    assert got == seq01 and len(set(seq01)) == 3 and all(d > 0 for d in seq01)
    assert seq01 == pytest.approx([net.delay(0, 1, k) for k in range(3)], rel=1e-12)
    half = NoisyNetwork(inner, mean=1e-6, prob=0.0, seed=3)
    assert half.cost(0, 1, 1000) == c


def test_noisy_network_delegates_node_of():
    """Attributes only the inner model has (node_of) are reached through the wrapper."""
    class Nodes:
        def node_of(self, rank):
            return rank // 2
    net = NoisyNetwork.__new__(NoisyNetwork)
    net.__dict__["inner"] = Nodes()
    assert net.node_of(5) == 2
    with pytest.raises(AttributeError):
        _ = net.no_such_attribute


def test_network_noise_in_a_pingpong_adds_exactly_the_drawn_delays():
    """Under bsim each receive costs cost + delay: the finish adds the drawn delays."""
    def pingpong():
        comm = MPI.COMM_WORLD
        buf = bsim.Buffer(1000)
        for _ in range(3):
            if comm.rank == 0:
                comm.Send(buf, dest=1)
                comm.Recv(buf, source=1)
            else:
                comm.Recv(buf, source=0)
                comm.Send(buf, dest=0)

    net = NoisyNetwork(build_network(NET), mean=5e-6, seed=9)
    res = bsim.simulate(pingpong, 2, network=net, protocol="bsim")
    ref = NoisyNetwork(build_network(NET), mean=5e-6, seed=9)
    delays = sum(ref.delay(0, 1, k) + ref.delay(1, 0, k) for k in range(3))
    assert res.finish[0] == pytest.approx(6 * 3e-6 + delays, rel=1e-12)
    assert "net:mean=5e-06" in res.network


def test_spec_strings_and_run_options():
    """Spec strings build the models; --noise net:... wraps the run's network."""
    compute, net = build_noise("periodic:period=1e-3,duration=2.5e-5;detour:rate=10,mean=1e-4,"
                               "seed=1,cores=4")
    assert isinstance(compute, CombinedNoise)
    assert compute.models[1].cores_per_node == 4 and net is None
    compute, net = build_noise(["net:mean=1e-6,seed=2"])
    assert compute is None and net == {"mean": 1e-6, "seed": 2}
    with pytest.raises(ValueError, match="unknown noise model"):
        build_noise("jitter:x=1")
    with pytest.raises(ValueError, match="period"):
        build_noise("periodic:period=1e-3,duration=2e-3")
    from bsim.cli import options
    p = argparse.ArgumentParser()
    p.add_argument("target")
    p.add_argument("--network", default=NET)
    options.add_timeline_options(p)
    ns = p.parse_args(["x", "--noise", "periodic:period=1e-3,duration=1e-4",
                       "--noise", "net:mean=1e-6"])
    kw = options.apply_run_options(ns)   # the specs, checked, for simulate() to build
    assert kw["noise"] == "periodic:period=1e-3,duration=1e-4;net:mean=1e-6"
    res = bsim.simulate(lambda: bsim.add_time(1e-3), ranks=2, network=ns.network, **kw)
    assert res.noise.startswith("periodic:") and " + net:mean=1e-06" in res.network
    assert "progress" not in kw   # stderr is not a terminal under pytest
    ns = p.parse_args(["x", "--noise", "periodic:period=1e-3"])
    with pytest.raises(ValueError, match="duration"):
        options.apply_run_options(ns)   # a bad spec fails before the run


def test_uniform_is_a_pure_function_of_its_key():
    """The counter-based generator: same key, same value; values in (0, 1), roughly uniform."""
    assert uniform(1, 2, 3) == uniform(1, 2, 3) != uniform(1, 2, 4)
    xs = [uniform(0, i) for i in range(20000)]
    assert 0 < min(xs) and max(xs) < 1
    assert abs(sum(xs) / len(xs) - 0.5) < 0.01


def test_daemons_on_one_core_slow_only_the_rank_on_that_core():
    """core=3 on 4-core nodes: a 1 ms work item started in a 0.1 ms daemon run at phase 0
    takes 1.1 ms on ranks 3, 7, ... and 1 ms on the others; the detour model alike."""
    from bsim.engine.noise import DetourNoise, PeriodicNoise
    p = PeriodicNoise(period=1e-2, duration=1e-4, phase=0.0, cores_per_node=4, core=3)
    assert p.stretch(3, 0.0, 1e-3) == pytest.approx(1.1e-3)
    assert p.stretch(7, 0.0, 1e-3) == pytest.approx(1.1e-3)
    assert all(p.stretch(r, 0.0, 1e-3) == 1e-3 for r in (0, 1, 2, 4, 5, 6))
    assert p.spec().endswith(",core=3")
    d = DetourNoise(rate=1e4, duration=1e-5, cores_per_node=4, core=0, seed=3)
    assert d.stretch(0, 0.0, 1e-3) > 1e-3 and d.stretch(1, 0.0, 1e-3) == 1e-3
    with pytest.raises(ValueError, match=r"core must be an int in 0..3"):
        PeriodicNoise(period=1e-2, duration=1e-4, cores_per_node=4, core=4)


def test_three_processes_per_node_escape_a_daemon_on_the_fourth_core():
    """The ASCI Q lesson in a run: 4 ranks per node with daemons on core 3 are slower than
    without; 3 ranks per node (cores 0..2 of 4) leave core 3 idle: exactly the noiseless
    time, while the same daemons on core 2 still hit them."""
    from bsim.engine.noise import build_noise

    def bulk():
        comm = MPI.COMM_WORLD
        for _ in range(20):
            bsim.add_time(1e-3)
            comm.allreduce(1.0)

    spec = "periodic:period=5e-3,duration=5e-4,seed=2,core=3"
    four, _ = build_noise(spec, cores_per_node=4)
    def run(n, noise=None):
        return bsim.simulate(bulk, n, noise=noise, protocol="bsim").elapsed
    assert run(32, four) > run(32) * 1.05
    three, _ = build_noise(spec + ",ranks_per_node=3", cores_per_node=4)
    assert three.spec().endswith("core=3,ranks_per_node=3")
    assert run(24, three) == run(24)
    on_used, _ = build_noise(spec.replace("core=3", "core=2") + ",ranks_per_node=3",
                             cores_per_node=4)
    assert run(24, on_used) > run(24)
    with pytest.raises(ValueError, match=r"ranks_per_node must be an int in 1..4"):
        build_noise(spec + ",ranks_per_node=5", cores_per_node=4)


def test_simulate_takes_a_noise_spec_as_the_command_line_does():
    """``simulate(noise="...")`` was used as a hook object (``AttributeError: 'str' object
    has no attribute 'stretch'``, blamed on the user's add_time); a spec string builds the
    same models as ``--noise``: the periodic daemon stretches 1 ms of work (10 detours of
    10 us: at least 1.1 ms) and ``net:`` wraps the network, recorded in the result."""
    import bsim as _bsim

    def main():
        _bsim.add_time(1e-3)
    res = _bsim.simulate(main, 2, noise="periodic:period=1e-4,duration=1e-5,phase=0",
                         protocol="bsim")
    assert res.elapsed >= 1.1e-3 and res.noise.startswith("periodic:")
    res = _bsim.simulate(main, 2, noise="net:mean=1e-6,seed=2", protocol="bsim")
    assert res.network.endswith("+ net:mean=1e-06,prob=1.0,seed=2")
    with pytest.raises(ValueError, match="missing 1 required positional argument: "
                                         "'duration'; periodic takes period=S"):
        _bsim.simulate(main, 2, noise="periodic:period=1e-4", protocol="bsim")


def test_compute_noise_stops_the_ranks_the_network_puts_on_one_node():
    """Daemons stop a node: the noise model's nodes are the network's.  Four ranks on a
    torus of 2-core nodes, dealt round-robin (ranks 0 and 2 on one node, 1 and 3 on the
    other), each computing 1 ms under periodic daemons with random phases per node:
    ranks 0 and 2 end together, 1 and 3 together, and the two nodes differ.  (The noise
    used cores_per_node=1 whatever the network, every rank its own node.)  A block
    layout that groups the ranks otherwise (ranks 0 and 1 together) is refused."""
    def main():
        bsim.add_time(1e-3)

    net = "torus:dims=2x1x1,cores=2,mapping=roundrobin"
    noise = "periodic:period=1e-4,duration=3e-5,seed=7"
    f = bsim.simulate(main, ranks=4, network=net, noise=noise, protocol="bsim").finish
    assert f[0] == f[2] and f[1] == f[3] and f[0] != f[1]
    assert min(f) > 1e-3
    spec = bsim.simulate(main, ranks=4, network=net, noise=noise, protocol="bsim").noise
    assert "cores_per_node=2" in spec and "layout=network" in spec
    for block in (",layout=block", ",ranks_per_node=2"):
        with pytest.raises(ValueError, match="puts ranks 0 and 1 on one node, the network on "
                                             "two; the noise's nodes are the network's"):
            bsim.simulate(main, ranks=4, network=net, noise=noise + block, protocol="bsim")


def test_compute_noise_takes_the_machines_cores_per_node():
    """es45's fat-tree puts 4 ranks on a 4-core node: the noise's default layout is that
    one, the same as giving cores_per_node=4 (it was 1: each rank its own daemons)."""
    def main():
        bsim.add_time(1e-3)
        MPI.COMM_WORLD.Barrier()

    noise = "periodic:period=1e-4,duration=3e-5,seed=3"
    by_machine = bsim.simulate(main, ranks=16, machine="es45:fattree", noise=noise, protocol="bsim")
    given = bsim.simulate(main, ranks=16, machine="es45:fattree",
                          noise=noise + ",cores_per_node=4,ranks_per_node=4", protocol="bsim")
    assert by_machine.finish.tolist() == given.finish.tolist()
    assert "cores_per_node=4" in by_machine.noise


def test_the_cli_builds_noise_on_the_runs_layout(tmp_path):
    """bsim run --noise on es45's fat-tree (4 ranks a 4-core node) records the machine's
    cores and the network's layout (the CLI built the noise itself, with cores_per_node=1),
    and net: noise still wraps the network; an explicit cores_per_node keeps the
    network's layout, and one smaller than the network's 4 ranks a node is refused (it
    switched to a block layout of one rank a node)."""
    import json

    from bsim.cli.main import main as cli
    prog = tmp_path / "p.py"
    prog.write_text("import bsim\nfrom mpi4py import MPI\nbsim.add_time(1e-3)\n"
                    "MPI.COMM_WORLD.Barrier()\n")
    out = tmp_path / "r.json"
    noise = "periodic:period=1e-4,duration=3e-5"
    for extra, want in (("", "cores_per_node=4,layout=network"),
                        (",cores_per_node=8", "cores_per_node=8,layout=network"),
                        (",cores_per_node=4,layout=network", "cores_per_node=4,layout=network")):
        assert cli(["run", str(prog), "-n", "16", "--machine", "es45:fattree", "--noise",
                    noise + extra, "--noise", "net:mean=1e-6", "--json", str(out),
                    "--quiet"]) == 0
        doc = json.loads(out.read_text())
        assert doc["noise"].endswith(want) and " + net:mean=1e-06" in doc["network"]
