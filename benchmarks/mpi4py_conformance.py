"""mpi4py's own test suite, unmodified, under bsim at n = 1..4 and real MPI at n = 2.

Takes ``test/`` from mpi4py's source distribution on PyPI (``pip download
--no-deps --no-binary mpi4py mpi4py==VERSION``, cached), runs every test
module in fresh processes (``bsim.validation.mpi4py_suite``: restarts after
a test that hangs or deadlocks, so one stuck test costs only itself) and
prints per module: tests passing under real MPI, under bsim at each n, the
gap at the worst n, and the commonest first failure of the gap tests.

The rate is ``|pass(bsim:n) & pass(real:2)| / |pass(real:2)|``; "core" is
the modules of p2p, collectives, communicators, groups, requests, status,
datatypes, ops and message specs (the issue's list, by module name).

    python benchmarks/mpi4py_conformance.py [--ranks 1,2,3,4] [--real 2]
        [--modules REGEX] [--jobs 2] [--json OUT] [--data docs/data/mpi4py_suite.json]
        [--min-rate R]

``--data`` writes the measured table where ``python -m bsim.mpi.coverage``
reads it for ``docs/mpi_coverage.md``; ``--min-rate`` exits 1 when the rate
at any n is below R (CI's regression floor).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tarfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bsim.mpi.coverage import suite_markdown  # noqa: E402
from bsim.outputs.files import atomic_write_text  # noqa: E402
from bsim.validation.mpi4py_suite import ModuleRun, list_modules, run_module  # noqa: E402

CORE = re.compile(r"^test_(p2p|cco|comm|group|request|status|datatype|op|msgspec)")


def fetch_suite(version: str, cache: Path) -> Path:
    """``test/`` of mpi4py *version*'s sdist, downloaded once into *cache*."""
    testdir = cache / f"mpi4py-{version}" / "test"
    if testdir.is_dir():
        return testdir
    cache.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                    "--no-binary", "mpi4py", f"mpi4py=={version}", "-d", str(cache)],
                   check=True)
    with tarfile.open(cache / f"mpi4py-{version}.tar.gz") as tar:
        members = [m for m in tar.getmembers()
                   if m.name.startswith(f"mpi4py-{version}/test/")]
        tar.extractall(cache, members=members, filter="data")
    return testdir


def _installed_version() -> str:
    try:
        from importlib.metadata import version
        return version("mpi4py")
    except Exception:
        return "4.1.2"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--version", default=_installed_version(), help="mpi4py release")
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "bsim-mpi4py-suite")
    ap.add_argument("--ranks", default="1,2,3,4", help="bsim world sizes")
    ap.add_argument("--real", type=int, default=2, help="real mpiexec -n (0: none)")
    ap.add_argument("--modules", default="", help="regex of module names to run")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120.0,
                    help="wall s with no rank writing a log line before an attempt is ended")
    ap.add_argument("--json", type=Path, help="every test's outcome, per world")
    ap.add_argument("--data", type=Path, help="the per-module table for the docs")
    ap.add_argument("--min-rate", type=float, default=None)
    a = ap.parse_args(argv)
    testdir = fetch_suite(a.version, a.cache)
    modules = [m for m in list_modules(testdir) if re.search(a.modules, m)]
    worlds = [f"real:{a.real}"] if a.real else []
    worlds += [f"bsim:{n}" for n in a.ranks.split(",")]
    work = a.cache / "runs"
    start = time.perf_counter()
    with ThreadPoolExecutor(a.jobs) as pool:
        futures = {(m, w): pool.submit(run_module, testdir, m, w, work, timeout=a.timeout)
                   for m in modules for w in worlds}
        runs = {key: f.result() for key, f in futures.items()}
    wall = time.perf_counter() - start
    table = tabulate(modules, worlds, runs)
    print(render(table, a.version, wall))
    if a.json:
        atomic_write_text(a.json, json.dumps(
            {f"{m} {w}": {t: [o.outcome, o.where, o.why] for t, o in r.outcomes.items()}
             for (m, w), r in runs.items()}, indent=1))
    if a.data:
        table["mpi4py"] = a.version
        atomic_write_text(a.data, json.dumps(table, indent=1) + "\n")
    if a.min_rate is not None and a.real:
        low = {w: r for w, r in table["rate"].items() if r < a.min_rate}
        if low:
            print(f"conformance below {a.min_rate:.1%}: {low}", file=sys.stderr)
            return 1
    return 0


def tabulate(modules: list[str], worlds: list[str],
             runs: dict[tuple[str, str], ModuleRun]) -> dict:
    """Per-module counts, totals and rates (vs the real world) as plain data."""
    real = next((w for w in worlds if w.startswith("real")), None)
    sims = [w for w in worlds if w.startswith("bsim")]
    rows, total, core = [], Counter(), Counter()
    for m in modules:
        ref = runs[m, real].passing() if real else set()
        row: dict = {"module": m, "real": len(ref) if real else None}
        worst_gap: set[str] = set()
        worst = sims[0] if sims else ""
        for w in sims:
            ok = runs[m, w].passing() & ref if real else runs[m, w].passing()
            row[w] = len(ok)
            gap = ref - ok
            if len(gap) > len(worst_gap):
                worst_gap, worst = gap, w
            for c in (total, core) if CORE.match(m) else (total,):
                c[w] += len(ok)
        for c in (total, core) if CORE.match(m) else (total,):
            c["real"] += len(ref)
        row["gap"] = len(worst_gap)
        row["first_failure"] = ""
        same_n = f"bsim:{real.split(':')[1]}" if real else ""
        if worst_gap:
            # why, from the world of real's size when simulated (apples to apples)
            w = same_n if same_n in sims else worst
            gap = ref - runs[m, w].passing() or worst_gap
            whys = Counter(_api(runs[m, w].outcomes.get(t)) for t in gap)
            row["first_failure"] = "; ".join(f"{why} ({n})" for why, n in whys.most_common(2))
        rows.append(row)
    rate = {w: total[w] / total["real"] for w in sims} if total["real"] else {}
    core_rate = {w: core[w] / core["real"] for w in sims} if core["real"] else {}
    return {"worlds": worlds, "rows": rows, "total": dict(total), "core": dict(core),
            "rate": rate, "core_rate": core_rate}


def _api(outcome) -> str:
    """A short name for why a test failed: the exception, cut at its first detail."""
    if outcome is None:
        return "not run"
    why = outcome.why or outcome.outcome
    return re.sub(r"\s+", " ", why)[:90]


def render(table: dict, version: str, wall: float) -> str:
    return f"mpi4py {version} test suite, {wall:.0f} s wall\n\n" + suite_markdown(table)


if __name__ == "__main__":
    sys.exit(main())
