"""The ASCI Q noise story: 3 versus 4 processes per node, and the recovery.

The modeling tutorial ("Rational System Integration", "Computational Noise"): SAGE on
ASCI Q ran far slower than its model at scale; a 1 ms compute micro-benchmark
showed that some nodes took longer, because OS daemons stole CPU time; a node
used with three processes (one core left to the daemons) ran as the model
said, the fourth process slowed everything, and after the OS fixes (daemons
removed or made simultaneous) performance came within ~10% of the model.

bsim: a bulk-synchronous skeleton (the tutorial's 1 ms compute, then an
allreduce), on 4-core nodes of the ES45 network, with daemons on core 3 of
every node (``periodic:...,core=3``, random phases per node).  The tutorial
gives no daemon periods or durations: ASSUMED 1 ms every 100 ms (1%) plus
detours of mean 0.5 ms at 2 per second.  Four configurations per node count:

* ``4/node``: four processes per node, the daemons hit the fourth;
* ``3/node``: three processes per node, the daemons run on the idle core;
* ``co-scheduled``: four per node, the daemons at the same phase on every node
  (the detours removed).

Prints the slowdown against the run without daemons (1.0 by definition: the
daemons removed) per node count and writes
``asciq_noise.png`` (``--png``; needs matplotlib).

    python benchmarks/asciq_noise.py [--quick] [--png FILE]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _figure import line_figure  # noqa: E402

import bsim  # noqa: E402
from bsim import MPI  # noqa: E402
from bsim.engine.noise import build_noise  # noqa: E402
from bsim.machines import network_spec  # noqa: E402

CORES = 4
DAEMONS = "periodic:period=0.1,duration=1e-3,seed=7,core=3;detour:rate=2,mean=5e-4,seed=7,core=3"
SYNCED = "periodic:period=0.1,duration=1e-3,phase=0.05,core=3"


def bulk_synchronous(iterations: int = 100) -> float:
    """The tutorial's 1 ms compute micro-benchmark, each step ended by an allreduce."""
    comm = MPI.COMM_WORLD
    for _ in range(iterations):
        bsim.add_time(1e-3)
        comm.allreduce(1.0)
    return MPI.Wtime()


def elapsed(nodes: int, per_node: int, noise: str | None, iterations: int) -> float:
    compute = None
    if noise is not None:
        compute, _ = build_noise(noise, cores_per_node=CORES)
    res = bsim.simulate(bulk_synchronous, nodes * per_node, network=network_spec("es45"),
                        kwargs={"iterations": iterations}, noise=compute, protocol="bsim")
    return res.elapsed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="4..256 nodes, 50 iterations")
    ap.add_argument("--png", default=None, help="write the figure here")
    args = ap.parse_args(argv)
    nodes_list = [4, 16, 64, 256] if args.quick else [4, 16, 64, 256, 1024]
    iterations = 50 if args.quick else 100
    print(f"bulk-synchronous: {iterations} x (1 ms compute + allreduce), {CORES}-core nodes, "
          f"{network_spec('es45')}\ndaemons on core 3: {DAEMONS}\n")
    print(f"{'nodes':>6} {'4/node':>8} {'3/node':>8} {'co-sched':>9} {'host s':>7}")
    rows = []
    for nodes in nodes_list:
        t0 = time.perf_counter()
        clean4 = elapsed(nodes, CORES, None, iterations)
        clean3 = elapsed(nodes, CORES - 1, None, iterations)
        # core=3 is the fourth process of a node when 4 run, and an idle core when 3 do
        four = elapsed(nodes, CORES, DAEMONS, iterations) / clean4
        # ranks on cores 0..2 of each 4-core node: the daemons' core 3 is idle
        three = elapsed(nodes, CORES - 1, DAEMONS.replace("core=3", "core=3,ranks_per_node=3"),
                        iterations) / clean3
        synced = elapsed(nodes, CORES, SYNCED, iterations) / clean4
        rows.append((nodes, four, three, synced))
        print(f"{nodes:>6} {four:>7.3f}x {three:>7.3f}x {synced:>8.3f}x "
              f"{time.perf_counter() - t0:>7.1f}", flush=True)
    if args.png:
        line_figure(args.png, [r[0] for r in rows],
                    {"4 processes/node": [r[1] for r in rows],
                     "3 processes/node": [r[2] for r in rows],
                     "co-scheduled": [r[3] for r in rows]},
                    xlabel="nodes", ylabel="slowdown vs. no daemons",
                    title="ASCI Q noise story (bsim, daemons on core 3)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
