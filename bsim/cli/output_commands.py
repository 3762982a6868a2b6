"""Command-line pieces for outputs: ``sweep``, ``plot``, ``compare`` and ``run`` options.

Wiring into :mod:`bsim.cli.main` (a few lines)::

    from . import output_commands as cli_extra
    cli_extra.add_parsers(sub)          # after the built-in subparsers
    cli_extra.run_options(run)          # on the ``run`` subparser
    ...
    extra = cli_extra.apply_run_options(ns)        # in _cmd_run, before simulate
    network = cli_extra.wrap_network(ns, network)  # --noise net:...: a NoisyNetwork
    result = simulate(..., network=network, **extra)
    cli_extra.finish_run_options(ns, result)       # after simulate: writes the trace
    ...
    rc = cli_extra.run(ns)              # in main: None when the command is not ours

``wrap_network`` takes the network as ``_cmd_run`` resolved it (``--network``,
``--machine``, the skeleton's mapping) and returns it unchanged unless a
``net:`` noise spec was given.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_parsers", "run", "run_options", "apply_run_options", "wrap_network",
           "finish_run_options"]


# -- bsim run options --------------------------------------------------------------
def run_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--trace``, ``--trace-ranks``, ``--trace-window``, ``--trace-max-events``,
    ``--noise`` and (if absent) ``--quiet`` to the ``run`` parser."""
    from ..engine.noise import NOISE_KINDS
    from ..outputs.trace import DEFAULT_MAX_EVENTS
    g = parser.add_argument_group("timeline and noise")
    g.add_argument("--trace", metavar="FILE",
                   help="write a Chrome trace (open in https://ui.perfetto.dev)")
    g.add_argument("--trace-ranks", metavar="LIST", default=None,
                   help="record only these ranks, e.g. 0-63,100 (default: all)")
    g.add_argument("--trace-window", metavar="START:END", default=None,
                   help="record only this simulated time window, in seconds")
    g.add_argument("--trace-max-events", type=int, default=DEFAULT_MAX_EVENTS, metavar="N",
                   help=f"stop recording after N events (default {DEFAULT_MAX_EVENTS:,})")
    g.add_argument("--noise", action="append", default=[], metavar="SPEC",
                   help="OS/network noise, repeatable: " +
                   "; ".join(f"{k}:{v}" for k, v in NOISE_KINDS.items()))
    if "--quiet" not in parser._option_string_actions:
        parser.add_argument("--quiet", action="store_true",
                            help="no summary and no progress bar")


def apply_run_options(ns: argparse.Namespace, stream: Any = None) -> dict[str, Any]:
    """Simulate keyword arguments (``tracer``, ``noise``, ``progress``) from *ns*.

    Keeps what :func:`wrap_network` and :func:`finish_run_options` need on
    *ns*.  Raises ValueError for a bad noise spec, rank list or window.
    """
    from ..engine.noise import build_noise
    from ..outputs.progress import make_progress
    from ..outputs.trace import ChromeTracer
    kwargs: dict[str, Any] = {}
    tracer = None
    if getattr(ns, "trace", None):
        tracer = ChromeTracer(ranks=ns.trace_ranks, window=ns.trace_window,
                              max_events=ns.trace_max_events, program=str(ns.target))
        kwargs["tracer"] = tracer
    elif getattr(ns, "trace_ranks", None) or getattr(ns, "trace_window", None):
        raise ValueError("--trace-ranks and --trace-window need --trace FILE")
    compute, net = build_noise(getattr(ns, "noise", None) or None)
    if compute is not None:
        kwargs["noise"] = compute
    progress = make_progress(bool(getattr(ns, "quiet", False)), stream)
    if progress is not None:
        kwargs["progress"] = progress
    ns._bsim_extra = {"tracer": tracer, "progress": progress, "net_noise": net}
    return kwargs


def wrap_network(ns: argparse.Namespace, network: Any) -> Any:
    """*network* (spec or model) wrapped in a NoisyNetwork if ``--noise net:...`` was given."""
    net = (getattr(ns, "_bsim_extra", None) or {}).get("net_noise")
    if net is None:
        return network
    from netmodels.spec import build_network

    from ..engine.noise import NoisyNetwork
    return NoisyNetwork(build_network(network), **net)


def finish_run_options(ns: argparse.Namespace, result: Any = None) -> None:
    """After the run: erase the progress line and write the trace file."""
    state = getattr(ns, "_bsim_extra", None) or {}
    if state.get("progress") is not None:
        state["progress"].close()
    tracer = state.get("tracer")
    if tracer is not None:
        path = tracer.write(ns.trace)
        if not getattr(ns, "quiet", False):
            note = f" ({tracer.warning()})" if tracer.truncated_at is not None else ""
            print(f"trace: {path} ({len(tracer.spans):,} spans, {len(tracer.messages):,} "
                  f"messages){note}", file=sys.stderr)


# -- subcommands ---------------------------------------------------------------------
def add_parsers(subparsers: Any) -> None:
    """Register ``sweep``, ``plot`` and ``compare`` on the ``bsim`` subparsers."""
    from .sweep import MODES, default_jobs
    sw = subparsers.add_parser(
        "sweep", help="run a skeleton over a parameter grid (strong/weak scaling)",
        description="Run TARGET for every point of the parameter lists; write one CSV and "
                    "one JSON row per point.  grid: product of the lists; strong/weak: the "
                    "lists are zipped (problem fixed / problem per rank fixed).")
    sw.add_argument("target", help="skeleton name or path to a Python file")
    sw.add_argument("--param", action="append", default=[], metavar="K=V1,V2,...",
                    help="parameter values (repeatable); 'ranks' sets -n for files")
    sw.add_argument("--mode", choices=MODES, default="grid")
    sw.add_argument("--jobs", "-j", type=int, default=default_jobs(),
                    help="host processes running points in parallel (default: host cores)")
    sw.add_argument("--machine", metavar="NAME|FILE.toml", default=None,
                    help="machine preset whose [network] to use (bsim list machines)")
    sw.add_argument("--network", default=None, help="network model spec (overrides --machine)")
    sw.add_argument("--protocol", default="bsim")
    sw.add_argument("--contention", choices=["none", "fluid"], default="none")
    sw.add_argument("-o", "--output", default=None, metavar="PREFIX",
                    help="write PREFIX.csv and PREFIX.json (default: sweep_TARGET)")
    sw.add_argument("--plot", metavar="FILE.png", help="also plot time and efficiency vs ranks")
    sw.add_argument("--quiet", action="store_true", help="no per-point log, no table")

    pl = subparsers.add_parser("plot", help="plot a result, a trace or a sweep")
    pl.add_argument("input", help="result JSON (breakdown), trace JSON (timeline) or "
                    "sweep CSV/JSON (scaling)")
    pl.add_argument("--kind", choices=["breakdown", "timeline", "scaling"], default=None,
                    help="default: from the file's format")
    pl.add_argument("-o", "--output", required=True, metavar="FILE.png")
    pl.add_argument("--ranks", default=None, metavar="LIST", help="timeline: ranks, e.g. 0-15")
    pl.add_argument("--window", default=None, metavar="START:END",
                    help="timeline: time window in seconds")
    pl.add_argument("--title", default=None)

    cp = subparsers.add_parser("compare", help="compare two result JSON files (what-if)")
    cp.add_argument("a", metavar="A.json")
    cp.add_argument("b", metavar="B.json")
    cp.add_argument("--groups", type=int, default=8, help="rank groups (default 8)")
    cp.add_argument("--top", type=int, default=5, help="groups and ranks to list (default 5)")


def run(ns: argparse.Namespace) -> int | None:
    """Run ``sweep``, ``plot`` or ``compare``; None if *ns* is another command."""
    cmd = getattr(ns, "command", None)
    if cmd == "sweep":
        return _cmd_sweep(ns)
    if cmd == "plot":
        return _cmd_plot(ns)
    if cmd == "compare":
        from ..outputs.compare import compare
        sys.stdout.write(compare(ns.a, ns.b, groups=ns.groups, top=ns.top))
        return 0
    return None


def _cmd_sweep(ns: argparse.Namespace) -> int:
    from .sweep import parse_param_lists, run_sweep, write_csv, write_json
    network = ns.network
    if network is None and ns.machine is not None:
        from bsim.machines import network_spec
        network = network_spec(ns.machine)
    if network is None:
        from .main import DEFAULT_NETWORK
        network = DEFAULT_NETWORK
    lists = parse_param_lists(ns.param)
    collectives = None
    if ns.machine is not None:   # the preset's collective model and skeleton kernels too
        from bsim.machines import collective_spec
        collectives = collective_spec(ns.machine)
    rows = run_sweep(ns.target, lists, mode=ns.mode, jobs=ns.jobs, network=network,
                     protocol=ns.protocol, contention=ns.contention, collectives=collectives,
                     log=None if ns.quiet else sys.stderr, machine=ns.machine)
    prefix = ns.output or f"sweep_{Path(ns.target).stem}"
    csv_path = write_csv(rows, f"{prefix}.csv")
    json_path = write_json(rows, f"{prefix}.json", target=ns.target, mode=ns.mode,
                           network=network, protocol=ns.protocol,
                           params={k: v for k, v in lists.items()})
    if not ns.quiet:
        keys = list(lists)
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


def _kind_of(path: str) -> str:
    """breakdown / timeline / scaling from the file's content."""
    import json
    text = Path(path).read_text(encoding="utf-8")
    if not text.lstrip().startswith("{"):
        return "scaling"   # a CSV: a sweep
    data = json.loads(text)
    fmt = data.get("format") if isinstance(data, dict) else None
    if isinstance(data, dict) and "traceEvents" in data:
        return "timeline"
    if fmt == "bsim-sweep/1":
        return "scaling"
    if fmt == "bsim-result/1":
        return "breakdown"
    raise ValueError(f"{path}: not a bsim result, trace or sweep; give --kind")


def _cmd_plot(ns: argparse.Namespace) -> int:
    from ..outputs import plots
    kind = ns.kind or _kind_of(ns.input)
    if kind == "breakdown":
        plots.breakdown(ns.input, out=ns.output, title=ns.title)
    elif kind == "timeline":
        from ..outputs.trace import parse_window
        plots.timeline(ns.input, ranks=ns.ranks, window=parse_window(ns.window),
                       out=ns.output, title=ns.title)
    else:
        plots.scaling(ns.input, out=ns.output, title=ns.title)
    print(f"wrote {ns.output}")
    return 0
