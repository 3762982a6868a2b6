"""Engine hooks: tracer spans and messages, compute noise, progress, host-compute mode."""

from __future__ import annotations

import time

import pytest

import bsim
from bsim import MPI

NET = "hockney:latency=2e-6,bandwidth=1e9"


class Recorder:
    """A tracer that keeps everything."""

    def __init__(self):
        self.spans, self.messages = [], []

    def span(self, rank, kind, name, start, end):
        self.spans.append((rank, kind, name, start, end))

    def message(self, src, dst, nbytes, tag, sent, received):
        self.messages.append((src, dst, nbytes, tag, sent, received))


def test_tracer_sees_calc_wait_comm_and_the_message():
    """Rank 1 computes 1 ms, sends 1000 B; rank 0 waits 1 ms then pays 3 us of comm."""
    def main():
        comm = MPI.COMM_WORLD
        if comm.rank == 1:
            bsim.add_time(1e-3)
            comm.Send(bsim.Buffer(1000), dest=0, tag=4)
        else:
            comm.Recv(bsim.Buffer(1000), source=1, tag=4)

    rec = Recorder()
    bsim.simulate(main, ranks=2, network=NET, tracer=rec, protocol="bsim")
    c = 2e-6 + 1000 / 1e9
    assert (1, "calc", "add_time", 0.0, 1e-3) in rec.spans
    assert (0, "wait", "Recv", 0.0, 1e-3) in rec.spans
    assert (0, "comm", "Recv", 1e-3, 1e-3 + c) in rec.spans
    assert rec.messages == [(1, 0, 1000, 4, 1e-3, 1e-3 + c)]


class EveryOther:
    """Doubles every second add_time of each rank (deterministic 'noise')."""

    def __init__(self):
        self.count = {}

    def stretch(self, rank, start, seconds):
        k = self.count.get(rank, 0)
        self.count[rank] = k + 1
        return seconds * 2 if k % 2 else seconds


def test_compute_noise_stretches_add_time_and_counts_as_calc():
    """With every second compute doubled, 4 x 1 ms take 6 ms of calc."""
    def main():
        for _ in range(4):
            bsim.add_time(1e-3)

    res = bsim.simulate(main, ranks=3, network=NET, noise=EveryOther(), protocol="bsim")
    assert res.calc.tolist() == [pytest.approx(6e-3, rel=1e-12)] * 3
    assert res.finish.tolist() == res.calc.tolist()


def test_progress_is_called_with_the_engine():
    """A long run calls the progress hook every PROGRESS_EVERY events, with a growing count."""
    from bsim.engine.hooks import PROGRESS_EVERY
    seen = []

    def main():
        comm = MPI.COMM_WORLD
        for _ in range(6000):
            comm.sendrecv(None, dest=(comm.rank + 1) % 8, source=(comm.rank - 1) % 8)

    res = bsim.simulate(main, ranks=8, network=NET,
                        progress=lambda eng: seen.append(eng.events), protocol="bsim")
    # 8 ranks x 6000 blocking receives, each completing in the future (c > 2 us), wake
    # ranks 48000 times in all: at least 2 multiples of PROGRESS_EVERY
    assert len(seen) >= 2
    assert seen == [PROGRESS_EVERY * (k + 1) for k in range(len(seen))]
    assert seen[-1] <= res.events


def test_measure_mode_charges_host_compute_as_calc():
    """compute='measure' turns a 20 ms busy loop (scale 10) into >= 0.2 s of calc."""
    def main():
        comm = MPI.COMM_WORLD
        end = time.perf_counter() + 0.02
        while time.perf_counter() < end:
            pass
        comm.Barrier()

    res = bsim.simulate(main, ranks=2, network=NET, compute="measure", compute_scale=10.0,
                        protocol="bsim")
    assert (res.calc >= 0.2).all()
    assert (res.calc < 2.0).all()     # a loose upper bound: a loaded host may be slow
    ignored = bsim.simulate(main, ranks=2, network=NET, protocol="bsim")
    assert ignored.calc.tolist() == [0.0, 0.0]


def test_measured_compute_is_traced_as_calc():
    """Under compute='measure' the host compute between MPI calls is a calc span named
    ``measured``: the trace's calc adds up to the Result's (it had no calc span at all)."""
    from bsim.outputs.trace import ChromeTracer

    def main():
        comm = MPI.COMM_WORLD
        for _ in range(3):
            end = time.perf_counter() + 0.002
            while time.perf_counter() < end:
                pass
            comm.Barrier()

    tracer = ChromeTracer(program="measured")
    res = bsim.simulate(main, ranks=2, network=NET, compute="measure", tracer=tracer,
                        protocol="bsim")
    spans = [e for e in tracer.to_dict()["traceEvents"] if e.get("cat") == "calc"]
    assert {e["name"] for e in spans} == {"measured"}
    for rank in (0, 1):
        traced = sum(e["dur"] for e in spans if e["tid"] == rank) / 1e6
        assert traced == pytest.approx(res.calc[rank], rel=1e-9) and traced >= 0.006


@pytest.mark.parametrize("protocol,net", [
    ("loggp", "loggp:L=3e-6,o=1e-6,g=2e-6,G=1e-9"),
    ("bsim:send_cost=5e-7", NET),
])
def test_traced_spans_add_up_to_the_accounts(protocol, net):
    """Every charge is traced: per rank, traced calc/wait/comm equal the Result's."""
    def main():
        comm = MPI.COMM_WORLD
        r = comm.rank
        bsim.add_time(1e-5 * r)
        req = comm.Irecv(bsim.Buffer(100), source=(r - 1) % 4)
        comm.Send(bsim.Buffer(100), dest=(r + 1) % 4)
        while not req.Test():
            pass
        comm.Allreduce(bsim.Buffer(8), bsim.Buffer(8))

    rec = Recorder()
    res = bsim.simulate(main, ranks=4, network=net, protocol=protocol, tracer=rec)
    for r in range(4):
        for kind, total in (("calc", res.calc[r]), ("wait", res.wait[r]), ("comm", res.comm[r])):
            traced = sum(e - s for rank, k, _, s, e in rec.spans if rank == r and k == kind)
            assert traced == pytest.approx(total, rel=1e-9, abs=1e-15)
