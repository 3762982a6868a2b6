"""HPL skeleton vs HPL's own scalability model (netlib "HPL Scalability Analysis").

Sweeps N, NB, P, Q on a Hockney network (``latency``, ``bandwidth``) with a
flat flop rate, runs the skeleton with HPL's own algorithms (per-column pivot
exchange, 1ring broadcast, spread-roll swap, no look-ahead: the setting the
model describes) and prints its predicted time next to

* ``Thpl``: the model's dominant terms (``skeletons.models.hpl.hpl_time``),
* ``phases``: the model's per-phase sum ``sum_k Tpfact + Tupdate + Tbacks``
  (``hpl_time_phases``),

with ``alpha = latency``, ``beta = 8 / bandwidth``, ``gamma3 = 1 / rate``.
The skeleton's depth-1 (look-ahead) time is shown too.

    python benchmarks/hpl_scalability.py [--quick]
"""

from __future__ import annotations

import argparse
import time

import bsim
from skeletons.hpl import main as hpl
from skeletons.models.hpl import hpl_time, hpl_time_phases

LATENCY, BANDWIDTH, RATE = 5e-6, 1e9, 1e9


def simulate(n: int, nb: int, p: int, q: int, depth: int) -> float:
    net = f"hockney:latency={LATENCY},bandwidth={BANDWIDTH}"
    res = bsim.simulate(hpl, ranks=p * q, network=net, protocol="bsim",
                        kwargs=dict(n=n, nb=nb, p=p, q=q, depth=depth, bcast="1ring", swap="long",
                                    pivot="column", kernel=f"flat:rate={RATE}", verbose=False))
    return res.returns[0]["time"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smaller sweep")
    ns = ap.parse_args()
    sizes = [2000, 4000] if ns.quick else [2000, 4000, 8000]
    grids = [(2, 2), (2, 4), (4, 4)] if ns.quick else [(2, 2), (2, 4), (4, 2), (4, 4), (4, 8)]
    nbs = [64, 128]
    alpha, beta, gamma = LATENCY, 8.0 / BANDWIDTH, 1.0 / RATE
    print(f"Hockney latency {LATENCY:g} s, bandwidth {BANDWIDTH:g} B/s; flat rate {RATE:g} flop/s")
    print(f"{'N':>6} {'NB':>4} {'P':>3} {'Q':>3} {'sim d0':>10} {'sim d1':>10} {'Thpl':>10} "
          f"{'phases':>10} {'d0/Thpl':>8} {'d0/phases':>9} {'host s':>7}")
    for n in sizes:
        for nb in nbs:
            for p, q in grids:
                t = time.perf_counter()
                d0, d1 = simulate(n, nb, p, q, 0), simulate(n, nb, p, q, 1)
                model = hpl_time(n, nb, p, q, alpha, beta, gamma)
                phases = hpl_time_phases(n, nb, p, q, alpha, beta, gamma)
                print(f"{n:>6} {nb:>4} {p:>3} {q:>3} {d0:>10.4f} {d1:>10.4f} {model:>10.4f} "
                      f"{phases:>10.4f} {d0 / model:>8.3f} {d0 / phases:>9.3f} "
                      f"{time.perf_counter() - t:>7.1f}")


if __name__ == "__main__":
    main()
