"""Every model level's accuracy against SimGrid SMPI and its host time (the default's choice).

Levels: the BSIM paper's rules (``bsim``), ``loggp``, ``loggops`` and SMPI's point-to-point
rule (``bsim.validation.smpi.SMPI_PROTOCOL``), each without contention and with fluid
contention (``fluid``; SMPI's ``share=latency,start=after_latency`` for the SMPI rule).
Accuracy: halo2d, the KBA sweep and a recursive-doubling allreduce (analytic and algorithmic
collectives) against SMPI on star, torus and 4-ary fat-tree platforms
(``bsim.validation.smpi``).  Host time: CPU seconds of ``simulate()`` (``time.process_time``,
insensitive to other processes on the machine) on the same programs and on ``milc_cg``.

    python benchmarks/model_levels.py [--ranks 256,1024] [--host-ranks 1024,4096]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bsim  # noqa: E402
from bsim.validation.programs import PROGRAMS  # noqa: E402
from bsim.validation.smpi import (SMPI_CONTENTION, SMPI_PROTOCOL, Platform,  # noqa: E402
                                  available, run_smpi)

LEVELS = {   # name: (protocol, contention)
    "bsim": ("bsim", None), "bsim+fluid": ("bsim", "fluid"),
    "loggp": ("loggp", None), "loggp+fluid": ("loggp", "fluid"),
    "loggops": ("loggops", None), "loggops+fluid": ("loggops", "fluid"),
    "smpi-p2p": (SMPI_PROTOCOL, None), "smpi": (SMPI_PROTOCOL, SMPI_CONTENTION),
}
CASES = {"halo2d": (200000, 2, 1e-5), "sweep": (50000, 1, 1e-5),
         "allreduce": (8192 * 16, 3, 1e-5)}
SHAPES = {256: ((8, 8, 4), 4), 1024: ((16, 8, 8), 5), 4096: ((16, 16, 16), 6), 64: ((4, 4, 4), 3),
          16: ((4, 4), 2)}


def platforms(n: int) -> list[Platform]:
    dims, levels = SHAPES[n]
    return [Platform("star", n, lat=5e-7, bw=2e9), Platform("torus", n, dims=dims, lat=2e-7, bw=5e9),
            Platform("fattree", n, dims=(4, levels), lat=2e-7, bw=5e9)]


def run(prog: str, plat: Platform, n: int, level: str, collectives: str | None) -> tuple[float, float]:
    protocol, contention = LEVELS[level]
    t0 = time.process_time()
    res = bsim.simulate(PROGRAMS[prog], ranks=n, network=plat.bsim_network(), protocol=protocol,
                        contention=contention, collectives=collectives, args=CASES[prog])
    return float(res.elapsed), time.process_time() - t0


def milc(n: int, level: str) -> float:
    from bsim.cli.targets import load_target
    protocol, contention = LEVELS[level]
    target = load_target("milc_cg", {"nprocs": n, "niters": 5, "nx": 64, "ny": 64, "nz": 64,
                                     "nt": 64})
    t0 = time.process_time()
    bsim.simulate(target.main, ranks=n, kwargs=target.kwargs, protocol=protocol,
                  contention=contention, network=platforms(n)[1].bsim_network())
    return time.process_time() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", default="256,1024")
    ap.add_argument("--host-ranks", default="1024,4096")
    ap.add_argument("--levels", default=",".join(LEVELS))
    args = ap.parse_args(argv)
    levels = args.levels.split(",")
    if not available():
        print("SimGrid SMPI not installed: apt-get install libsimgrid-dev")
        return 1
    print("accuracy: (bsim - SMPI) / SMPI; host: CPU seconds of simulate()")
    for n in map(int, args.ranks.split(",")):
        for prog in CASES:
            algos = ([None, "algorithmic:allreduce=recursive_doubling"] if prog == "allreduce"
                     else [None])
            cfg = ("smpi/allreduce:rdb",) if prog == "allreduce" else ()
            for plat in platforms(n):
                ref = run_smpi(prog, plat, n, *CASES[prog], cfg=cfg).time
                for coll in algos:
                    row = []
                    for level in levels:
                        t, host = run(prog, plat, n, level, coll)
                        row.append(f"{level}={(t - ref) / ref:+.2%}/{host:.2f}s")
                    tag = "alg" if coll else "ana"
                    print(f"{prog:<9} {plat.kind:<7} {n:>5} {tag} SMPI={ref:.6e} "
                          + " ".join(row), flush=True)
    for n in map(int, args.host_ranks.split(",")):
        plat = platforms(n)[1]
        for prog in CASES:
            row = [f"{level}={run(prog, plat, n, level, None)[1]:.2f}s" for level in levels]
            print(f"host {prog:<9} torus {n:>5} " + " ".join(row), flush=True)
        print(f"host milc_cg   torus {n:>5} "
              + " ".join(f"{level}={milc(n, level):.2f}s" for level in levels), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
