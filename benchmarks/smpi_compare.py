"""bsim against SimGrid SMPI on the same skeletons and platforms, side by side.

For each program on star, torus and fat-tree platforms of 16 to 4,096 ranks:
SMPI's and bsim's predicted times, their difference, and for both host wall
time, MPI calls per host second (the program's calls, counted by bsim, over
each simulator's wall time) and peak RSS, runs alternated in one sitting
(peak RSS: the running maximum over the runs so far, from getrusage).  bsim
runs with the setting that models SMPI's physics
(``bsim.validation.smpi.SMPI_PROTOCOL`` and ``SMPI_CONTENTION``); allreduce
uses recursive doubling in both (``smpi/allreduce:rdb``,
``algorithmic:allreduce=recursive_doubling``).

    python benchmarks/smpi_compare.py [--max-ranks 4096] [--programs ring,halo2d]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bsim.validation.smpi import Platform, available, run_bsim, run_smpi  # noqa: E402

SIZES = [(16, (4, 4), 2), (64, (4, 4, 4), 3), (256, (8, 8, 4), 4), (1024, (16, 8, 8), 5),
         (4096, (16, 16, 16), 6)]   # ranks, torus dims, levels of the 4-ary fat-tree
CASES = {"pingpong": (200000, 3, 0.0), "ring": (1000, 5, 1e-5), "halo2d": (50000, 3, 1e-4),
         "sweep": (50000, 1, 1e-5), "allreduce": (8192, 5, 1e-5)}
ALLREDUCE = ({"cfg": ("smpi/allreduce:rdb",)},
             {"collectives": "algorithmic:allreduce=recursive_doubling"})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-ranks", type=int, default=4096)
    ap.add_argument("--programs", default=",".join(CASES))
    args = ap.parse_args(argv)
    if not available():
        print("SimGrid SMPI not installed: apt-get install libsimgrid-dev")
        return 1
    print(f"{'program':<9} {'platform':<8} {'ranks':>5} {'SMPI s':>12} {'bsim s':>12} "
          f"{'diff':>8} {'SMPI wall':>9} {'bsim wall':>9} {'SMPI call/s':>11} "
          f"{'bsim call/s':>11} {'SMPI MiB':>8} {'bsim MiB':>8}")
    for prog in args.programs.split(","):
        smpi_kw, bsim_kw = ALLREDUCE if prog == "allreduce" else ({}, {})
        for nranks, dims, levels in SIZES:
            if nranks > args.max_ranks:
                continue
            for plat in (Platform("star", nranks), Platform("torus", nranks, dims=dims),
                         Platform("fattree", nranks, dims=(4, levels))):
                smpi = run_smpi(prog, plat, nranks, *CASES[prog], **smpi_kw)
                ours = run_bsim(prog, plat, nranks, *CASES[prog], **bsim_kw)
                diff = (ours.time - smpi.time) / smpi.time
                print(f"{prog:<9} {plat.kind:<8} {nranks:>5} {smpi.time:>12.6e} "
                      f"{ours.time:>12.6e} {diff:>+8.3%} {smpi.wall:>8.2f}s {ours.wall:>8.2f}s "
                      f"{ours.calls / smpi.wall:>11.3g} {ours.calls / ours.wall:>11.3g} "
                      f"{smpi.rss_mib:>8.0f} {ours.rss_mib:>8.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
