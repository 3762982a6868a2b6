"""Parameter sweeps: run a skeleton over a grid of parameters, one row per point.

    bsim sweep halo2d --param px=2,4,8 --param py=2,4,8 --mode grid --jobs 2 -o halo

Modes (how the ``--param`` lists combine, and what "efficiency" means):

* ``grid``: the Cartesian product of all lists (``3 x 3`` lists -> 9 points).
  Efficiency is the strong-scaling one, per problem: the rows whose parameters
  other than the rank parameters (:func:`rank_parameters`) are equal share a
  baseline, their fastest point among their fewest ranks.
* ``strong``: lists are zipped (all of one length, or length 1 = fixed); the
  global problem stays fixed while ranks grow.  Speedup
  ``S(P) = T(P0) / T(P)``, efficiency ``E(P) = S(P) * P0 / P`` against the
  point with the fewest ranks ``P0``.  A sweep whose other parameters change
  with the ranks is refused (:func:`check_mode`).
* ``weak``: zipped as in strong; the user grows the problem with the ranks
  (e.g. ``--param px=2,4,8 --param nx=256,512,1024``) so work per rank is
  fixed.  Efficiency ``E(P) = T(P0) / T(P)``, speedup the scaled one (Gustafson),
  ``S(P) = E(P) * P / P0``: the work done per unit time against ``P0``'s.  A
  skeleton with a process-grid rule (``scale``) whose other parameters stay
  fixed while the ranks change is refused: that is strong scaling.

The parameter ``ranks`` is special: it is the rank count (``-n``) for
programs without their own (Python files, skeletons without a rank rule).

Each row: the parameters, ``ranks``, ``elapsed`` (s), ``calc``, ``wait``,
``comm`` (means over ranks, s), ``host_seconds``, ``events``, ``ops``, when the
run counts them ``flops``, ``flop_rate`` (``flops / elapsed``) and with a known
peak ``peak_flops`` and ``peak_fraction`` (``flop_rate / peak_flops``), then
``speedup``, ``efficiency`` and their baseline (``baseline_point``,
``baseline_ranks``, ``baseline_elapsed``).  Points run in parallel over *jobs* host
processes (``multiprocessing``; each point is an independent simulation) and
results keep the point order, so the files do not depend on *jobs*.  The JSON
also records what shaped each point (``settings``, as ``bsim run --json``).

Every point's parameters are checked before the first simulation
(:func:`check_points`).  A point that fails while it runs stops the sweep
(:class:`SweepPointError`, naming it); the command writes the points that had
finished and says so in its error line.
"""

from __future__ import annotations

import argparse
import itertools
import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from netmodels.input_files import recording_inputs

from ..engine.model_defaults import model_settings
from ..outputs.scaling import add_efficiency, csv_text, json_text
from .sweep_modes import check_mode, rank_parameters

__all__ = ["add_parser", "command", "parse_param_lists", "points", "prepare_point",
           "check_points", "rank_parameters", "check_mode", "run_point", "run_sweep",
           "default_jobs", "MODES", "SETTINGS", "SweepPointError"]

MODES = ("grid", "strong", "weak")
SETTINGS = ("machine", "kernel_model", "network", "protocol", "collectives", "contention",
            "noise", "filesystem", "modules", "inputs", "calibration_flags", "params")
"""Keys of a result's JSON that say what shaped it; each sweep row records its own (its
``params``: every parameter the point ran with, the defaults too, not only the swept)."""


class SweepPointError(ValueError):
    """A point failed while it ran.

    ``point`` (1-based) and ``params`` name it; ``rows`` are the points that had
    finished (point order, with efficiency); ``user`` is False when the failure
    was not a user-side one (a bug: ``detail`` holds its traceback).
    """

    def __init__(self, message: str, point: int, params: dict[str, str],
                 rows: list[dict[str, Any]], user: bool = True, detail: str = "") -> None:
        super().__init__(message)
        self.point, self.params, self.rows = point, params, rows
        self.user, self.detail = user, detail


def parse_param_lists(items: Sequence[str | tuple[str, str]]) -> dict[str, list[str]]:
    """``["px=8,16,32", "py=8"]`` -> ``{"px": ["8","16","32"], "py": ["8"]}`` (order kept).

    Raises ValueError for an item without ``=``, an empty key or value, an
    empty list item (``px=1,,2``) and a key given twice.
    """
    out: dict[str, list[str]] = {}
    for item in items:
        if isinstance(item, tuple):
            key, text = item
        else:
            key, eq, text = item.partition("=")
            if not eq:
                raise ValueError(f"sweep: expected KEY=V1,V2,..., got {item!r}")
        key = key.strip()
        values = [v.strip() for v in text.split(",")]
        if not key or not text.strip():
            raise ValueError(f"sweep: expected KEY=V1,V2,..., got {key}={text}")
        if "" in values:
            raise ValueError(f"sweep: --param {key}={text}: value {values.index('') + 1} is "
                             f"empty")
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


def _describe(params: dict[str, str]) -> str:
    """``px=1 py=2`` (``defaults`` for a point without parameters)."""
    return " ".join(f"{k}={v}" for k, v in params.items()) or "defaults"


def _ranks_value(text: str) -> int:
    """The ``ranks`` parameter as a positive int; ValueError naming it otherwise."""
    try:
        ranks = int(text)
    except ValueError:
        ranks = 0
    if ranks < 1:
        raise ValueError(f"parameter ranks={text} must be a positive integer")
    return ranks


def prepare_point(target_name: str, params: dict[str, str],
                  opts: dict[str, Any]) -> tuple[Any, int, Any]:
    """``(target, ranks, network)`` of one point, checked as ``bsim run`` checks them.

    Raises ValueError (or the target's own error) for a bad parameter, a rank
    count the skeleton cannot run on, or a layout the network cannot map.
    """
    from .targets import load_target
    params = dict(params)
    text = params.pop("ranks", None)
    nranks = _ranks_value(text) if text is not None else None
    target = load_target(target_name, params, [], opts.get("machine"), nranks,
                         quiet=bool(opts.get("quiet")))   # --quiet: a skeleton's verbose off
    if nranks is not None and target.ranks is not None and nranks != target.ranks:
        raise ValueError(f"{target.name} with these parameters runs on {target.ranks} ranks, "
                         f"not ranks={nranks}")
    ranks = nranks if nranks is not None else target.ranks
    if ranks is None:
        raise ValueError(f"{target_name} has no rank rule; add --param ranks=...")
    if opts.get("machine") is not None:   # the machine's cores and nodes hold the ranks
        _check_on_machine(opts["machine"], opts.get("network"), ranks)
    # a skeleton's layout sets the rank mapping
    network = target.network_for(opts.get("network") or "hockney")
    return target, ranks, network


def _check_on_machine(machine: str, network: str | None, ranks: int) -> None:
    """Refuse, before any point runs, *ranks* the machine cannot hold on *network*
    (``bsim.machines.layout.network_on_machine``; its warnings come when the point runs)."""
    import warnings

    from ..machines import load_machine
    from ..machines.layout import network_on_machine
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        network_on_machine(load_machine(machine, record=False), network, ranks)


def check_points(target_name: str, pts: list[dict[str, str]],
                 opts: dict[str, Any]) -> list[int]:
    """Check every point before the first simulation runs; return their rank counts.

    Raises ValueError ``sweep: point I/N (params): what is wrong`` for the first
    bad point; errors of the target itself (no such file or skeleton, a syntax
    error) are raised as they are.
    """
    from .failures import user_message
    from .targets import load_target
    load_target(target_name, {}, [])   # the target itself, whatever the points
    ranks = []
    for i, params in enumerate(pts):
        try:
            ranks.append(prepare_point(target_name, params, opts)[1])
        except (ValueError, KeyError) as exc:
            raise ValueError(f"sweep: point {i + 1}/{len(pts)} ({_describe(params)}): "
                             f"{user_message(exc)}") from exc
    return ranks


def run_point(task: tuple[str, dict[str, str], dict[str, Any]]) -> dict[str, Any]:
    """Simulate one point ``(target, params, options)``; return its row.

    The row's ``settings`` are what its result records as shaping it
    (:data:`SETTINGS`, as ``bsim run --json`` writes them).
    """
    target_name, params, opts = task
    from ..simulate import simulate
    with recording_inputs():   # the program and machine files too (Result.inputs)
        _note_machine_network(opts)
        target, ranks, network = prepare_point(target_name, params, opts)
        res = simulate(target.main, ranks, network=network,
                       protocol=opts.get("protocol"), kwargs=target.kwargs,
                       collectives=opts.get("collectives"),
                       contention=opts.get("contention"), level=opts.get("level"),
                       filesystem=opts.get("filesystem"),
                       machine=opts.get("machine"), kernel_model=target.kernel_model,
                       flops=target.flops, name=target.name, params=target.recorded)
    row: dict[str, Any] = {k: target.params.get(k, v) for k, v in params.items()
                           if k != "ranks"}
    row.update(ranks=ranks, elapsed=res.elapsed, calc=float(res.calc.mean()),
               wait=float(res.wait.mean()), comm=float(res.comm.mean()),
               host_seconds=res.host_seconds, events=res.events, ops=res.total_ops)
    if res.flops:   # as bsim run's "achieved ... = x% of peak" line
        rate = res.flops / res.elapsed if res.elapsed > 0 else float("nan")
        row.update(flops=res.flops, flop_rate=rate)
        if res.peak_flops:
            row.update(peak_flops=res.peak_flops, peak_fraction=rate / res.peak_flops)
    recorded = res.to_dict()
    row["settings"] = {k: recorded[k] for k in SETTINGS if k in recorded}
    return row


def _note_machine_network(opts: dict[str, Any]) -> None:
    """When the point runs on its ``--machine``'s own network, that network fit's
    calibration flags are warned of and recorded, as ``bsim run`` does."""
    if opts.get("machine") is None:
        return
    from ..machines import load_machine
    from ..machines import network_spec as machine_network
    from ..machines.flags import note_network_flags
    preset = load_machine(opts["machine"])
    if machine_network(preset) == opts.get("network"):
        note_network_flags(preset)


Outcome = tuple[int, dict[str, Any] | None, tuple[str | None, str] | None]
"""``(point index, row or None, failure or None)`` (:func:`_run_indexed`)."""


def _run_indexed(task: tuple[int, str, dict[str, str], dict[str, Any]]) -> Outcome:
    """:func:`run_point` of point *i*: ``(i, row, None)`` or ``(i, None, (message, traceback))``.

    Failures come back as text (some exceptions do not pickle); *message* is
    None when the failure is not a user-side one.
    """
    import traceback

    from .failures import user_message
    i, target, params, opts = task
    try:
        return i, run_point((target, params, opts)), None
    except Exception as exc:   # reported by the parent, naming the point
        return i, None, (user_message(exc), traceback.format_exc())


def _default_signals() -> None:
    """A pool worker's start: ``SIGTERM`` and ``SIGHUP`` back to their default action, so
    that the pool's ``terminate`` ends a worker at once whatever it is blocked in.  Forked
    from a process that handles them (``bsim.cli.signals``), a worker inherits a Python
    handler that must run first; once, in a test run, a worker waiting on the pool's
    queue lock was left alive and the pool's exit waited for it."""
    for name in ("SIGTERM", "SIGHUP"):
        signum = getattr(signal, name, None)
        if signum is not None:
            signal.signal(signum, signal.SIG_DFL)


def _execute(tasks: list[Any], jobs: int,
             on_row: Any) -> tuple[int, tuple[str | None, str]] | None:
    """Run *tasks* over *jobs* processes, calling ``on_row(i, row)`` as points finish.

    Stops at the first failure (points not started are not run) and returns it.
    """
    if jobs == 1:
        outcomes: Any = map(_run_indexed, tasks)
        for i, row, failure in outcomes:
            if failure is not None:
                return i, failure
            on_row(i, row)
        return None
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    with multiprocessing.get_context(method).Pool(jobs, _default_signals) as pool:
        # (exit: terminate, which ends the workers with SIGTERM)
        for i, row, failure in pool.imap_unordered(_run_indexed, tasks):
            if failure is not None:
                return i, failure
            on_row(i, row)
    return None


def run_sweep(target: str, lists: dict[str, list[str]], mode: str = "grid", jobs: int = 1,
              network: str = "hockney", protocol: str | None = None,
              collectives: str | dict[str, str] | None = None, contention: str | None = None,
              log: Any = None, machine: str | None = None,
              filesystem: str | None = None, quiet: bool = False,
              level: str | None = None) -> list[dict[str, Any]]:
    """Run every point of the sweep (over *jobs* processes); return rows in point order.

    Every point's parameters are checked first (:func:`check_points`).  *log*
    (a text stream, e.g. stderr) gets one line per finished point.  A point
    that fails while it runs stops the sweep: :class:`SweepPointError` names
    it and carries the rows of the points that had finished.  *quiet* silences a
    skeleton's own ``verbose`` output at every point, as ``bsim run --quiet`` does.
    """
    if isinstance(jobs, bool) or int(jobs) < 1:
        raise ValueError(f"sweep: --jobs must be a positive integer, got {jobs}")
    pts = points(lists, mode)
    model_settings(protocol, contention, level)   # a bad level before any point runs
    opts = {"network": network, "protocol": protocol, "collectives": collectives,
            "contention": contention, "level": level, "machine": machine,
            "filesystem": filesystem, "quiet": quiet}
    check_mode(target, pts, check_points(target, pts, opts), mode)
    rank_params = rank_parameters(target, pts)
    tasks = [(i, target, p, opts) for i, p in enumerate(pts)]
    jobs = min(int(jobs), len(tasks))
    start = time.perf_counter()
    finished: dict[int, dict[str, Any]] = {}

    def report(i: int, row: dict[str, Any]) -> None:
        finished[i] = row
        if log is not None:
            log.write(f"[{i + 1}/{len(pts)}] {_describe(pts[i])}: elapsed "
                      f"{row['elapsed']:.6g} s on {row['ranks']} ranks "
                      f"({row['host_seconds']:.2f} s host)\n")
            log.flush()

    try:
        failed = _execute(tasks, jobs, report)
    except KeyboardInterrupt as stop:   # Ctrl-C: the points that finished go with it
        done = [finished[i] for i in sorted(finished)]
        add_efficiency(done, mode, rank_params)
        setattr(stop, "rows", done)   # noqa: B010 - an attribute of the interrupt
        raise
    rows = [finished[i] for i in sorted(finished)]
    add_efficiency(rows, mode, rank_params)
    if failed is not None:
        i, (message, detail) = failed
        what = message if message is not None else detail.strip().splitlines()[-1]
        raise SweepPointError(f"sweep: point {i + 1}/{len(pts)} ({_describe(pts[i])}) "
                              f"failed: {what}", i + 1, pts[i], rows,
                              user=message is not None, detail=detail)
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
    sw.add_argument("--quiet", action="store_true", help="no per-point log, no table, no "
                    "skeleton output (its verbose parameter off, as bsim run --quiet)")
    sw.set_defaults(handler=command)


def _write(rows: list[dict[str, Any]], prefix: str, ns: argparse.Namespace,
           meta: dict[str, Any]) -> tuple[str, str]:
    """Write PREFIX.csv (numbers only) and PREFIX.json (with *meta* and each row's
    settings), together: both replaced or neither (:mod:`bsim.outputs.output_set`)."""
    from ..outputs.output_set import OutputSet
    csv_rows = [{k: v for k, v in r.items() if k != "settings"} for r in rows]
    outputs = OutputSet()
    outputs.add("-o", f"{prefix}.csv", csv_text(csv_rows))
    outputs.add("-o", f"{prefix}.json", json_text(rows, **meta))
    outputs.commit()
    return f"{prefix}.csv", f"{prefix}.json"


def _metadata(ns: argparse.Namespace, network: str, lists: dict[str, list[str]],
              collectives: str | dict[str, str] | None) -> dict[str, Any]:
    """The sweep JSON's header: the command's settings as given (each row has its own)."""
    from ..version import __version__
    return {"target": ns.target, "mode": ns.mode, "bsim_version": __version__,
            "machine": ns.machine, "network": network, "protocol": ns.protocol,
            "collectives": collectives or "analytic", "contention": ns.contention,
            "level": ns.level,
            "filesystem": ns.filesystem, "params": dict(lists)}


def _partial(err: SweepPointError, prefix: str, ns: argparse.Namespace,
             meta: dict[str, Any], total: int) -> Exception:
    """Write the points that finished before *err*; the error to raise, saying so."""
    if err.rows:
        meta = {**meta, "incomplete": {"points": total, "finished": len(err.rows),
                                       "failed_point": err.point, "failed_params": err.params,
                                       "error": str(err)}}
        csv_path, json_path = _write(err.rows, prefix, ns, meta)
        which = (f"the {len(err.rows)} points that finished are" if len(err.rows) > 1
                 else "the point that finished is")
        note = f"; {which} in {csv_path} and {json_path}"
    else:
        note = "; no point had finished, nothing written"
    first, newline, rest = str(err).partition("\n")
    message = f"{first}{note}{newline}{rest}"
    if err.user:
        return ValueError(message)
    return RuntimeError(f"{message}\n{err.detail}")


def command(ns: argparse.Namespace) -> int:
    """Run the sweep *ns* describes; write PREFIX.csv and PREFIX.json; print the table."""
    from . import options
    from .failures import check_outputs
    if ns.jobs < 1:
        raise ValueError(f"sweep: --jobs must be a positive integer, got {ns.jobs}")
    network = options.network_spec(ns)
    collectives = options.collectives(ns)
    lists = parse_param_lists(ns.param)
    prefix = ns.output or f"sweep_{Path(ns.target).stem}"
    if prefix.endswith(("/", os.sep)) or Path(prefix).is_dir():
        raise ValueError(f"-o {prefix}: a prefix names files (PREFIX.csv, PREFIX.json), "
                         f"not a directory: give e.g. -o {Path(prefix) / 'sweep'}")
    check_outputs(("-o", f"{prefix}.csv"), ("-o", f"{prefix}.json"), ("--plot", ns.plot))
    if ns.plot:   # before the sweep: its points may take hours
        from ..outputs.plots import check_figure_path
        check_figure_path(ns.plot, "--plot")   # (.csv/.json, the sweep's own, are refused)
    meta = _metadata(ns, network, lists, collectives)
    try:
        rows = run_sweep(ns.target, lists, mode=ns.mode, jobs=ns.jobs, network=network,
                         protocol=ns.protocol, contention=ns.contention, level=ns.level,
                         collectives=collectives, filesystem=ns.filesystem,
                         log=None if ns.quiet else sys.stderr, machine=ns.machine,
                         quiet=ns.quiet)
    except SweepPointError as err:
        raise _partial(err, prefix, ns, meta, len(points(lists, ns.mode))) from err
    except KeyboardInterrupt as stop:
        done = getattr(stop, "rows", None)
        if done:   # nothing is lost: write what finished, and say so in the one line
            total = len(points(lists, ns.mode))
            meta = {**meta, "incomplete": {"points": total, "finished": len(done),
                                           "interrupted": True}}
            csv_path, json_path = _write(done, prefix, ns, meta)
            setattr(stop, "written", f"the {len(done)} of {total} points that "  # noqa: B010
                    f"finished are in {csv_path} and {json_path}")
        raise
    if not ns.quiet:   # the table first: a file that cannot be written loses nothing
        keys = [k for k in lists if k != "ranks"]   # ranks has its own column
        print("  ".join(f"{k:>8}" for k in keys) + f"{'ranks':>8}{'elapsed (s)':>14}"
              f"{'calc':>12}{'wait':>12}{'comm':>12}{'eff.':>7}")
        for r in rows:
            print("  ".join(f"{r.get(k, '')!s:>8}" for k in keys) +
                  f"{r['ranks']:>8}{r['elapsed']:>14.6g}{r['calc']:>12.4g}{r['wait']:>12.4g}"
                  f"{r['comm']:>12.4g}{r['efficiency']:>7.3f}", flush=True)
    csv_path, json_path = _write(rows, prefix, ns, meta)
    if not ns.quiet:
        print(f"wrote {csv_path} and {json_path}")
    if ns.plot:
        from ..outputs.plots import scaling
        scaling(json_path, out=ns.plot)
        if not ns.quiet:
            print(f"wrote {ns.plot}")
    return 0
