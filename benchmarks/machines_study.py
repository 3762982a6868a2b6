"""Today's machines against BG/P: halo2d, milc_cg and dns3d weak-scaled from 64 to 16,384 ranks.

One command per machine runs the three skeletons at 64, 256, 1,024, 4,096 and 16,384
ranks with the machine's own network, node layer and compute model (the generic roofline
or its kernel table; ``docs/machines.md``) and writes ``docs/data/machines_study_<M>.json``::

    python benchmarks/machines_study.py --machine frontier [--max-ranks 4096]
    python benchmarks/machines_study.py --machine dgx_h100
    python benchmarks/machines_study.py --machine fugaku
    python benchmarks/machines_study.py --machine bgp
    python benchmarks/machines_study.py --report [--png docs/data/machines_study.png]

``--report`` prints the table of every machine's file found (elapsed time, and the share
of it that is compute) and draws the figure.  Work per rank is fixed (weak scaling):

* halo2d: a 2,048 x 2,048 block a rank, ``px = py = sqrt(P)``, 10 sweeps;
* milc_cg: an 8^4 local lattice, 20 CG iterations;
* dns3d: 2^18 grid points a rank (64^3 at 64 ranks: 256^3), ``px = pz = sqrt(P)``, the
  grid doubled in turn as the tutorial's validation set-up, one step.

Runs take ``--contention`` (default none: the uncontended prices; ``fluid`` shares links,
NICs included, and is slower to simulate) and the default ``bsim`` protocol, given
explicitly.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RANKS = (64, 256, 1024, 4096, 16384)
SKELETONS = ("halo2d", "milc_cg", "dns3d")
DATA = ROOT / "docs" / "data"


def params(skeleton: str, ranks: int) -> dict[str, int]:
    """The weak-scaled case of *skeleton* on *ranks* (a power of 4) ranks."""
    side = math.isqrt(ranks)
    assert side * side == ranks and ranks & (ranks - 1) == 0, ranks
    if skeleton == "halo2d":
        return {"px": side, "py": side, "nx": 2048 * side, "ny": 2048 * side,
                "iterations": 10}
    if skeleton == "milc_cg":   # 8^4 a rank: the lattice's four sides doubled in turn
        sides = [8, 8, 8, 8]
        for i in range(int(math.log2(ranks))):
            sides[i % 4] *= 2
        return {"nx": sides[0], "ny": sides[1], "nz": sides[2], "nt": sides[3],
                "niters": 20}
    if skeleton == "dns3d":     # 2^18 points a rank; x and z, then y, doubled in turn
        exp = [6, 6, 6]         # 64^3
        for i in range(int(math.log2(ranks))):
            exp[(0, 2, 1)[i % 3]] += 1
        return {"nx": 2 ** exp[0], "ny": 2 ** exp[1], "nz": 2 ** exp[2], "px": side,
                "pz": side, "iterations": 1}
    raise ValueError(skeleton)


def run(machine: str, skeleton: str, ranks: int, contention: str | None) -> dict:
    """One prediction through ``bsim run`` (the command a user types): elapsed, mean
    calc/comm/wait, the kernel account and host seconds."""
    import tempfile

    from bsim.cli.main import main as bsim_main
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        args = ["run", skeleton, "--machine", machine, "--protocol", "bsim", "--quiet",
                "--json", str(out)]
        if skeleton == "milc_cg":
            args += ["-n", str(ranks)]
        if contention:
            args += ["--contention", contention]
        for key, value in params(skeleton, ranks).items():
            args += ["--param", f"{key}={value}"]
        t0 = time.perf_counter()
        status = bsim_main(args)
        seconds = time.perf_counter() - t0
        if status != 0:
            raise SystemExit(f"bsim {' '.join(args)}: exit {status}")
        data = json.loads(out.read_text())
    per_rank = data["per_rank"]
    mean = {k: sum(per_rank[k]) / len(per_rank[k]) for k in ("calc", "comm", "wait")}
    return {"machine": machine, "skeleton": skeleton, "ranks": ranks,
            "elapsed": data["elapsed"], **mean,
            "kernel_model": data.get("kernel_model", ""), "node": data.get("node", ""),
            "network": data["network"], "contention": data["contention"],
            "host_seconds": seconds}


def study(machine: str, max_ranks: int, contention: str | None,
          skeletons: tuple[str, ...] = SKELETONS) -> Path:
    """Run every case of *machine* up to *max_ranks*; write (and keep adding to) its file:
    a case already in it is not run again, so an interrupted study resumes."""
    out = DATA / f"machines_study_{machine}.json"
    rows = json.loads(out.read_text()) if out.exists() else []
    done = {(r["skeleton"], r["ranks"], r["contention"]) for r in rows}
    for ranks in [r for r in RANKS if r <= max_ranks]:
        for skeleton in skeletons:
            if (skeleton, ranks, contention or "none") in done:
                continue
            row = run(machine, skeleton, ranks, contention)
            rows = json.loads(out.read_text()) if out.exists() else []   # another run's too
            rows.append(row)
            print(f"{machine:>9} {skeleton:>8} {ranks:>6}: {row['elapsed'] * 1e3:10.4f} ms "
                  f"(compute {row['calc'] / row['elapsed']:6.1%}; host "
                  f"{row['host_seconds']:.0f} s)", flush=True)
            out.write_text(json.dumps(rows, indent=1) + "\n")
    return out


def report(png: str | None) -> None:
    """The table of every study file found, and the figure (elapsed against ranks)."""
    rows = [r for f in sorted(DATA.glob("machines_study_*.json"))
            for r in json.loads(f.read_text())]
    machines = sorted({r["machine"] for r in rows})
    print("| skeleton | ranks | " + " | ".join(machines) + " |")
    print("|---|---:|" + "---:|" * len(machines))
    for skeleton in SKELETONS:
        for ranks in RANKS:
            cells = []
            for m in machines:
                hit = [r for r in rows if (r["machine"], r["skeleton"], r["ranks"]) ==
                       (m, skeleton, ranks)]
                cells.append(f"{hit[0]['elapsed'] * 1e3:.4g} ms ({hit[0]['calc'] / hit[0]['elapsed']:.0%})"
                             if hit else "-")
            if any(c != "-" for c in cells):
                print(f"| {skeleton} | {ranks:,} | " + " | ".join(cells) + " |")
    if png:
        figure(rows, machines, png)


def figure(rows: list[dict], machines: list[str], png: str) -> None:
    """One PNG: a panel a skeleton, predicted time (log) against ranks (log 2)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no figure (pip install 'bsim[plot]')")
        return
    fig, axes = plt.subplots(1, len(SKELETONS), figsize=(12, 3.8))
    for ax, skeleton in zip(axes, SKELETONS):
        for m in machines:
            pts = sorted((r["ranks"], r["elapsed"] * 1e3) for r in rows
                         if r["machine"] == m and r["skeleton"] == skeleton)
            if pts:
                ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=m)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("ranks (weak scaling)")
        ax.set_title(skeleton)
    axes[0].set_ylabel("predicted time (ms)")
    axes[-1].legend()
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    print(f"wrote {png}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--machine", help="preset to run (frontier, dgx_h100, fugaku, bgp)")
    ap.add_argument("--max-ranks", type=int, default=RANKS[-1])
    ap.add_argument("--contention", default=None, help="fluid, or none (default)")
    ap.add_argument("--skeletons", default=",".join(SKELETONS),
                    help="which of them, comma-separated (default: all three)")
    ap.add_argument("--report", action="store_true", help="print the table, draw the figure")
    ap.add_argument("--png", default=None, help="figure path (one file per skeleton)")
    ns = ap.parse_args(argv)
    if ns.machine:
        chosen = tuple(ns.skeletons.split(","))
        print(f"wrote {study(ns.machine, ns.max_ranks, ns.contention, chosen)}")
    if ns.report:
        report(ns.png)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
