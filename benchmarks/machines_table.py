"""Every skeleton on every machine preset: predicted time, achieved fraction of peak, kernels.

One small case per skeleton (the same on every machine), run as ``bsim run SKELETON
--machine M`` would: the machine's network, collectives and compute times
(``bsim/machines/kernels.py``).  A cell that cannot run says what the machine file
lacks.

    python benchmarks/machines_table.py [--skeletons halo2d,sweep3d,hpl,milc_cg,...]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bsim.cli import options  # noqa: E402
from bsim.cli.targets import load_target  # noqa: E402
from bsim.machines import list_machines  # noqa: E402
from bsim.simulate import simulate  # noqa: E402

CASES = {
    "halo2d": {"px": 8, "py": 8, "nx": 2048, "ny": 2048, "iterations": 10},
    "sweep3d": {"px": 8, "py": 8, "nx": 64, "ny": 64, "nz": 100},
    "hpl": {"n": 8000, "nb": 128, "p": 4, "q": 4, "verbose": False},
    "milc_cg": {"nx": 16, "ny": 16, "nz": 16, "nt": 16, "niters": 10},
    "milc_rmd": {"nx": 16, "ny": 16, "nz": 16, "nt": 16},
    "phase": {"ne": 64, "nf": 4096, "pb": 4, "pf": 8, "verbose": False},
    "sage": {"cells": 13500, "cycles": 1},
    "dns3d": {"nx": 128, "ny": 128, "nz": 128, "px": 4, "pz": 4},
}
RANKS = 64   # for skeletons whose parameters do not fix the rank count (sage)


def run(skeleton: str, machine: str) -> str:
    try:
        target = load_target(skeleton, dict(CASES[skeleton]), None, machine)
        ns = argparse.Namespace(network=None, machine=machine, collectives=None, collective=[])
        res = simulate(target.main, target.ranks or RANKS, network=target.network_for(
            options.network_spec(ns)), kwargs=target.params, name=skeleton,
            collectives=options.collectives(ns), machine=machine,
            kernel_model=target.kernel_model, flops=target.flops, protocol="bsim")
    except Exception as exc:   # noqa: BLE001 - a cell reports what is missing
        return f"{skeleton:<9} {machine:<16} -- {str(exc)[:110]}"
    share = f"{res.flops / res.elapsed / res.peak_flops:7.1%}" if res.peak_flops else "      -"
    return (f"{skeleton:<9} {machine:<16} {res.elapsed:>12.6g} {share}  "
            f"{target.kernel_model[:100]}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skeletons", default=",".join(CASES))
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    print(f"{'skeleton':<9} {'machine':<16} {'predicted s':>12} {'of peak':>7}  kernel model")
    for skeleton in args.skeletons.split(","):
        for machine in list_machines():
            print(run(skeleton, machine), flush=True)
    print(f"host time {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
