"""DNS3D weak scaling after the tutorial's validation set-up, and its Blue Waters projection.

The modeling tutorial ("Validation to 512 Cores"): ``V = 128^3`` grid points per
core, power-of-two core counts, ``p_x`` and ``p_z`` doubled in turn, and
``n_x, n_y, n_z`` doubled in turn (so the pencils get longer and narrower with
scale).  bsim runs the ``dns3d`` skeleton on

* a 4-core-node InfiniBand cluster like the tutorial's testbed (Hockney 5 us,
  1 GB/s: 4x SDR InfiniBand, ASSUMED end-point figures; the tutorial prints none),
  NICs shared by a node's cores (``twolevel`` + fluid contention);
* Blue Waters (``bluewaters`` preset: the tutorial's W/LI/Lr/D links and striping;
  1 supernode = 1,024 cores) with fluid contention;

with ``t_flop = 1 ns`` per FFT flop and ``T_RK = 50 ns`` per point (ASSUMED), one
iteration, and prints the iteration time, its compute part ``T_comp`` (each
direction's 1-D FFTs counted as the decomposition performs them,
:mod:`skeletons.models.dns3d`) beside the tutorial's literal ``T_comp`` (``N_pencils``
FFTs in every direction: it zig-zags on the two grids in three that are not cubic),
and the model (no contention).

    python benchmarks/dns3d_scaling.py [--max-cores 512] [--png FILE]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _figure import line_figure  # noqa: E402

import bsim  # noqa: E402
from bsim.machines import network_spec  # noqa: E402
from skeletons.dns3d import main as dns3d  # noqa: E402
from skeletons.models import dns3d as model  # noqa: E402

CLUSTER = ("twolevel:cores=4,nics=1,inter=hockney:latency=5e-6;bandwidth=1e9,"
           "intra=hockney:latency=1e-6;bandwidth=4e9")
T_FLOP, T_RK = 1e-9, 50e-9


def setups(max_cores: int) -> list[tuple[int, tuple[int, int, int], int, int]]:
    """``(cores, grid, px, pz)``: 128^3 per core, grid and process grid doubled in turn."""
    out, grid, p = [], [128, 128, 128], [1, 1]
    cores = 1
    while cores <= max_cores:
        out.append((cores, (grid[0], grid[1], grid[2]), p[0], p[1]))
        step = len(out) - 1
        grid[step % 3] *= 2
        p[step % 2] *= 2
        cores *= 2
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-cores", type=int, default=512)
    ap.add_argument("--png", default=None, help="write the figure here")
    args = ap.parse_args(argv)
    print(f"t_flop {T_FLOP:g} s, T_RK {T_RK:g} s per point; cluster {CLUSTER}; "
          f"Blue Waters {network_spec('bluewaters')[:60]}...")
    print(f"{'cores':>5} {'grid':>15} {'px x pz':>8} {'T_comp s':>9} {'literal s':>9} "
          f"{'cluster s':>10} {'BW s':>8} {'model s':>8} {'host s':>7}")
    xs: list[int] = []
    table: dict[str, list[float]] = {"T_comp": [], "IB cluster": [], "Blue Waters": [],
                                     "model (no contention)": []}
    for cores, grid, px, pz in setups(args.max_cores):
        if cores < 4:
            continue
        t0 = time.perf_counter()
        kw = dict(nx=grid[0], ny=grid[1], nz=grid[2], px=px, pz=pz, t_flop=T_FLOP, t_rk=T_RK)
        times = [bsim.simulate(dns3d, cores, network=net, contention="fluid", kwargs=kw,
                               protocol="bsim").elapsed
                 for net in (CLUSTER, network_spec("bluewaters"))]

        def m(nbytes: float) -> float:
            return 5e-6 + nbytes / 1e9

        comp = model.compute_time(grid, px, pz, T_FLOP, T_RK)
        literal = model.tutorial_compute_time(grid, px, pz, T_FLOP, T_RK)
        mod = model.iteration_time(grid, px, pz, m, t_flop=T_FLOP, t_rk=T_RK)
        xs.append(cores)
        for key, value in zip(table, [comp, *times, mod], strict=True):
            table[key].append(value)
        print(f"{cores:>5} {'x'.join(map(str, grid)):>15} {f'{px}x{pz}':>8} {comp:>9.3f} "
              f"{literal:>9.3f} {times[0]:>10.3f} {times[1]:>8.3f} {mod:>8.3f} "
              f"{time.perf_counter() - t0:>7.1f}",
              flush=True)
    if args.png:
        line_figure(args.png, xs, table, xlabel="cores", ylabel="seconds per step",
                    title="DNS3D weak scaling, 128^3 per core (tutorial set-up)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
