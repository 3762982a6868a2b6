"""MILC CG time per iteration for every NodeVolume layout of the layout paper's case.

Lattice L = 12x12x12x24 on 4 nodes x 32 cores (128 ranks), as in the layout paper,
Fig. 3.  Every process grid Q (prod Q = 128, Q_i | L_i) and every NodeVolume
N (prod N = 32, N_i | Q_i; NodeCut C = Q/N) is simulated with ``milc_cg``
(``--param px..pt=Q, layout=N``) on a two-level network with ds1-like
parameters (the layout paper's cluster):

* inter-node: Hockney 1.5 us, 2.46 GiB/s per node (ds1's measured latency and
  link bandwidth, the MILC paper Sec. IV-D), one NIC per node shared by its 32 ranks
  (``nics=1`` is ASSUMED) under the fluid contention layer;
* intra-node: Hockney 0.5 us, 5 GB/s (ASSUMED shared-memory figures);
* CG kernel of the ``ds1`` preset (b1 = 0.71 us/site, V = 324 sites);
* allreduce ``c + d log2 P`` with c = 0, d = one 16-byte inter-node message
  (ASSUMED: the MILC paper has no ds1 fit), the same for every layout.

TPI (time per CG iteration, the layout paper's metric) is ``(T(3 iterations) -
T(1 iteration)) / 2``: the invocation's start-up cancels.  For each layout the
table gives ISP and SSN (layout paper, Sec. 3.2-3.3), TPI with NIC contention and
TPI without it; then the best and worst layouts, the gain, and the
least-squares fit ``TPI = a + b ISP + c SSN`` (the layout paper's linear model).

    python benchmarks/milc_layouts.py
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

import bsim  # noqa: E402
from bsim.cli.targets import load_target  # noqa: E402
from netmodels.layouts import isp, node_shapes, ssn  # noqa: E402

LATTICE = (12, 12, 12, 24)
NODES, CORES = 4, 32
INTER_LAT, INTER_BW = 1.5e-6, 2641404887.0      # ds1, the MILC paper Sec. IV-D
INTRA_LAT, INTRA_BW = 0.5e-6, 5e9               # ASSUMED
NETWORK = (f"twolevel:cores={CORES},nics=1,"
           f"intra=hockney:latency={INTRA_LAT!r};bandwidth={INTRA_BW!r},"
           f"inter=hockney:latency={INTER_LAT!r};bandwidth={INTER_BW!r}")
ALLREDUCE = f"clog:allreduce.c=0,allreduce.d={INTER_LAT + 16 / INTER_BW!r}"


def process_grids(lattice: tuple[int, ...], nprocs: int) -> Iterator[tuple[int, ...]]:
    """Every 4-D grid Q with prod(Q) = nprocs and Q_i | L_i, lexicographic."""
    def rec(i: int, left: int) -> Iterator[tuple[int, ...]]:
        if i == len(lattice):
            if left == 1:
                yield ()
            return
        for q in range(1, lattice[i] + 1):
            if lattice[i] % q == 0 and left % q == 0:
                for rest in rec(i + 1, left // q):
                    yield (q, *rest)
    yield from rec(0, nprocs)


PROTOCOL = "bsim"   # --protocol


def tpi(grid: tuple[int, ...], node: tuple[int, ...], contention: str | None) -> float:
    """Seconds per CG iteration of milc_cg with this grid and NodeVolume."""
    params = {"nx": LATTICE[0], "ny": LATTICE[1], "nz": LATTICE[2], "nt": LATTICE[3],
              "px": grid[0], "py": grid[1], "pz": grid[2], "pt": grid[3],
              "machine": "ds1", "layout": "x".join(map(str, node))}
    times = []
    for niters in (1, 3):
        target = load_target("milc_cg", {**params, "niters": niters})
        res = bsim.simulate(target.main, target.ranks, network=target.network_for(NETWORK),
                            collectives=ALLREDUCE, contention=contention, protocol=PROTOCOL,
                            kwargs=target.params)
        times.append(res.elapsed)
    return (times[1] - times[0]) / 2


def fmt(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape))


def main(argv: list[str] | None = None) -> None:
    global PROTOCOL
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--protocol", default=PROTOCOL, help="bsim (default) or loggp[:...]")
    PROTOCOL = ap.parse_args(argv).protocol
    nprocs = NODES * CORES
    t0 = time.perf_counter()
    rows = []
    for grid in process_grids(LATTICE, nprocs):
        sub = tuple(n // q for n, q in zip(LATTICE, grid, strict=True))
        for node in node_shapes(grid, CORES):
            cut = tuple(q // n for q, n in zip(grid, node, strict=True))
            rows.append((grid, node, cut, isp(grid, cut), ssn(node, sub),
                         tpi(grid, node, "fluid"), tpi(grid, node, None)))
    rows.sort(key=lambda r: (r[5], r[0], r[1]))
    print(f"L = {fmt(LATTICE)}, {NODES} nodes x {CORES} cores; {len(rows)} layouts; "
          f"TPI in us")
    print(f"network: {NETWORK} (+ fluid NIC contention)\nallreduce: {ALLREDUCE}\n"
          f"protocol: {PROTOCOL}")
    print(f"{'Q (grid)':<11} {'N (node)':<11} {'C (cut)':<9} {'S':<9} {'ISP':>5} {'SSN':>6} "
          f"{'TPI':>9} {'TPI no-cont':>11}")
    for grid, node, cut, isp_v, ssn_v, t_fluid, t_flat in rows:
        sub = tuple(n // q for n, q in zip(LATTICE, grid, strict=True))
        print(f"{fmt(grid):<11} {fmt(node):<11} {fmt(cut):<9} {fmt(sub):<9} {isp_v:>5} "
              f"{ssn_v:>6} {t_fluid * 1e6:>9.2f} {t_flat * 1e6:>11.2f}")
    best, worst = rows[0], rows[-1]
    gain = 1 - best[5] / worst[5]
    print(f"\nbest : Q={fmt(best[0])} N={fmt(best[1])} ISP={best[3]} SSN={best[4]} "
          f"TPI={best[5] * 1e6:.2f} us")
    print(f"worst: Q={fmt(worst[0])} N={fmt(worst[1])} ISP={worst[3]} SSN={worst[4]} "
          f"TPI={worst[5] * 1e6:.2f} us")
    print(f"the best layout is {gain:.1%} faster than the worst (layout paper reports ~31%)")
    a = np.array([[1.0, r[3], r[4]] for r in rows])
    y = np.array([r[5] for r in rows])
    coef, *_ = np.linalg.lstsq(a, y, rcond=None)
    r2 = 1 - float(np.sum((a @ coef - y) ** 2)) / float(np.sum((y - y.mean()) ** 2))
    print(f"linear model TPI = {coef[0] * 1e6:.2f} us + {coef[1] * 1e6:.4f} us*ISP + "
          f"{coef[2] * 1e6:.5f} us*SSN, R^2 = {r2:.3f}")
    print(f"host time {time.perf_counter() - t0:.1f} s")
    assert not math.isnan(r2)


if __name__ == "__main__":
    main()
