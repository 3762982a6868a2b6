"""Instructions a rank and iteration of the hot path's loops, counted by valgrind's callgrind.

CPU seconds on a shared machine move by up to 2x between runs of one tree; an instruction
count does not move, so a change to the hot path is measured here first (and in CPU seconds
by ``engine_speed.py --sitting-only``, whose ratios to SimPy and to the floor are the
targets).  Each workload runs at 1,024 ranks for 4 and for 8 iterations under
``valgrind --tool=callgrind``; the difference divided by 4 x 1,024 is the loop's cost a
rank and iteration, without the set-up.  ``OPENBLAS_NUM_THREADS=1``: BLAS's waiting threads
would add instructions at random, and ``PYTHONHASHSEED=0`` fixes the
string hashes (dictionary probes move with them).

* ``halo``: ``skeletons.halo2d.main`` (4 ``Irecv``, 4 ``Isend``, ``Waitall``, ``add_time``);
* ``sendrecv``: ``engine_speed.halo_sendrecv`` (four ``Sendrecv``, ``add_time``);
* ``halo-py``: the halo with ``BSIM_PURE_PYTHON=1`` (the hot path as Python);
* ``collectives``: ``engine_speed.grid_collectives`` (HPL's ``Ibcast`` on a process row and
  ``Allgather`` on a column, ``Wait``, ``add_time``);
* ``barrier``, ``ibcast``, ``allgather``: ``engine_speed.one_collective``, one of those
  calls alone (``Ibcast`` with its ``Wait``) and ``add_time``, on the same grid;
* ``hpl``: ``skeletons.hpl`` on a 32 x 32 process grid of the petascale torus with the
  settings of ``hpl_petascale.py``, a rank and *panel* (N of 32 panels less 16): the
  skeleton's own Python with its collectives, as the petascale run spends it.

``--against TREE`` counts the same workloads (this checkout's ``engine_speed.py``; the
skeletons are the tree's) with another checkout of bsim (a ``git worktree`` with its
extensions built: ``python setup.py build_ext --inplace``) and prints the ratio.  Needs
``valgrind`` (Debian: ``apt-get install valgrind``); about 20-40 s a count.

    python benchmarks/hot_path_instructions.py [--workloads halo,sendrecv,halo-py,hpl,...]
                                               [--against TREE]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
SIDE = 32                      # 32 x 32 = 1,024 ranks
PANELS = 4                     # hpl: panels an iteration (16 and 32 panels)
WORKLOADS = ("halo", "sendrecv", "halo-py", "collectives", "barrier", "ibcast", "allgather",
             "hpl")
NETWORK = "hockney:latency=1e-6,bandwidth=1e10"
CHILD = """
import sys
sys.path[:0] = [{tree!r}, {bench!r}]   # bsim from the tree, the workloads from here
import bsim
network = {network!r}
if {mode!r} == "sendrecv":
    from engine_speed import halo_sendrecv as program
    kwargs = dict(px={side}, py={side}, iterations={iters})
elif {mode!r} == "collectives":
    from engine_speed import grid_collectives as program
    kwargs = dict(px={side}, py={side}, iterations={iters})
elif {mode!r} in ("barrier", "ibcast", "allgather"):
    from engine_speed import one_collective as program
    kwargs = dict(px={side}, py={side}, iterations={iters}, call={mode!r})
elif {mode!r} == "hpl":
    from bsim.machines import network_spec
    from skeletons.hpl import main as program
    network = network_spec("petascale_torus")
    kwargs = dict(n={panels} * 512, nb=512, p={side}, q={side}, kernel="petascale_torus",
                  pivot="panel", swap="allgatherv", bcast="ibcast", verbose=False)
else:
    from skeletons.halo2d import main as program
    kwargs = dict(px={side}, py={side}, nx=64 * {side}, ny=64 * {side}, iterations={iters})
res = bsim.simulate(program, ranks={side} * {side}, network=network, protocol="bsim",
                    check_memory=False, kwargs=kwargs)
print(res.total_ops, repr(res.elapsed))
"""


def count(tree: Path, mode: str, iters: int) -> tuple[int, str]:
    """Instructions of one run (callgrind's total) and what the run printed."""
    code = CHILD.format(tree=str(tree), mode=mode, side=SIDE, iters=iters, network=NETWORK,
                        panels=PANELS * iters, bench=str(HERE / "benchmarks"))
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", PYTHONHASHSEED="0", PYTHONPATH=str(tree),
               BSIM_PURE_PYTHON="1" if mode == "halo-py" else "")
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(["valgrind", "--tool=callgrind",
                              f"--callgrind-out-file={tmp}/cg.out", sys.executable, "-c", code],
                             capture_output=True, text=True, env=env, cwd=tree, check=True)
    m = re.search(r"Collected : (\d+)", out.stderr)
    if m is None:
        raise SystemExit(f"callgrind gave no count for {mode} in {tree}:\n{out.stderr[-2000:]}")
    return int(m.group(1)), out.stdout.strip()


def per_rank_iteration(tree: Path, mode: str) -> tuple[float, str]:
    """The loop's instructions a rank and iteration (8 iterations less 4), and the
    8-iteration run's operations and predicted time (the same in any tree that predicts
    the same)."""
    four, _ = count(tree, mode, 4)
    eight, printed = count(tree, mode, 8)
    return (eight - four) / (4 * SIDE * SIDE * (PANELS if mode == "hpl" else 1)), printed


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--workloads", default="halo,sendrecv,halo-py",
                    help="comma-separated: " + ", ".join(WORKLOADS) + " (default the first "
                         "three)")
    ap.add_argument("--against", type=Path, help="another bsim checkout to count and compare")
    ns = ap.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind not found (Debian: apt-get install valgrind)")
    modes = ns.workloads.split(",")
    bad = set(modes) - set(WORKLOADS)
    if bad:
        ap.error(f"--workloads: unknown {', '.join(sorted(bad))}")
    trees = [HERE] + ([ns.against.resolve()] if ns.against else [])
    print(f"instructions a rank and iteration, {SIDE * SIDE:,} ranks (callgrind; 8 iterations "
          f"less 4; hpl: a rank and panel, {8 * PANELS} panels less {4 * PANELS})")
    print(f"{'workload':>9} " + " ".join(f"{str(t)[-24:]:>24}" for t in trees)
          + ("   this / other" if ns.against else ""), flush=True)
    for mode in modes:
        counts = [per_rank_iteration(t, mode) for t in trees]
        line = f"{mode:>9} " + " ".join(f"{c:>24,.0f}" for c, _ in counts)
        if ns.against:
            line += f"   {counts[0][0] / counts[1][0]:.3f}"
            if counts[0][1] != counts[1][1]:
                line += f"  (the predictions differ: {counts[0][1]} / {counts[1][1]})"
        print(line, flush=True)


if __name__ == "__main__":
    main()
