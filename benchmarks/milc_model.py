"""MILC skeletons against the MILC paper's model: BG/P at P = 64, 2048 and 4096.

Weak scaling at V = 8^4 sites per rank (MILC's balanced grids: 32x32x16x16 on
4x4x2x2, 64x64x64x32 on 8x8x8x4, 64^4 on 8x8x8x8), f = 4 bytes, the BG/P
kernel table, and per P the preset's effective Hockney fit (``network_spec
("bgp", "pN")``, the MILC paper Sec. IV-A).  The MILC paper gives no allreduce fit for
BG/P: we ASSUME ``c = 0`` and ``d`` = one 16-byte message on the preset's
nearest-neighbour network (9.8 us + 16 B / 562.5 MiB/s), passed as
``clog:allreduce.c=..,allreduce.d=..``.

Prints, per P and skeleton, the model (Eq. 5, or ``cg_time`` for milc_cg),
the simulated time, the relative error and the host seconds.

    python benchmarks/milc_model.py [--quick] [--niters N]

``--quick`` runs P = 64 only.  The full run takes a few minutes (milc_rmd
sends ~3,700 messages per rank for one MD step).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bsim  # noqa: E402
from bsim.machines import load_machine, network_spec  # noqa: E402
from skeletons.milc import balanced_grid, cg_main, rmd_main  # noqa: E402
from skeletons.models import milc as model  # noqa: E402

LATTICES = {64: (32, 32, 16, 16), 2048: (64, 64, 64, 32), 4096: (64, 64, 64, 64)}


def bgp_allreduce(bgp) -> tuple[float, float]:
    """ASSUMED (c, d) for BG/P: c = 0, d = Hockney time of 16 bytes on [network]."""
    return 0.0, bgp.network["latency"] + 16 / bgp.network["bandwidth"]


def compare(nprocs: int, which: str, niters: int) -> tuple[float, float, float]:
    """(model seconds, simulated seconds, host seconds) for one case."""
    bgp = load_machine("bgp")
    lattice = LATTICES[nprocs]
    grid = balanced_grid(lattice, nprocs)
    ext = model.local_extents(lattice, grid)
    variant = bgp.network_variants[f"p{nprocs}"]
    m = model.hockney(variant["latency"], variant["bandwidth"])
    c, d = bgp_allreduce(bgp)
    kw = dict(nx=lattice[0], ny=lattice[1], nz=lattice[2], nt=lattice[3], niters=niters,
              machine="bgp")
    if which == "milc_cg":
        main, kw["invocations"] = cg_main, 2
        expected = model.cg_time(bgp.kernels["milc"]["CG"], m, niters, nprocs, c, d, calls=2,
                                 extents=ext, grid=grid)
    else:
        main = rmd_main
        kw.update(trajecs=1, warms=0, steps=1, meas=1)
        expected = model.total_time(bgp.kernels["milc"], m, model.MilcRun(niters=niters),
                                    nprocs, c, d, extents=ext, grid=grid)
    t0 = time.perf_counter()
    res = bsim.simulate(main, nprocs, network=network_spec(bgp, f"p{nprocs}"),
                        collectives=f"clog:allreduce.c={c!r},allreduce.d={d!r}", kwargs=kw,
                        protocol="bsim")
    return expected, res.elapsed, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="P = 64 only")
    ap.add_argument("--niters", type=int, default=50, help="CG iterations in all (default 50)")
    ns = ap.parse_args(argv)
    sizes = [64] if ns.quick else [64, 2048, 4096]
    print(f"BG/P, V = 8^4 per rank, f = 4, niters = {ns.niters} "
          f"(milc_cg: 2 invocations; milc_rmd: trajecs=1 steps=1 meas=1)")
    print(f"{'P':>5} {'skeleton':<9} {'grid':<10} {'model [s]':>14} {'sim [s]':>14} "
          f"{'error':>10} {'host [s]':>9}")
    for nprocs in sizes:
        for which in ("milc_cg", "milc_rmd"):
            expected, got, host = compare(nprocs, which, ns.niters)
            grid = "x".join(map(str, balanced_grid(LATTICES[nprocs], nprocs)))
            print(f"{nprocs:>5} {which:<9} {grid:<10} {expected:>14.9f} {got:>14.9f} "
                  f"{got / expected - 1:>+10.2e} {host:>9.1f}", flush=True)


if __name__ == "__main__":
    main()
