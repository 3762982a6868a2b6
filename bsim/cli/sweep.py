"""Parameter sweeps: run a skeleton over a grid of parameters, one row per point.

    bsim sweep halo2d --param px=2,4,8 --param py=2,4,8 --mode grid --jobs 2 -o halo

Modes (how the ``--param`` lists combine, and what "efficiency" means):

* ``grid``: the Cartesian product of all lists (``3 x 3`` lists -> 9 points).
  Efficiency is the strong-scaling one against the fastest point among the
  smallest rank count (useful when the grid keeps the problem fixed).
* ``strong``: lists are zipped (all of one length, or length 1 = fixed); the
  global problem stays fixed while ranks grow.  Speedup
  ``S(P) = T(P0) / T(P)``, efficiency ``E(P) = S(P) * P0 / P`` against the
  point with the fewest ranks ``P0``.
* ``weak``: zipped as in strong; the user grows the problem with the ranks
  (e.g. ``--param px=2,4,8 --param nx=256,512,1024``) so work per rank is
  fixed.  Efficiency ``E(P) = T(P0) / T(P)``.

The parameter ``ranks`` is special: it is the rank count (``-n``) for
programs without their own (Python files, skeletons without a rank rule).

Each row: the parameters, ``ranks``, ``elapsed`` (s), ``calc``, ``wait``,
``comm`` (means over ranks, s), ``host_seconds``, ``events``, ``ops``,
``speedup`` and ``efficiency``.  Points run in parallel over *jobs* host
processes (``multiprocessing``; each point is an independent simulation) and
results keep the point order, so the files do not depend on *jobs*.
"""

from __future__ import annotations

import argparse
import itertools
import multiprocessing
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..outputs.scaling import add_efficiency, write_csv, write_json

__all__ = ["add_parser", "command", "parse_param_lists", "points", "run_point", "run_sweep",
           "default_jobs", "MODES"]

MODES = ("grid", "strong", "weak")


def parse_param_lists(items: Sequence[str | tuple[str, str]]) -> dict[str, list[str]]:
    """``["px=8,16,32", "py=8"]`` -> ``{"px": ["8","16","32"], "py": ["8"]}`` (order kept)."""
    out: dict[str, list[str]] = {}
    for item in items:
        if isinstance(item, tuple):
            key, text = item
        else:
            key, eq, text = item.partition("=")
            if not eq:
                raise ValueError(f"sweep: expected KEY=V1,V2,..., got {item!r}")
        key = key.strip()
        values = [v.strip() for v in text.split(",") if v.strip()]
        if not key or not values:
            raise ValueError(f"sweep: expected KEY=V1,V2,..., got {key}={text}")
        if key in out:
            raise ValueError(f"sweep: parameter {key!r} given twice")
        out[key] = values
    return out


def points(lists: dict[str, list[str]], mode: str = "grid") -> list[dict[str, str]]:
    """The sweep's points in order: product (``grid``) or zip (``strong``/``weak``)."""
    if mode not in MODES:
        raise ValueError(f"sweep: mode must be one of {', '.join(MODES)}, got {mode!r}")
    if not lists:
        return [{}]
    keys = list(lists)
    if mode == "grid":
        combos = itertools.product(*lists.values())
        return [dict(zip(keys, combo, strict=True)) for combo in combos]
    lengths = {len(v) for v in lists.values() if len(v) > 1}
    if len(lengths) > 1:
        desc = ", ".join(f"{k}: {len(v)}" for k, v in lists.items())
        raise ValueError(f"sweep --mode {mode}: value lists are zipped and must have one "
                         f"length (or 1), got {desc}")
    n = lengths.pop() if lengths else 1
    return [{k: (v[i] if len(v) > 1 else v[0]) for k, v in lists.items()} for i in range(n)]


def run_point(task: tuple[str, dict[str, str], dict[str, Any]]) -> dict[str, Any]:
    """Simulate one point ``(target, params, options)``; return its row."""
    target_name, params, opts = task
    from ..simulate import simulate
    from .targets import load_target
    params = dict(params)
    nranks = params.pop("ranks", None)
    target = load_target(target_name, params, [], opts.get("machine"))
    ranks = int(nranks) if nranks is not None else target.ranks
    if ranks is None:
        raise ValueError(f"sweep: {target_name} has no rank rule; add --param ranks=...")
    network = opts.get("network", "hockney")
    if hasattr(target, "network_for"):   # a skeleton's layout sets the rank mapping
        network = target.network_for(network)
    res = simulate(target.main, ranks, network=network, protocol=opts.get("protocol", "bsim"),
                   kwargs=target.kwargs, collectives=opts.get("collectives"),
                   contention=opts.get("contention"), filesystem=opts.get("filesystem"),
                   name=target.name, params=target.params)
    row: dict[str, Any] = {k: target.params.get(k, v) for k, v in params.items()}
    row.update(ranks=ranks, elapsed=res.elapsed, calc=float(res.calc.mean()),
               wait=float(res.wait.mean()), comm=float(res.comm.mean()),
               host_seconds=res.host_seconds, events=res.events, ops=res.total_ops)
    return row


def run_sweep(target: str, lists: dict[str, list[str]], mode: str = "grid", jobs: int = 1,
              network: str = "hockney", protocol: str = "bsim",
              collectives: str | dict[str, str] | None = None, contention: str | None = None,
              log: Any = None, machine: str | None = None,
              filesystem: str | None = None) -> list[dict[str, Any]]:
    """Run every point of the sweep (over *jobs* processes); return rows in point order.

    *log* (a text stream, e.g. stderr) gets one line per finished point.
    """
    pts = points(lists, mode)
    opts = {"network": network, "protocol": protocol, "collectives": collectives,
            "contention": contention, "machine": machine, "filesystem": filesystem}
    tasks = [(target, p, opts) for p in pts]
    jobs = max(1, min(int(jobs), len(tasks)))
    start = time.perf_counter()
    rows: list[dict[str, Any]] = []

    def report(i: int, row: dict[str, Any]) -> None:
        if log is not None:
            desc = " ".join(f"{k}={v}" for k, v in pts[i].items())
            log.write(f"[{i + 1}/{len(pts)}] {desc}: elapsed {row['elapsed']:.6g} s on "
                      f"{row['ranks']} ranks ({row['host_seconds']:.2f} s host)\n")
            log.flush()

    if jobs == 1:
        for i, task in enumerate(tasks):
            rows.append(run_point(task))
            report(i, rows[-1])
    else:
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        with multiprocessing.get_context(method).Pool(jobs) as pool:
            for i, row in enumerate(pool.imap(run_point, tasks)):
                rows.append(row)
                report(i, row)
    add_efficiency(rows, mode)
    if log is not None:
        log.write(f"sweep: {len(rows)} points in {time.perf_counter() - start:.1f} s "
                  f"({jobs} job{'s' if jobs > 1 else ''})\n")
    return rows


def default_jobs() -> int:
    """Host cores available to this process (at least 1)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:   # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


# -- the bsim sweep command ---------------------------------------------------------------
def add_parser(subparsers: Any) -> None:
    """Register ``sweep`` on the ``bsim`` subparsers (the model options are ``run``'s)."""
    from . import options
    sw = subparsers.add_parser(
        "sweep", help="run a skeleton over a parameter grid (strong/weak scaling)",
        description="Run TARGET for every point of the parameter lists; write one CSV and "
                    "one JSON row per point.  grid: product of the lists; strong/weak: the "
                    "lists are zipped (problem fixed / problem per rank fixed).")
    sw.add_argument("target", help="skeleton name or path to a Python file")
    sw.add_argument("--param", action="append", default=[], metavar="K=V1,V2,...",
                    help="parameter values (repeatable); 'ranks' sets -n for files, "
                         "other keys reach a file as --K=V")
    sw.add_argument("--mode", choices=MODES, default="grid")
    sw.add_argument("--jobs", "-j", type=int, default=default_jobs(),
                    help="host processes running points in parallel (default: host cores)")
    options.add_model_options(sw)
    sw.add_argument("-o", "--output", default=None, metavar="PREFIX",
                    help="write PREFIX.csv and PREFIX.json (default: sweep_TARGET)")
    sw.add_argument("--plot", metavar="FILE.png", help="also plot time and efficiency vs ranks")
    sw.add_argument("--quiet", action="store_true", help="no per-point log, no table")
    sw.set_defaults(handler=command)


def command(ns: argparse.Namespace) -> int:
    """Run the sweep *ns* describes; write PREFIX.csv and PREFIX.json; print the table."""
    from . import options
    from .failures import check_outputs
    network = options.network_spec(ns)
    lists = parse_param_lists(ns.param)
    prefix = ns.output or f"sweep_{Path(ns.target).stem}"
    check_outputs(("-o", f"{prefix}.csv"), ("-o", f"{prefix}.json"), ("--plot", ns.plot))
    rows = run_sweep(ns.target, lists, mode=ns.mode, jobs=ns.jobs, network=network,
                     protocol=ns.protocol, contention=ns.contention,
                     collectives=options.collectives(ns), filesystem=ns.filesystem,
                     log=None if ns.quiet else sys.stderr, machine=ns.machine)
    csv_path = write_csv(rows, f"{prefix}.csv")
    json_path = write_json(rows, f"{prefix}.json", target=ns.target, mode=ns.mode,
                           network=network, protocol=ns.protocol,
                           params={k: v for k, v in lists.items()})
    if not ns.quiet:
        keys = [k for k in lists if k != "ranks"]   # ranks has its own column
        print("  ".join(f"{k:>8}" for k in keys) + f"{'ranks':>8}{'elapsed (s)':>14}"
              f"{'calc':>12}{'wait':>12}{'comm':>12}{'eff.':>7}")
        for r in rows:
            print("  ".join(f"{r.get(k, '')!s:>8}" for k in keys) +
                  f"{r['ranks']:>8}{r['elapsed']:>14.6g}{r['calc']:>12.4g}{r['wait']:>12.4g}"
                  f"{r['comm']:>12.4g}{r['efficiency']:>7.3f}")
        print(f"wrote {csv_path} and {json_path}")
    if ns.plot:
        from ..outputs.plots import scaling
        scaling(json_path, out=ns.plot)
        if not ns.quiet:
            print(f"wrote {ns.plot}")
    return 0
