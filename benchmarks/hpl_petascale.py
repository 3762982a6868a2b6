"""HPL at the BSIM paper's petascale size:
N = 1,310,720, NB = 512, P = Q = 64 on the 16x16x16 torus.

The machine is ``bsim/machines/petascale_torus.toml``: 4096 nodes of 8
cores (512 GFlop/s each) on a 16x16x16 torus at 10 GB/s per link direction,
one HPL process per node (the preset's ``cores = 1``: P x Q = 4096 processes,
the BSIM paper Sec. IV.B), kernel times from its ``[kernels.hpl_blas]`` (dgemm at
63% of node peak).  Prints the predicted time and PFlop/s (HPL's
``2/3 N^3 + 3/2 N^2`` flops / T), the calc / wait / comm split, host wall
and CPU time and peak RSS.  The BSIM paper predicted "over 1 PFlop/s", about 50%
of the 2.1 PFlop/s peak (Sec. IV.D).

The default settings use the skeleton's speed variants (``pivot=panel``,
``swap=allgatherv``, ``bcast=ibcast``; see docs/skeletons_hpl_phase.md), the
only ones that fit the 10-minute host budget on 2 cores.  ``--n`` and
``--p/--q`` scale the case down (e.g. ``--n 131072 --p 16 --q 16``) and
``--faithful`` switches to HPL's own point-to-point algorithms.

    python benchmarks/hpl_petascale.py [--n N] [--p P] [--q Q] [--faithful]
"""

from __future__ import annotations

import argparse
import resource
import time

import bsim
from bsim.machines import network_spec
from skeletons.hpl import main as hpl
from skeletons.models.hpl import hpl_flops


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1310720)
    ap.add_argument("--nb", type=int, default=512)
    ap.add_argument("--p", type=int, default=64)
    ap.add_argument("--q", type=int, default=64)
    ap.add_argument("--depth", type=int, default=1)
    ap.add_argument("--faithful", action="store_true",
                    help="HPL's own algorithms: pivot=column, swap=mix, bcast=1ringM")
    ns = ap.parse_args()
    fast = dict(pivot="panel", swap="allgatherv", bcast="ibcast")
    exact = dict(pivot="column", swap="mix", bcast="1ringM")
    params = dict(n=ns.n, nb=ns.nb, p=ns.p, q=ns.q, depth=ns.depth, kernel="petascale_torus",
                  verbose=False, **(exact if ns.faithful else fast))
    net = network_spec("petascale_torus")
    print(f"network {net}")
    print("params  " + " ".join(f"{k}={v}" for k, v in params.items() if k != "verbose"))
    yardstick = [_simpy_rate()]
    wall, cpu = time.perf_counter(), time.process_time()
    res = bsim.simulate(hpl, ranks=ns.p * ns.q, network=net, kwargs=params, name="hpl",
                        protocol="bsim")
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    yardstick.append(_simpy_rate())
    t = res.returns[0]["time"]
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"predicted time      {t:12.2f} s")
    print(f"predicted perf      {hpl_flops(ns.n) / t / 1e15:12.4f} PFlop/s  "
          f"({hpl_flops(ns.n) / t / (ns.p * ns.q * 512e9):.1%} of {ns.p * ns.q} x 512 GFlop/s)")
    print(f"mean calc/wait/comm {res.calc.mean():10.2f} {res.wait.mean():10.2f} "
          f"{res.comm.mean():10.2f} s")
    print(f"messages, events    {int(res.messages.sum()):,} {res.events:,}")
    print(f"host wall time      {wall:12.1f} s   (CPU {cpu:.1f} s)")
    print(f"peak RSS            {peak_kib / 1024:12.1f} MiB")
    print(f"SimPy timeouts/s    {yardstick[0]:12,.0f} before, {yardstick[1]:,.0f} after "
          f"(this machine's speed in this sitting: it moves by 30% from hour to hour)")


def _simpy_rate() -> float:
    """Raw SimPy timeouts per second on 4,096 processes (engine_speed.py's yardstick)."""
    from engine_speed import simpy_timeouts  # benchmarks/ is sys.path[0] for a script
    n, seconds, _ = simpy_timeouts(4096, 400_000)
    return n / seconds


if __name__ == "__main__":
    main()
