"""The shortcuts of the contention layer's and the loggp protocol's per-message work, checked
against what they stand for.

* A flat model's message reuses its pair's path when its size is the pair's last one: the
  model is asked ``wire`` once per (pair, size), unless it has per-call state
  (``shared_state``: network noise draws a new delay at every call), which must see every
  call.
* A model that keeps ``NetworkModel``'s zero overheads is not asked for them
  (``overhead_free``); one that charges any is.
"""

from __future__ import annotations

import pytest

import bsim
from bsim.engine.fabric_routes import LinkTable
from bsim.engine.network_noise import NoisyNetwork
from netmodels.base import overhead_free
from netmodels.flat import Hockney, LogGP


class CountingHockney(Hockney):
    """Hockney that counts its ``wire`` calls."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.calls = 0

    def wire(self, src, dst, nbytes):
        self.calls += 1
        return super().wire(src, dst, nbytes)


def _table(net, nranks=4):
    net.prepare(nranks)
    return LinkTable(net, nranks, "equal")


def test_a_pairs_repeated_size_asks_the_model_once():
    net = CountingHockney(latency=1e-6, bandwidth=1e9)
    table = _table(net)
    first = table.flat_paths(0, 1, 1000)
    asked = net.calls
    assert asked == 2   # wire(s) - wire(0)
    assert table.flat_paths(0, 1, 1000) is first
    assert net.calls == asked
    # another size, or another pair, is asked again; its lone time is its own
    other = table.flat_paths(0, 1, 3000)
    assert net.calls == asked + 2
    assert other[0][1] == pytest.approx(3000 / 1e9)
    assert first[0][1] == pytest.approx(1000 / 1e9)
    table.flat_paths(1, 0, 3000)
    assert net.calls == asked + 4


def test_a_model_with_per_call_state_is_asked_every_time():
    inner = CountingHockney(latency=1e-6, bandwidth=1e9)
    net = NoisyNetwork(inner, mean=1e-6, prob=1.0, seed=3)
    assert net.shared_state
    table = _table(net)
    for k in range(1, 4):
        table.flat_paths(0, 1, 1000)
        assert inner.calls == 2 * k


def test_network_noise_under_contention_draws_as_many_delays_as_messages():
    """On a star with fluid contention, a noisy model's k-th wire call of a pair draws the
    k-th delay: a run that skipped calls would shift every later draw.  Two runs that send
    the same messages in the same order give the same prediction, and it differs from the
    noiseless one (the draws are in it)."""
    def prog():
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        buf = bsim.buffer(100000, MPI.BYTE)
        for _ in range(4):
            if comm.rank == 0:
                comm.Send(buf, dest=1)
            elif comm.rank == 1:
                comm.Recv(buf, source=0)

    def run(noise):
        return bsim.simulate(prog, ranks=2, network="hockney:latency=1e-6,bandwidth=1e9",
                             protocol="bsim", contention="fluid", noise=noise).elapsed
    quiet = run(None)
    noisy = run("net:mean=1e-5,prob=1,seed=7")
    assert noisy == run("net:mean=1e-5,prob=1,seed=7")
    assert noisy > quiet


def test_overhead_free_models():
    assert overhead_free(Hockney())
    assert not overhead_free(LogGP(o=1e-6))
    assert not overhead_free(NoisyNetwork(Hockney(), mean=1e-6))

    class Charging(Hockney):
        def send_overhead(self, nbytes):
            return 1e-6
    assert not overhead_free(Charging())
    instance = Hockney()
    instance.pair_recv_overhead = lambda src, dst, n: 1e-6
    assert not overhead_free(instance)


def test_loggp_on_a_model_with_overheads_still_charges_them():
    """loggp's lone message on LogGP is ``o + L + (s-1)G + o`` (Alexandrov et al. 1995):
    the overheads are asked of a model that has them."""
    L, o, G, s = 2e-6, 1e-6, 1e-9, 10001

    def prog():
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        buf = bsim.buffer(s, MPI.BYTE)
        if comm.rank == 0:
            comm.Send(buf, dest=1)
        else:
            comm.Recv(buf, source=0)

    res = bsim.simulate(prog, ranks=2, network=f"loggp:L={L},o={o},g=0,G={G}",
                        protocol="loggp")
    assert float(res.finish[1]) == pytest.approx(o + L + (s - 1) * G + o, rel=1e-12)
