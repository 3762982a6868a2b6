"""End-to-end prediction on this machine: calibrate, fit, simulate, measure, compare.

    python benchmarks/end_to_end.py [--n 1024] [--iterations 100] [--nprocs 1,2,4]

1. **Network**: ``mpiexec -n 2 python -m bsim.calibration calibrate network``
   into a fresh profile (``--out``, default a temporary folder).
2. **Kernel**: one process times ``jacobi2d.compute_step`` for square blocks
   of ``n/4`` to ``n`` points a side and the ``n/2 x n`` block (``--time-kernel``:
   the sizes the predictions use).
3. **Measure**: ``mpiexec -n P python benchmarks/apps/jacobi2d.py`` for each
   P (each launch: one warm-up run, then ``--repeat`` timed runs, loop time
   max over ranks).  Steps 2 and 3 alternate ``--rounds`` times, so a change
   of machine load affects kernel data and runs alike; the median of all
   runs is reported.  ``bsim fit kernel --model cache2`` (MILC paper's Eq. 1:
   the update slows down once two arrays no longer fit in the caches;
   ``--model`` to change) fits the kernel rows into ``[kernels.jacobi2d]
   step``; the same timing run on every core at once (MILC paper takes kernel
   data "from runs using a full node", so shared memory bandwidth is in it)
   into ``step_node``; and the 1-process rows timed with
   ``time.process_time`` into ``step_cpu``.
4. **Predict**: ``bsim.simulate`` of ``jacobi2d_skeleton.main`` on P virtual
   ranks with the profile's ``[network]`` and each kernel; with ``step_node``
   also multiplied by ``P / cores`` when ranks outnumber cores (time
   sharing).  The ``step_cpu`` prediction is compared with the runs' CPU
   time, close to what the wall time would be without other jobs on the
   machine (as long as every rank has a core of its own).
5. Print predicted vs measured with the relative error, and the load average
   (other jobs on the cores make every wall-clock number noisier).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from apps import jacobi2d_skeleton  # noqa: E402

import bsim  # noqa: E402
from bsim.cli import calibrate as calib_cli  # noqa: E402
from bsim.machines import load_machine, network_spec  # noqa: E402

APP = ROOT / "benchmarks" / "apps" / "jacobi2d.py"


def _mpiexec() -> str:
    here = Path(sys.executable).parent / "mpiexec"
    found = str(here) if here.exists() else shutil.which("mpiexec")
    if not found:
        raise SystemExit("end_to_end: needs mpiexec (pip install 'bsim[mpi]')")
    return found


def _run(cmd: list[str]) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise SystemExit(f"end_to_end: {' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def _fit(csv: Path, model: str, profile: Path, kernel: str) -> None:
    rc = calib_cli.main(["fit", "kernel", str(csv), "--model", model, "--profile", str(profile),
                         "--app", "jacobi2d", "--kernel", kernel])
    if rc:
        raise SystemExit(f"end_to_end: kernel fit of {csv} failed")


def _time_kernel(n: int, folder: Path, copies: int) -> list[tuple[int, str, str]]:
    """Rows ``(cells, wall, cpu)`` from *copies* kernel timers running at the same time."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    parts = [folder / f"kernel.part{i}.csv" for i in range(copies)]
    procs = [subprocess.Popen([sys.executable, str(APP), "--n", str(n), "--time-kernel",
                               str(part)], cwd=ROOT, env=env) for part in parts]
    if any(proc.wait(timeout=900) for proc in procs):
        raise SystemExit("end_to_end: kernel timing failed")
    rows = []
    for part in parts:
        for line in part.read_text().splitlines()[1:]:
            cells, wall, cpu = line.split(",")
            rows.append((int(cells), wall, cpu))
        part.unlink()
    return rows


def _write(path: Path, rows: list[tuple[int, str, str]], column: int) -> Path:
    rows = sorted(rows, key=lambda r: r[0])
    path.write_text("cells,seconds\n" + "".join(f"{r[0]},{r[column]}\n" for r in rows))
    return path


def main(n: int = 1024, iterations: int = 100, nprocs: tuple[int, ...] = (1, 2, 4),
         repeat: int = 2, rounds: int = 3, model: str = "cache2", out: str | None = None,
         quick_network: bool = False) -> list[dict[str, float]]:
    """Run the whole workflow; print and return one row per process count."""
    mpiexec = _mpiexec()
    folder = Path(out) if out else Path(tempfile.mkdtemp(prefix="bsim-e2e-"))
    folder.mkdir(parents=True, exist_ok=True)
    profile = folder / "machine.toml"
    profile.unlink(missing_ok=True)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cores = cores or 1
    load0 = os.getloadavg()

    print(f"# 1. network calibration (mpiexec -n 2) -> {profile}")
    net = _run([mpiexec, "-n", "2", sys.executable, "-m", "bsim.calibration", "calibrate",
                "network", "--profile", str(profile), "--max-seconds", "0.3",
                *(["--quick"] if quick_network else [])])
    print("\n".join(ln for ln in net.splitlines() if ln.startswith(("hockney", "piecewise"))))

    print(f"\n# 2-3. kernel timing (1 process; {cores} at once) and measured runs, "
          f"{rounds} rounds")
    solo: list[tuple[int, str, str]] = []
    node: list[tuple[int, str, str]] = []
    runs: dict[int, list[float]] = {p: [] for p in nprocs}
    cpus: dict[int, list[float]] = {p: [] for p in nprocs}
    grid: dict[int, str] = {}
    for _ in range(rounds):        # interleaved, so that load changes hit kernel and runs alike
        solo += _time_kernel(n, folder, 1)
        node += _time_kernel(n, folder, cores)
        for p in nprocs:
            meas = json.loads(_run([mpiexec, "-n", str(p), sys.executable, str(APP), "--n",
                                    str(n), "--iterations", str(iterations), "--repeat",
                                    str(repeat)]).strip().splitlines()[-1])
            runs[p].extend(meas["seconds"])
            cpus[p].extend(meas["cpu_seconds"])
            grid[p] = f"{meas['px']}x{meas['py']}"

    print(f"\n# 4. fit --model {model}, then predict with bsim")
    _fit(_write(folder / "jacobi2d_step.csv", solo, 1), model, profile, "step")
    _fit(_write(folder / "jacobi2d_step_node.csv", node, 1), model, profile, "step_node")
    _fit(_write(folder / "jacobi2d_step_cpu.csv", solo, 2), model, profile, "step_cpu")
    machine = load_machine(profile)
    spec = network_spec(machine)
    kernels = machine.kernels["jacobi2d"]

    def predict(p: int, key: str, slowdown: float = 1.0) -> bsim.Result:
        kw = {"n": n, "iterations": iterations, "kernel": kernels[key], "slowdown": slowdown}
        return bsim.simulate(jacobi2d_skeleton.main, ranks=p, network=spec, kwargs=kw,
                             protocol="bsim")

    rows = []
    for p in nprocs:
        solo_pred, node_pred = predict(p, "step"), predict(p, "step_node")
        rows.append({"nprocs": p, "grid": grid[p], "measured": float(np.median(runs[p])),
                     "measured_min": min(runs[p]), "measured_max": max(runs[p]),
                     "predicted": solo_pred.elapsed, "comm": float(solo_pred.comm.max()),
                     "predicted_node": node_pred.elapsed,
                     "predicted_shared": predict(p, "step_node", max(1.0, p / cores)).elapsed,
                     "measured_cpu": float(np.median(cpus[p])),
                     "predicted_cpu": predict(p, "step_cpu").elapsed})
    load1 = os.getloadavg()

    def err(a: float, b: float) -> str:
        return f"{100 * (a - b) / b:+.1f}%"

    print(f"\njacobi2d n={n}, {iterations} iterations, {cores} cores, kernel model {model}, "
          f"network {spec.split(',')[0]}...")
    print("measured: wall clock, median (min..max) of all runs.  Predicted with the kernel "
          "fitted on\n1 process ('1-proc'), on every core at once ('node', the MILC paper's "
          "full-node kernel data),\nand the node kernel x P/cores when ranks outnumber cores "
          "('P/cores').  CPU: process_time,\nmax over ranks, against the 1-process CPU-time "
          "kernel.")
    print(f"{'P':>2} {'grid':>4} | {'measured':>8} {'(min..max)':>13} | {'1-proc':>7} "
          f"{'error':>7} | {'node':>7} {'error':>7} | {'P/cores':>7} {'error':>7} | "
          f"{'comm':>6} | {'CPU':>6} {'pred':>6} {'error':>7}")
    for r in rows:
        print(f"{r['nprocs']:>2} {r['grid']:>4} | {r['measured']:>8.4f} "
              f"({r['measured_min']:.3f}..{r['measured_max']:.3f}) | {r['predicted']:>7.4f} "
              f"{err(r['predicted'], r['measured']):>7} | {r['predicted_node']:>7.4f} "
              f"{err(r['predicted_node'], r['measured']):>7} | {r['predicted_shared']:>7.4f} "
              f"{err(r['predicted_shared'], r['measured']):>7} | {r['comm']:>6.4f} | "
              f"{r['measured_cpu']:>6.3f} {r['predicted_cpu']:>6.3f} "
              f"{err(r['predicted_cpu'], r['measured_cpu']):>7}")
    print(f"load average before {load0[0]:.2f}, after {load1[0]:.2f} (1 min); "
          f"profile and data in {folder}")
    return rows


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1024, help="interior points per side")
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--nprocs", default="1,2,4", help="process counts (default 1,2,4)")
    ap.add_argument("--repeat", type=int, default=2, help="timed runs per launch")
    ap.add_argument("--rounds", type=int, default=3, help="launches per process count, "
                    "round-robin over the counts")
    ap.add_argument("--model", default="cache2", choices=("linear", "piecewise", "cache2"))
    ap.add_argument("--out", default=None, help="folder for the profile and data")
    ap.add_argument("--quick-network", action="store_true", help="small network sweep")
    ns = ap.parse_args()
    main(ns.n, ns.iterations, tuple(int(p) for p in ns.nprocs.split(",")), ns.repeat,
         ns.rounds, ns.model, ns.out, ns.quick_network)
