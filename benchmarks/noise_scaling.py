"""OS noise at scale: the ASCI Q lesson (modeling tutorial, "Computational Noise").

A bulk-synchronous skeleton (compute 1 ms, then an 8-byte allreduce; 50
iterations) runs on 16 to 4,096 ranks, 4 ranks per node, without noise and
with the *same* per-node noise at every scale:

* ``periodic``: a daemon of 1 ms every 100 ms on each node (1% of the CPU),
  phases random per node (unsynchronised daemons, as on ASCI Q);
* ``detour``: random detours, 1 per second per node, exponential length of
  mean 1 ms (0.1% of the CPU);
* ``co-scheduled``: the periodic daemon with the same phase on every node
  (the remedy: noise made simultaneous costs what it costs on one node).

Each allreduce waits for the slowest node, so the chance that *some* node is
hit in an iteration grows with the node count: the slowdown of the
unsynchronised models grows with scale while the co-scheduled one stays
flat.  Prints slowdown = noisy elapsed / clean elapsed per scale.

    python benchmarks/noise_scaling.py [--quick]
"""

from __future__ import annotations

import argparse
import time

import bsim
from bsim import MPI
from bsim.engine.noise import DetourNoise, PeriodicNoise

NETWORK = "hockney:latency=5e-6,bandwidth=1e9"
CORES_PER_NODE = 4


def bulk_synchronous(iterations: int = 100, t_compute: float = 1e-3) -> float:
    """Compute, then allreduce one double: the skeleton of most iterative solvers."""
    comm = MPI.COMM_WORLD
    for _ in range(iterations):
        bsim.add_time(t_compute)
        comm.allreduce(1.0)
    return MPI.Wtime()


def models() -> dict[str, object]:
    """The noise models compared (same parameters at every scale)."""
    return {
        "periodic": PeriodicNoise(period=0.1, duration=1e-3, seed=1,
                                  cores_per_node=CORES_PER_NODE),
        "detour": DetourNoise(rate=1.0, mean=1e-3, seed=1, cores_per_node=CORES_PER_NODE),
        "co-scheduled": PeriodicNoise(period=0.1, duration=1e-3, phase=0.05,
                                      cores_per_node=CORES_PER_NODE),
    }


def run(scales: list[int], iterations: int) -> list[dict[str, float]]:
    """Slowdown of each noise model at each rank count."""
    rows = []
    kw = {"iterations": iterations}
    for n in scales:
        t0 = time.perf_counter()
        clean = bsim.simulate(bulk_synchronous, n, network=NETWORK, kwargs=kw, protocol="bsim")
        row: dict[str, float] = {"ranks": n, "nodes": n // CORES_PER_NODE,
                                 "clean": clean.elapsed}
        for name, noise in models().items():
            noisy = bsim.simulate(bulk_synchronous, n, network=NETWORK, kwargs=kw, noise=noise,
                                  protocol="bsim")
            row[name] = noisy.elapsed / clean.elapsed
        row["host"] = time.perf_counter() - t0
        rows.append(row)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="16..1024 ranks, 30 iterations")
    ns = ap.parse_args()
    scales = [16, 64, 256, 1024] if ns.quick else [16, 64, 256, 1024, 4096]
    iterations = 30 if ns.quick else 50
    print(f"bulk-synchronous skeleton: {iterations} x (1 ms compute + allreduce 8 B), "
          f"{CORES_PER_NODE} ranks/node, {NETWORK}")
    print("slowdown = elapsed with noise / elapsed without; the noise per node is the same "
          "at every scale\n")
    names = list(models())
    print(f"{'ranks':>6}{'nodes':>7}{'clean (ms)':>12}" + "".join(f"{n:>14}" for n in names)
          + f"{'host (s)':>10}")
    for row in run(scales, iterations):
        print(f"{row['ranks']:>6}{row['nodes']:>7}{row['clean'] * 1e3:>12.3f}"
              + "".join(f"{row[n]:>13.3f}x" for n in names) + f"{row['host']:>10.1f}")


if __name__ == "__main__":
    main()
