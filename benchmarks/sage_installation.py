"""SAGE on ASCI Q (ES45 + QsNet): cycle time against processor count, one and two rails.

The installation paper (Sec. 5, Fig. 4) predicted SAGE's cycle time on the ES45
system for 33 and 66 MHz PCI buses and one or two Quadrics rails, weak scaling.
bsim runs the ``sage`` skeleton (``E = 13,500`` cells per processor, the
tutorial's example; ``t_cell`` from the ES45 preset, ASSUMED) on the preset's
quaternary fat-tree (``es45:fattree``: 4 processors per node, 340 MB/s and 5 us,
messages on rail ``core % rails``, not striped) with fluid contention, so the
out-of-node contention of the Z boundary exchanges comes from the links.  Beside
it, the papers' analytic model with the Z term multiplied by the processors of a
node communicating off the node at once, ``min(PED, 4)``, divided by the rails.

Table 3's PCI figures are garbled in the text (``docs/machines.md``), so the 33 vs
66 MHz comparison is not reproduced; both columns use the preset's network.

    python benchmarks/sage_installation.py [--max-procs 512] [--png FILE]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _figure import line_figure  # noqa: E402

import bsim  # noqa: E402
from bsim.machines import load_machine, network_spec  # noqa: E402
from skeletons.models import sage as model  # noqa: E402
from skeletons.sage import main as sage  # noqa: E402

CELLS = 13500
PROCS = [8, 16, 32, 48, 64, 128, 256, 512, 1024]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-procs", type=int, default=512)
    ap.add_argument("--png", default=None, help="write the figure here")
    args = ap.parse_args(argv)
    es45 = load_machine("es45")
    t_cell = float(es45.kernels["sage"]["t_cell"])
    net = es45.network
    lat, bw = float(net["latency"]), float(net["bandwidth"])

    def m(nbytes: float) -> float:
        return lat + nbytes / bw

    base = network_spec("es45:fattree")
    print(f"SAGE, E = {CELLS} cells per processor, t_cell = {t_cell:g} s, on {base}")
    print(f"{'P':>5} {'foils':>6} {'PED':>4} {'bsim 1 rail':>12} {'bsim 2 rails':>13} "
          f"{'model 1':>9} {'model 2':>9} {'2 rails gain':>12} {'host s':>7}")
    t0 = time.perf_counter()
    table: dict[str, list[float]] = {"bsim, 1 rail": [], "bsim, 2 rails": [],
                                     "model, 1 rail": [], "model, 2 rails": []}
    procs_list = [p for p in PROCS if p <= args.max_procs]
    for procs in procs_list:
        geo = model.slab_geometry(CELLS, procs)
        row = []
        wall = time.perf_counter()
        for rails in (1, 2):
            res = bsim.simulate(sage, procs, network=base.replace("rails=2", f"rails={rails}"),
                                contention="fluid",
                                kwargs=dict(cells=CELLS, cycles=1, t_cell=t_cell), protocol="bsim")
            row.append(res.elapsed)
        wall = time.perf_counter() - wall
        mod = [model.cycle_time(CELLS, procs, m, t_cell=t_cell, allreduces=3,
                                c=0.0, d=m(8),
                                z_contention=max(1.0, model.out_of_node(geo.ped, 4) / rails))
               for rails in (1, 2)]
        for key, value in zip(table, row + mod, strict=True):
            table[key].append(value)
        print(f"{procs:>5} {geo.foils:>6.2f} {geo.ped:>4} {row[0]:>12.4f} {row[1]:>13.4f} "
              f"{mod[0]:>9.4f} {mod[1]:>9.4f} {1 - row[1] / row[0]:>12.1%} {wall:>7.1f}",
              flush=True)
    print(f"host time {time.perf_counter() - t0:.1f} s")
    if args.png:
        line_figure(args.png, procs_list, table, xlabel="processors",
                    ylabel="SAGE cycle time (s)",
                    title=f"SAGE on the ES45 fat-tree, E = {CELLS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
