"""bsim against SimGrid SMPI on the same skeletons and platforms, side by side.

For each program and platform size: SMPI's and bsim's predicted times, their
difference, and host wall time and peak RSS of both, runs alternated in one
sitting (peak RSS: the running maximum over the runs so far, from getrusage).  bsim
runs with the setting that models SMPI's physics
(``bsim.validation.smpi.SMPI_PROTOCOL``, ``--contention fluid``).

    python benchmarks/smpi_compare.py [--max-ranks 4096] [--programs ring,halo2d]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bsim.validation.smpi import Platform, available, run_bsim, run_smpi  # noqa: E402

SIZES = [(16, (4, 4)), (64, (4, 4, 4)), (256, (8, 8, 4)), (1024, (16, 8, 8)),
         (4096, (16, 16, 16))]
CASES = {"pingpong": (200000, 3, 0.0), "ring": (1000, 5, 1e-5), "halo2d": (50000, 3, 1e-4)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-ranks", type=int, default=4096)
    ap.add_argument("--programs", default=",".join(CASES))
    args = ap.parse_args(argv)
    if not available():
        print("SimGrid SMPI not installed: apt-get install libsimgrid-dev")
        return 1
    print(f"{'program':<9} {'platform':<8} {'ranks':>5} {'SMPI s':>13} {'bsim s':>13} "
          f"{'diff':>8} {'SMPI wall':>9} {'bsim wall':>9} {'SMPI MiB':>8} {'bsim MiB':>8}")
    for prog in args.programs.split(","):
        for nranks, dims in SIZES:
            if nranks > args.max_ranks:
                continue
            for plat in (Platform("star", nranks), Platform("torus", nranks, dims=dims)):
                smpi = run_smpi(prog, plat, nranks, *CASES[prog])
                ours = run_bsim(prog, plat, nranks, *CASES[prog])
                diff = (ours.time - smpi.time) / smpi.time
                print(f"{prog:<9} {plat.kind:<8} {nranks:>5} {smpi.time:>13.6e} "
                      f"{ours.time:>13.6e} {diff:>+8.3%} {smpi.wall:>8.2f}s {ours.wall:>8.2f}s "
                      f"{smpi.rss_mib:>8.0f} {ours.rss_mib:>8.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
