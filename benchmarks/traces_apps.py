"""Real C/Fortran MPI applications recorded, replayed and skeletonized (docs/traces.md).

For each application and rank count: run it plainly REPEAT times (the spread of the
machine), record one run with ``bsim record``, replay the trace on this host's own
calibration (``--profile``: a ``bsim calibrate network`` file) and on two presets, write
its skeleton and run that at the recorded ranks and at 4x.  Prints one block per case.

    python benchmarks/traces_apps.py --apps hpcc qe --ranks 2 4 --profile here.toml --pingpong

Debian's applications link Debian's MPI (Open MPI); ``bsim record`` builds its library
with the ``mpicc`` beside the launcher given (``/usr/bin/mpiexec`` -> Open MPI's).
Also ``--overhead``: the recording library's cost per call (1-rank MPI_Allreduce loop);
``--pingpong``: replay on a Hockney fit of ping-pong under the applications' own MPI too;
``--replay-only TRACE...``: replay recorded traces on the targets without running.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
HPCC_INPUT = Path("/usr/share/doc/hpcc/examples/_hpccinf.txt")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMP_NUM_THREADS="1")
BSIM = [sys.executable, "-m", "bsim"]


def _grid(n: int) -> tuple[int, int]:
    p = max(d for d in range(1, int(n ** 0.5) + 1) if n % d == 0)
    return p, n // p


def prepare(app: str, n: int, where: Path) -> list[str]:
    """The command line of *app* at *n* ranks (its input files written into *where*)."""
    launcher = ["/usr/bin/mpiexec", "--oversubscribe", "-n", str(n)]
    if app == "hpcc":
        p, q = _grid(n)
        text = HPCC_INPUT.read_text().splitlines()
        text[10], text[11] = f"{p}            Ps", f"{q}            Qs"
        (where / "hpccinf.txt").write_text("\n".join(text) + "\n")
        return [*launcher, "hpcc"]
    if app == "lammps":
        src = Path("/usr/share/doc/lammps/examples/melt/in.melt")
        if not src.exists():
            src = next(Path("/usr/share").glob("**/examples/melt/in.melt"))
        shutil.copy(src, where / "in.melt")
        return [*launcher, "lmp", "-in", "in.melt", "-log", "none"]
    if app == "qe":
        (where / "pw.in").write_text(QE_INPUT)
        return [*launcher, "pw.x", "-in", "pw.in"]
    raise ValueError(f"unknown application {app!r}")


QE_INPUT = """&control
  calculation = 'scf', pseudo_dir = '/usr/share/espresso/pseudo', outdir = './tmp'
/
&system
  ibrav = 2, celldm(1) = 10.2, nat = 2, ntyp = 1, ecutwfc = 18.0
/
&electrons
/
ATOMIC_SPECIES
 Si 28.086 Si.pz-vbc.UPF
ATOMIC_POSITIONS alat
 Si 0.00 0.00 0.00
 Si 0.25 0.25 0.25
K_POINTS automatic
 4 4 4 1 1 1
"""


def wall(cmd: list[str], cwd: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=ENV, check=True, capture_output=True, timeout=3600)
    return time.perf_counter() - t0


def bsim_json(args: list[str], cwd: Path) -> dict:
    out = cwd / "r.json"
    # the papers' level, which the figures of docs/traces.md were measured at
    subprocess.run([*BSIM, *args, "--protocol", "bsim", "--json", str(out), "--quiet"], cwd=cwd,
                   env=ENV, check=True, capture_output=True, text=True, timeout=3600)
    return json.loads(out.read_text())


def inside_mpi(trace: dict, slow: float = 1e-3) -> str:
    """Where the recorded run's time went, per rank: compute (between calls), inside MPI
    calls, and the part of that in calls longer than *slow* seconds (a rank waiting on a
    descheduled partner: the network models price these calls in microseconds)."""
    parts = []
    for acts, times in zip(trace["ranks"], trace["times"], strict=True):
        comp = sum(a[1] for a in acts if a[0] == "compute")
        durations = [t1 - t0 for t0, t1 in times]
        inside = sum(durations)
        long = [d for d in durations if d > slow]
        parts.append(f"{comp:.2f} + {inside:.2f} ({sum(long) / max(inside, 1e-12):.0%} in "
                     f"{len(long)} calls > {slow * 1e3:g} ms)")
    return "compute + inside MPI per rank, s: " + "; ".join(parts)


def case(app: str, n: int, repeat: int, profile: str | None, presets: list[str],
         app_net: str | None = None) -> None:
    where = Path(tempfile.mkdtemp(prefix=f"bsim-{app}{n}-"))
    cmd = prepare(app, n, where)
    walls = [wall(cmd, where) for _ in range(repeat)]
    t0 = time.perf_counter()
    subprocess.run([*BSIM, "record", "-o", f"{app}.json", "--", *cmd], cwd=where, env=ENV,
                   check=True, capture_output=True, timeout=3600)
    rec_time = time.perf_counter() - t0
    trace = json.loads((where / f"{app}.json").read_text())
    meas = trace["measured"]
    calls = sum(1 for acts in trace["ranks"] for a in acts if a[0] != "compute")
    print(f"\n== {app}, {n} ranks ({where})")
    print(f"  plain runs (command wall, s): {', '.join(f'{w:.2f}' for w in walls)}; "
          f"mean {statistics.fmean(walls):.2f}, spread (max-min)/mean "
          f"{(max(walls) - min(walls)) / statistics.fmean(walls):.1%}")
    print(f"  recorded run: command {meas['command_wall']:.2f} s, MPI_Init..MPI_Finalize "
          f"{meas['wall']:.3f} s, {calls:,} calls; record + convert {rec_time:.1f} s")
    print(f"  {inside_mpi(trace)}")
    if meas.get("cpu"):
        print("  CPU seconds / wall per rank (the share of the run it had a core): "
              + ", ".join(f"{c / meas['wall']:.0%}" for c in meas["cpu"]))
    targets = ([("this host", ["--machine", profile])] if profile else []) + \
        ([("this host, the app's MPI", ["--network", app_net])] if app_net else []) + \
        [(m, ["--machine", m]) for m in presets]
    for label, opts in targets:
        try:
            r = bsim_json(["replay", f"{app}.json", *opts], where)
        except subprocess.CalledProcessError as exc:
            print(f"  replay on {label}: failed: {exc.stderr.strip().splitlines()[-3:]}")
            return
        calc = statistics.fmean(r["per_rank"]["calc"])
        mpi = statistics.fmean(r["per_rank"]["comm"]) + statistics.fmean(r["per_rank"]["wait"])
        print(f"  replay on {label}: {r['elapsed']:.3f} s (calc {calc:.3f}, comm + wait "
              f"{mpi:.3f}, {r['elapsed'] / meas['wall']:.3f} x measured)")
    subprocess.run([*BSIM, "skeleton", f"{app}.json", "-o", "skel.py"], cwd=where, env=ENV,
                   check=True, capture_output=True, timeout=3600)
    net = ["--machine", profile] if profile else []
    same = bsim_json(["run", "skel.py", "-n", str(n), *net], where)
    base = bsim_json(["replay", f"{app}.json", *net], where)
    print(f"  skeleton at {n}: {same['elapsed']:.4f} s vs replay {base['elapsed']:.4f} s "
          f"({(same['elapsed'] - base['elapsed']) / base['elapsed']:+.2%})")
    try:
        big = bsim_json(["run", "skel.py", "-n", str(4 * n), *net], where)
        print(f"  skeleton at {4 * n}: {big['elapsed']:.4f} s")
    except subprocess.CalledProcessError as exc:
        print(f"  skeleton at {4 * n}: failed: {exc.stderr.strip().splitlines()[-1:]}")


def app_mpi_network(reps: int = 200) -> str:
    """A Hockney network spec fitted to ping-pong under the applications' MPI (Debian's
    Open MPI: ``benchmarks/apps/pingpong.c`` built with ``/usr/bin/mpicc``): median one-way
    times t(n) for n = 0 B .. 256 KiB, least squares of the relative error of
    ``t = latency + n / bandwidth`` (Hockney 1994, the line ``bsim calibrate network``
    fits, there under mpi4py's MPI)."""
    import numpy as np
    with tempfile.TemporaryDirectory() as d:
        exe = Path(d) / "pingpong"
        subprocess.run(["/usr/bin/mpicc", "-O2", str(HERE / "apps/pingpong.c"), "-o",
                        str(exe)], check=True)
        out = subprocess.run(["/usr/bin/mpiexec", "-n", "2", str(exe), str(reps)], env=ENV,
                             check=True, capture_output=True, text=True, timeout=600).stdout
    n, t = np.array([[float(x) for x in ln.split()] for ln in out.splitlines()]).T
    (lat, inv), *_ = np.linalg.lstsq(np.c_[1 / t, n / t], np.ones_like(t), rcond=None)
    print("  ping-pong under the applications' MPI (bytes: one-way us): "
          + ", ".join(f"{int(a)}: {b * 1e6:.2f}" for a, b in zip(n, t)))
    return f"hockney:latency={float(lat)!r},bandwidth={float(1 / inv)!r}"


def overhead(calls: int = 200000) -> None:
    """ns per intercepted call: a 1-rank MPI_Allreduce loop with and without the library."""
    src = HERE / "traces_overhead.c"
    from bsim.traces.build import build_library, find_mpicc
    mpicc = find_mpicc([shutil.which("mpiexec") or "mpiexec"])
    lib = build_library(mpicc)
    with tempfile.TemporaryDirectory() as d:
        exe = Path(d) / "ovh"
        subprocess.run([mpicc, "-O2", str(src), "-o", str(exe)], check=True)
        env = dict(ENV, BSIM_TRACE_DIR=d, LD_PRELOAD=str(lib))
        for _ in range(3):
            plain = subprocess.run([str(exe), str(calls)], capture_output=True, text=True)
            traced = subprocess.run([str(exe), str(calls)], capture_output=True, text=True,
                                    env=env)
            a, b = float(plain.stdout.split()[0]), float(traced.stdout.split()[0])
            print(f"  overhead: {a:.0f} ns plain, {b:.0f} ns recorded: {b - a:+.0f} ns per call")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--apps", nargs="*", default=["hpcc"])
    ap.add_argument("--ranks", nargs="*", type=int, default=[2, 4])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--profile", default=None, help="bsim calibrate network profile")
    ap.add_argument("--presets", nargs="*", default=["xt5", "bgp"])
    ap.add_argument("--overhead", action="store_true")
    ap.add_argument("--pingpong", action="store_true",
                    help="also replay on a Hockney fit of ping-pong under the apps' MPI")
    ap.add_argument("--replay-only", nargs="*", default=None, metavar="TRACE",
                    help="replay these recorded traces (no runs) on the targets")
    ns = ap.parse_args()
    if ns.overhead:
        overhead()
    app_net = app_mpi_network() if ns.pingpong else None
    if app_net:
        print(f"  fit: {app_net}")
    if ns.replay_only is not None:
        for tr in ns.replay_only:
            where = Path(tr).resolve().parent
            wall = json.loads(Path(tr).read_text())["measured"]["wall"]
            for label, opts in ([("this host", ["--machine", ns.profile])] if ns.profile
                                else []) + ([("the app's MPI", ["--network", app_net])]
                                           if app_net else []):
                r = bsim_json(["replay", str(Path(tr).resolve()), *opts], where)
                print(f"  {tr}: replay on {label}: {r['elapsed']:.3f} s "
                      f"({r['elapsed'] / wall:.3f} x measured)")
        return
    for app in ns.apps:
        for n in ns.ranks:
            case(app, n, ns.repeat, ns.profile, ns.presets, app_net)


if __name__ == "__main__":
    main()
