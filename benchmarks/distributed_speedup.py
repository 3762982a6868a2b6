"""Distributed speed-up: one bsim run on K=2 host processes against K=1.

Each workload is run as ``mpiexec -n K python -m bsim run SKELETON ... --json
OUT.json --quiet`` for K = 1 and K = 2, alternately (K1, K2, K1, K2, ...) so
that a change of background load affects both alike, ``--repeat`` times each
(default 3; 1 with ``--quick``).  Per K the table gives the medians of

* ``wall s``: the whole ``mpiexec`` command (``time.perf_counter`` around
  ``subprocess.run``: start-up, import, set-up, simulation, result gathering);
* ``host s``: the simulation loop alone (the JSON's ``host.seconds``: for
  K > 1 the largest of the hosts' seconds processing events, the time at the
  window exchanges not counted),

the conservative windows and the events shipped between host processes (the
JSON's ``host.distributed``; only for K > 1), and the ratios K=1 / K=2.  Every
result outside the JSON's ``host`` section must be identical in every run, for
both K (the distributed engine must not change the simulated answer): the
script prints IDENTICAL, or the first difference and exits 1.

Workloads (``--workload``, default ``all``):

* ``halo2d``: the 2-D halo skeleton on ``--ranks-side`` squared virtual ranks
  (default 64 x 64 = 4,096), 20 iterations (``--halo-iterations``: its 2-second run
  has about 0.3 s of start-up, import and result, that K = 2 does not divide),
  ``--machine dawn`` (es45 until 2026-11-27, when presets' node counts became
  checked: es45 is the first part of ASCI Q, 512 nodes x 4 = 2,048 cores, too few
  for 4,096 ranks; es40 before 2026-11-25, which has no memory bandwidth for
  halo2d's memory-bound update);
* ``milc_cg``: MILC's CG on the 32x32x32x32 lattice with ``nprocs=4096``
  (MILC's balanced 8x8x8x8 grid, 4^4 sites per rank), ``niters=30`` (about
  30 s on one host process; the skeleton's default 100 takes about 100 s),
  ``--machine bgp``;
* ``sweep3d``: the Sweep3D wavefronts on a 64 x 64 = 4,096-rank grid
  (``nx = ny = 256``, ``nz = 200``: 4 x 4 x 200 cells a rank, 40 blocks an
  octant, one iteration of 8 octants; about 25 s on one host process),
  ``--machine es40``, with ``--partition cyclic`` (blocks of 128 ranks, two
  grid rows, dealt to the hosts in turn): under ``block`` one host holds the
  upper half of the grid and the two hosts take turns at the wavefront, so
  that K = 2 gains little (``--partition block`` shows it).

Both K run the same command but for ``--partition``, which only K > 1 reads.
Per K = 2 run the JSON also gives each host process's seconds processing
events (``busy``) and waiting at the window exchanges (``exchange``: load
imbalance between the hosts plus the exchanges themselves); the table gives
the medians of their maxima over the hosts.

Targets: K=2 at least 1.8x faster than K=1 in wall time on halo2d and milc_cg, 1.5x on
sweep3d (on a 2-core machine).  The sources are compiled to bytecode first, as an
installed package's are (``compileall``; where ``PYTHONDONTWRITEBYTECODE`` is set, as on
this machine, each process would otherwise compile every module at start-up).

    python benchmarks/distributed_speedup.py [--quick] [--repeat R]
        [--workload halo2d|milc_cg|sweep3d|all] [--ranks-side N] [--halo-iterations I]
        [--partition block|cyclic[:block=B]|node]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {"halo2d": 1.8, "milc_cg": 1.8, "sweep3d": 1.5}   # wall K=1 / K=2 (issue 20)


def _mpiexec() -> str:
    here = Path(sys.executable).parent / "mpiexec"
    found = str(here) if here.exists() else shutil.which("mpiexec")
    if not found:
        raise SystemExit("distributed_speedup: needs mpiexec (pip install 'bsim[mpi]', "
                         "which brings the mpich wheel)")
    return found


Spec = tuple[str, dict[str, int], str, str]   # skeleton, parameters, machine, partition


def workloads(side: int, halo_iterations: int = 20) -> dict[str, Spec]:
    """Name -> (skeleton, parameters, machine preset, partition for K > 1)."""
    return {
        "halo2d": ("halo2d", dict(px=side, py=side, iterations=halo_iterations), "dawn",
                   "block"),
        "milc_cg": ("milc_cg", dict(nx=32, ny=32, nz=32, nt=32, nprocs=4096, niters=30), "bgp",
                    "block"),
        "sweep3d": ("sweep3d", dict(px=64, py=64, nx=256, ny=256, nz=200), "es40",
                    "cyclic:block=128"),
    }


def run_once(mpiexec: str, k: int, skeleton: str, params: dict[str, int], machine: str,
             partition: str, out: Path) -> tuple[float, dict[str, Any]]:
    """Wall seconds of one ``mpiexec -n k`` run, and the JSON it wrote."""
    cmd = [mpiexec, "-n", str(k), sys.executable, "-m", "bsim", "run", skeleton]
    for name, value in params.items():
        cmd += ["--param", f"{name}={value}"]
    cmd += ["--machine", machine, "--protocol", "bsim", "--partition", partition, "--json",
            str(out), "--quiet"]   # (a level without contention: distributed)
    if out.exists():
        out.unlink()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - t0
    if proc.returncode != 0 or not out.exists():
        raise SystemExit(f"distributed_speedup: {' '.join(cmd)} failed "
                         f"(exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return wall, json.loads(out.read_text())


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """Where *a* and *b* first differ (``None`` if nowhere), e.g. ``per_rank[3].wait``."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            if key not in a or key not in b:
                return f"{path}.{key}: only in {'K=1' if key in a else 'K=2'}"
            diff = first_difference(a[key], b[key], f"{path}.{key}" if path else str(key))
            if diff:
                return diff
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b)):
            diff = first_difference(x, y, f"{path}[{i}]")
            if diff:
                return diff
        if len(a) != len(b):
            return f"{path}: length {len(a)} vs {len(b)}"
        return None
    if type(a) is not type(b) or json.dumps(a) != json.dumps(b):
        return f"{path}: {a!r} vs {b!r}"
    return None


def _canonical(doc: dict[str, Any]) -> str:
    """The result without its ``host`` section, as a canonical string (NaN-safe compare)."""
    return json.dumps({k: v for k, v in doc.items() if k != "host"}, sort_keys=True)


def bench(name: str, mpiexec: str, spec: Spec, repeat: int, folder: Path) -> bool:
    """Run, check and print one workload; ``True`` when K=2 meets the target."""
    skeleton, params, machine, partition = spec
    args = " ".join(f"{k}={v}" for k, v in params.items())
    print(f"\n## {name}: {skeleton} {args} --machine {machine}, K=2 --partition {partition}, "
          f"{repeat} run(s) per K; load average {os.getloadavg()[0]:.2f}")
    walls: dict[int, list[float]] = {1: [], 2: []}
    hosts: dict[int, list[float]] = {1: [], 2: []}
    windows: list[int] = []
    shipped: list[int] = []
    busy: list[float] = []
    waits: list[float] = []
    reference: dict[str, Any] | None = None
    for i in range(repeat):
        for k in (1, 2):
            wall, doc = run_once(mpiexec, k, skeleton, params, machine, partition,
                                 folder / f"{name}_k{k}_{i}.json")
            walls[k].append(wall)
            hosts[k].append(float(doc["host"]["seconds"]))
            if k > 1:
                dist = doc["host"].get("distributed") or {}
                if dist.get("processes") != k:
                    raise SystemExit(f"distributed_speedup: {name} K={k} ran on "
                                     f"{dist.get('processes', 1)} host process(es)")
                windows.append(int(dist["windows"]))
                shipped.append(int(dist["shipped"]))
                busy.append(max(dist.get("busy_seconds") or [math.nan]))
                waits.append(max(dist.get("exchange_seconds") or [math.nan]))
            extra = f", busy {busy[-1]:.2f} s, exchange {waits[-1]:.2f} s" if k > 1 else ""
            print(f"   run {i + 1} K={k}: wall {wall:.2f} s, host {hosts[k][-1]:.2f} s{extra}"
                  f" (load {os.getloadavg()[0]:.2f})", flush=True)
            if reference is None:
                reference = doc
            elif _canonical(doc) != _canonical(reference):
                strip = {kk: vv for kk, vv in reference.items() if kk != "host"}
                diff = first_difference(strip, {kk: vv for kk, vv in doc.items() if kk != "host"})
                print(f"DIFFERENT: run {i + 1} K={k} against run 1 K=1: {diff}")
                sys.exit(1)
    wall = {k: statistics.median(v) for k, v in walls.items()}
    host = {k: statistics.median(v) for k, v in hosts.items()}
    print(f"\n{'K':>2} {'wall s':>8} {'host s':>8} {'windows':>8} {'shipped':>9} "
          f"{'busy s':>7} {'exch s':>7}")
    print(f"{1:>2} {wall[1]:>8.2f} {host[1]:>8.2f} {'-':>8} {'-':>9} {'-':>7} {'-':>7}")
    print(f"{2:>2} {wall[2]:>8.2f} {host[2]:>8.2f} {statistics.median(windows):>8,.0f} "
          f"{statistics.median(shipped):>9,.0f} {statistics.median(busy):>7.2f} "
          f"{statistics.median(waits):>7.2f}")
    wall_ratio, host_ratio = wall[1] / wall[2], host[1] / host[2]
    print(f"speed-up K=1/K=2: wall {wall_ratio:.2f}x, sim-loop host {host_ratio:.2f}x")
    print("result outside 'host': IDENTICAL (every run, both K)")
    target = TARGETS[name]
    ok = wall_ratio >= target
    print(f"target: K=2 at least {target}x faster than K=1 (wall): "
          f"{'PASS' if ok else 'BELOW'} ({wall_ratio:.2f}x)")
    return ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one run per K (same as --repeat 1)")
    ap.add_argument("--repeat", type=int, default=None,
                    help="runs per K, median reported (default 3; 1 with --quick)")
    ap.add_argument("--workload", choices=["halo2d", "milc_cg", "sweep3d", "all"],
                    default="all")
    ap.add_argument("--partition", default=None,
                    help="partition of the K=2 runs (default: the workload's own)")
    ap.add_argument("--ranks-side", type=int, default=64,
                    help="halo2d: px = py = N virtual ranks a side (default 64: 4,096 ranks)")
    ap.add_argument("--halo-iterations", type=int, default=20,
                    help="halo2d: iterations (default 20, about 2 s on one host process)")
    ns = ap.parse_args()
    repeat = ns.repeat if ns.repeat is not None else (1 if ns.quick else 3)
    if repeat < 1:
        ap.error("--repeat must be at least 1")
    if ns.halo_iterations < 1 or ns.ranks_side < 1:
        ap.error("--halo-iterations and --ranks-side must be at least 1")
    mpiexec = _mpiexec()
    specs = workloads(ns.ranks_side, ns.halo_iterations)
    if ns.partition:
        specs = {n: (sk, pa, ma, ns.partition) for n, (sk, pa, ma, _) in specs.items()}
    names = list(specs) if ns.workload == "all" else [ns.workload]
    # bytecode compiled once, as an installed package has it: where PYTHONDONTWRITEBYTECODE
    # is set (this machine sets it) every host process would otherwise compile every module
    # (about 0.15 s of each run's start-up)
    subprocess.run([sys.executable, "-m", "compileall", "-q", "bsim", "netmodels", "skeletons"],
                   cwd=ROOT, check=True, capture_output=True)
    print(f"mpiexec {mpiexec}; {os.cpu_count()} cores; load average "
          f"{os.getloadavg()[0]:.2f}")
    results = {}
    with tempfile.TemporaryDirectory(prefix="bsim_dist_") as tmp:
        for name in names:
            results[name] = bench(name, mpiexec, specs[name], repeat, Path(tmp))
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}; "
          + ", ".join(f"{n} {'PASS' if ok else 'BELOW'}" for n, ok in results.items()))


if __name__ == "__main__":
    main()
