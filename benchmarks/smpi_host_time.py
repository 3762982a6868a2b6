"""Host time of the SMPI setting against the ``bsim`` level on the nine accuracy cases and MILC.

The nine cases of ``benchmarks/model_levels.py`` whose host time decides the default model
level (halo2d, the KBA sweep and a recursive-doubling allreduce with algorithmic
collectives, on star, torus and fat-tree) and ``milc_cg`` on the torus, at 1,024 ranks:
CPU seconds of ``simulate()`` (``time.process_time``) per level, the sum of the nine and its
ratio to the ``bsim`` level's, and each prediction's ``repr`` (for checking that two
builds give the same floats bit for bit).  It imports the installed ``bsim``, so the same
file measures any checkout by running it with that checkout's interpreter; alternate the
builds in one sitting, the machine being shared.

    python benchmarks/smpi_host_time.py [--ranks 1024] [--levels bsim,smpi] [--no-milc]
                                        [--repeat K]

``--repeat K`` runs each case K times, the levels in turn, and keeps each level's least CPU
time: interference from other processes only ever adds to a run's CPU time, so the least
is the steadiest estimate on a shared machine.
"""

from __future__ import annotations

import argparse
import sys
import time

import bsim
from bsim.validation.programs import PROGRAMS
from bsim.validation.smpi import SMPI_CONTENTION, SMPI_PROTOCOL, Platform

LEVELS = {"bsim": ("bsim", None), "smpi": (SMPI_PROTOCOL, SMPI_CONTENTION)}
CASES = {"halo2d": ((200000, 2, 1e-5), None), "sweep": ((50000, 1, 1e-5), None),
         "allreduce": ((8192 * 16, 3, 1e-5), "algorithmic:allreduce=recursive_doubling")}
SHAPES = {256: ((8, 8, 4), 4), 1024: ((16, 8, 8), 5), 4096: ((16, 16, 16), 6)}


def platforms(n: int) -> list[Platform]:
    """Star, torus and fat-tree of *n* ranks, as ``benchmarks/model_levels.py`` builds them."""
    dims, levels = SHAPES[n]
    return [Platform("star", n, lat=5e-7, bw=2e9),
            Platform("torus", n, dims=dims, lat=2e-7, bw=5e9),
            Platform("fattree", n, dims=(4, levels), lat=2e-7, bw=5e9)]


def case(prog: str, plat: Platform, n: int, level: str) -> tuple[float, float]:
    """(prediction, CPU seconds of simulate()) of *prog* on *plat* at *level*."""
    protocol, contention = LEVELS[level]
    args, collectives = CASES[prog]
    t0 = time.process_time()
    res = bsim.simulate(PROGRAMS[prog], ranks=n, network=plat.bsim_network(), protocol=protocol,
                        contention=contention, collectives=collectives, args=args)
    return float(res.elapsed), time.process_time() - t0


def milc(n: int, level: str) -> tuple[float, float]:
    """(prediction, CPU seconds) of ``milc_cg`` (64^4, 5 iterations) on the torus."""
    from bsim.cli.targets import load_target
    protocol, contention = LEVELS[level]
    target = load_target("milc_cg", {"nprocs": n, "niters": 5, "nx": 64, "ny": 64, "nz": 64,
                                     "nt": 64})
    t0 = time.process_time()
    res = bsim.simulate(target.main, ranks=n, kwargs=target.kwargs, protocol=protocol,
                        contention=contention, network=platforms(n)[1].bsim_network())
    return float(res.elapsed), time.process_time() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=1024)
    ap.add_argument("--levels", default="bsim,smpi")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--no-milc", action="store_true")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args(argv)
    n = args.ranks
    levels = args.levels.split(",")
    sums = dict.fromkeys(levels, 0.0)
    for prog in args.cases.split(","):
        for plat in platforms(n):
            best = {level: (0.0, float("inf")) for level in levels}
            for _ in range(args.repeat):
                for level in levels:
                    t, host = case(prog, plat, n, level)
                    best[level] = (t, min(host, best[level][1]))
            row = []
            for level, (t, host) in best.items():
                sums[level] += host
                row.append(f"{level}={host:.2f}s ({t!r})")
            print(f"{prog:<9} {plat.kind:<7} {n:>5} " + " ".join(row), flush=True)
    base = sums.get("bsim")
    print("sum              " + " ".join(
        f"{level}={s:.2f}s" + (f" ({s / base:.2f}x)" if base else "")
        for level, s in sums.items()), flush=True)
    if not args.no_milc:
        row = []
        for level in levels:
            t, host = milc(n, level)
            row.append(f"{level}={host:.2f}s ({t!r})")
        print(f"milc_cg   torus   {n:>5} " + " ".join(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
