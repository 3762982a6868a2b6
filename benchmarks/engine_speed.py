"""Engine speed and memory: a 2-D halo exchange on 4,096 and 65,536 virtual ranks.

Prints, per scale: simulated operations (MPI calls + add_time) per host second,
events per second, peak RSS of a fresh process, and memory per idle virtual
rank (RSS of N ranks all blocked in a receive, minus the RSS before the run,
divided by N).  Each measurement runs in its own subprocess so peak RSS
figures do not mix.  Targets (issue 2): >= 200,000 ops/s on the 4,096-rank
case, <= 10 KiB per idle rank.

    python benchmarks/engine_speed.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time
import bsim
from bsim import MPI
from skeletons.halo2d import main as halo

def rss_kib():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0

mode, px, py, iters = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
n = px * py
if mode == "halo":
    res = bsim.simulate(halo, ranks=n, network="hockney:latency=1e-6,bandwidth=1e10",
                        kwargs=dict(px=px, py=py, nx=64 * px, ny=64 * py, iterations=iters))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps(dict(ranks=n, ops=res.total_ops, events=res.events,
                          host=res.host_seconds, peak_kib=peak, elapsed=res.elapsed)))
else:   # idle: every rank but 0 blocks in a receive; rank 0 measures RSS at t=1
    import gc
    samples = {}

    def idle_measured():
        comm = MPI.COMM_WORLD
        if comm.rank == 0:
            bsim.add_time(1.0)
            comm.Iprobe(source=1)   # synchronises at t=1: every other rank is blocked by then
            samples["during"] = rss_kib()
            for dst in range(1, comm.size):
                comm.Send(bsim.Buffer(8), dest=dst)
        else:
            comm.Recv(bsim.Buffer(8), source=0)

    gc.collect()
    before = rss_kib()
    bsim.simulate(idle_measured, ranks=n)
    print(json.dumps(dict(ranks=n, before_kib=before, during_kib=samples["during"],
                          per_rank_kib=(samples["during"] - before) / n)))
"""


def run(mode: str, px: int, py: int, iters: int) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, mode, str(px), str(py), str(iters)],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="skip the 65,536-rank case")
    ns = ap.parse_args()
    scales = [(64, 64)] + ([] if ns.quick else [(256, 256)])
    print(f"{'ranks':>8} {'iters':>6} {'ops':>10} {'host s':>8} {'ops/s':>10} {'events/s':>10} "
          f"{'peak RSS MiB':>13}")
    for px, py in scales:
        r = run("halo", px, py, 10)
        print(f"{r['ranks']:>8} {10:>6} {r['ops']:>10,} {r['host']:>8.2f} "
              f"{r['ops'] / r['host']:>10,.0f} {r['events'] / r['host']:>10,.0f} "
              f"{r['peak_kib'] / 1024:>13.1f}")
    print()
    print(f"{'ranks':>8} {'KiB per idle rank':>18}")
    for px, py in scales:
        r = run("idle", px, py, 0)
        print(f"{r['ranks']:>8} {r['per_rank_kib']:>18.2f}")
    print("\ntargets: >= 200,000 ops/s at 4,096 ranks; <= 10 KiB per idle rank")


if __name__ == "__main__":
    main()
