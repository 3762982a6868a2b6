"""Options shared by the commands that run simulations (``bsim run`` and ``bsim sweep``).

Model options (:func:`add_model_options`): ``--machine``, ``--network``,
``--protocol``, ``--contention``, ``--level`` (both at once), ``--collectives``,
``--collective OP=SPEC``.
The network is ``--network`` if given, else the ``[network]`` table of
``--machine`` (a preset of ``bsim list machines`` or a TOML file), else
:data:`DEFAULT_NETWORK`; the collective model likewise (:func:`collectives`), so a
``--network`` beside ``--machine`` keeps the machine's ``[collectives]``.  ``simulate``
places a ``--network`` spec on the machine's nodes (``bsim.machines.layout``).

Timeline and noise options of ``bsim run`` (:func:`add_timeline_options`):
``--trace``, ``--trace-ranks``, ``--trace-window``, ``--trace-max-events``,
``--noise``.  :func:`apply_run_options` turns them into ``simulate`` keyword
arguments (the noise as its spec, which ``simulate`` builds on the run's machine and
network layout) and :func:`finish_run_options` erases the progress line and writes
the trace after the run.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..engine.model_defaults import DEFAULT_CONTENTION, DEFAULT_PROTOCOL, LEVELS
from ..outputs.model_level import model_level
from ..simulate import DEFAULT_NETWORK  # one default for the CLI and Python

__all__ = ["DEFAULT_NETWORK", "param_pair", "param_dict", "add_model_options", "network_spec",
           "collectives", "add_timeline_options", "apply_run_options", "finish_run_options",
           "trace_written"]


def param_pair(text: str) -> tuple[str, str]:
    """``KEY=VALUE`` as an argparse type: ``(key, value)``, both stripped."""
    key, eq, value = text.partition("=")
    if not eq or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value.strip()


def param_dict(pairs: list[tuple[str, str]], option: str = "--param") -> dict[str, str]:
    """The ``(key, value)`` pairs of a repeated *option* as a dict; a key given twice
    (``--param px=2 --param px=4``) is refused, naming both values."""
    out: dict[str, str] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"{option} {key}={out[key]} and {option} {key}={value}: "
                             f"{key} is given twice; give it once")
        out[key] = value
    return out


# -- the models of a run ------------------------------------------------------------------
def add_model_options(parser: argparse.ArgumentParser) -> None:
    """Add the machine, network, protocol, contention and collective options to *parser*."""
    parser.add_argument("--machine", metavar="NAME|FILE.toml",
                        help="machine preset or file: its network, collectives, compute "
                             "times, peak and file system (bsim list machines)")
    parser.add_argument("--network", default=None,
                        help=f"network model spec; replaces only --machine's network, on "
                             f"its nodes (cores = its cores_per_node unless given; its "
                             f"collective fits stay: --collectives analytic) (default: "
                             f"{DEFAULT_NETWORK})")
    level = model_level(DEFAULT_PROTOCOL, DEFAULT_CONTENTION)
    parser.add_argument("--protocol", default=None,
                        help=f"bsim (the BSIM paper's rules), loggp[:..] or "
                             f"loggops[:O=..,S=..] (docs/protocols.md); with neither this nor "
                             f"--contention: the default level, {level} (docs/validation.md, "
                             f"\"Model levels\"); named alone: no contention")
    parser.add_argument("--contention", type=contention_spec, default=None,
                        metavar="none|fluid[:share=equal|latency,start=send|after_latency]",
                        help=f"fluid: messages in flight share link bandwidth max-min fairly "
                             f"(share=latency: in inverse proportion to route latency, as "
                             f"SimGrid's CM02; docs/protocols.md); default: none"
                             + (f" ({DEFAULT_CONTENTION} without --protocol)"
                                if DEFAULT_CONTENTION != "none" else ""))
    parser.add_argument("--level", choices=list(LEVELS), default=None,
                        help="a named model level, both --protocol and --contention at once: "
                             "paper (the BSIM paper's rules, no contention) or smpi (SimGrid "
                             "SMPI's rules and its CM02 sharing; docs/validation.md, \"Model "
                             "levels\"); given alone")
    parser.add_argument("--collectives", default=None, metavar="SPEC",
                        help="collective cost source: analytic (default), clog:c=..,d=.., "
                             "table:path=FILE, algorithmic[:op=alg] (docs/collectives.md)")
    parser.add_argument("--collective", action="append", type=param_pair, default=[],
                        metavar="OP=SPEC", help="cost source for one operation (repeatable)")
    parser.add_argument("--filesystem", type=filesystem_spec, default=None, metavar="SPEC",
                        help="MPI-IO cost model: lustre[:stripe_count=..,ost_bandwidth=..,"
                             "latency=..] (default lustre; docs/io.md)")


def filesystem_spec(text: str) -> str:
    """``--filesystem`` checked at parse time (argparse prints the error as one line)."""
    from netmodels.filesystem import build_filesystem
    try:
        build_filesystem(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def contention_spec(text: str) -> str:
    """``--contention`` checked at parse time (argparse prints the error as one line)."""
    from bsim.engine.fabric import parse_contention
    try:
        parse_contention(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def partition_spec(text: str) -> str:
    """``--partition`` checked at parse time: block, node, cyclic or cyclic:block=B."""
    from bsim.engine.distributed import PARTITIONS, cyclic_block
    name, colon, _ = text.partition(":")
    if name not in PARTITIONS or (colon and name != "cyclic"):
        raise argparse.ArgumentTypeError(f"unknown partition {text!r}; valid: "
                                         f"{', '.join(PARTITIONS)} or cyclic:block=B")
    if text.startswith("cyclic:"):
        try:
            cyclic_block(text, 1 << 62, 1)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def network_spec(ns: argparse.Namespace) -> str:
    """``--network`` if given, else the ``--machine`` preset's network, else the default."""
    if ns.network is not None:
        return str(ns.network)
    if ns.machine is not None:
        from netmodels import build_network

        from ..machines import load_machine, naming_the_file
        from ..machines import network_spec as machine_network
        preset = load_machine(ns.machine)
        spec = machine_network(preset)
        with naming_the_file(preset, "network"):
            build_network(spec)   # a bad value is named with its file, before the run
        return spec
    return DEFAULT_NETWORK


def collectives(ns: argparse.Namespace) -> str | dict[str, str] | None:
    """``--collectives`` (else the ``--machine`` preset's ``[collectives]``), with the
    ``--collective OP=SPEC`` overrides: the *collectives* argument of ``simulate``."""
    default = ns.collectives
    if default is None and ns.machine is not None:
        from ..engine.collective_costs import CollectiveCosts
        from ..machines import collective_spec, load_machine, naming_the_file
        preset = load_machine(ns.machine)
        default = collective_spec(preset)
        with naming_the_file(preset, "collectives"):
            CollectiveCosts(default)   # a bad value is named with its file, before the run
    if not ns.collective:
        return default
    specs = dict(default) if isinstance(default, dict) else {"default": default or "analytic"}
    given: set[str] = set()
    for op, spec in ns.collective:
        if op.strip().lower() in given:   # as network specs: a second one would silently win
            raise ValueError(f"--collective {op}: given twice; give each operation once")
        given.add(op.strip().lower())
        specs[op] = spec
    return specs


# -- timeline, noise and progress of bsim run ---------------------------------------------
def add_timeline_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--trace``, ``--trace-ranks``, ``--trace-window``, ``--trace-max-events``,
    ``--noise`` and (if absent) ``--quiet`` to *parser*."""
    from ..engine.noise import NOISE_KINDS
    from ..outputs.trace import DEFAULT_MAX_EVENTS
    g = parser.add_argument_group("timeline and noise")
    g.add_argument("--trace", metavar="FILE",
                   help="write a Chrome trace (open in https://ui.perfetto.dev)")
    g.add_argument("--trace-ranks", metavar="LIST", default=None,
                   help="record only these ranks, e.g. 0-63,100 (default: all)")
    g.add_argument("--trace-window", metavar="START:END", default=None,
                   help="record only this simulated time window, in seconds")
    g.add_argument("--trace-max-events", type=int, default=None, metavar="N",
                   help=f"stop recording after N events (default {DEFAULT_MAX_EVENTS:,})")
    g.add_argument("--noise", action="append", default=[], metavar="SPEC",
                   help="OS/network noise, repeatable: " +
                   "; ".join(f"{k}:{v}" for k, v in NOISE_KINDS.items()))
    if "--quiet" not in parser._option_string_actions:
        parser.add_argument("--quiet", action="store_true",
                            help="no summary and no progress bar")


def apply_run_options(ns: argparse.Namespace, stream: Any = None) -> dict[str, Any]:
    """``simulate`` keyword arguments (``tracer``, ``noise``, ``progress``) from *ns*.

    Keeps what :func:`finish_run_options` needs on *ns*.  Raises ValueError for a bad
    noise spec, rank list or window.
    """
    from ..engine.noise import build_noise
    from ..outputs.progress import make_progress
    from ..outputs.trace import DEFAULT_MAX_EVENTS, ChromeTracer
    kwargs: dict[str, Any] = {}
    tracer = None
    if getattr(ns, "trace", None):
        cap = ns.trace_max_events
        tracer = ChromeTracer(ranks=ns.trace_ranks, window=ns.trace_window,
                              max_events=DEFAULT_MAX_EVENTS if cap is None else cap,
                              program=str(ns.target))
        kwargs["tracer"] = tracer
    elif getattr(ns, "trace_ranks", None) or getattr(ns, "trace_window", None) \
            or getattr(ns, "trace_max_events", None) is not None:
        raise ValueError("--trace-ranks, --trace-window and --trace-max-events need "
                         "--trace FILE")
    noise = getattr(ns, "noise", None) or None
    for item in noise or ():   # an empty spec would run without noise, silently
        if isinstance(item, str) and not item.replace(";", "").strip():
            raise ValueError(f"--noise {item!r}: an empty noise spec; give a model, e.g. "
                             f"--noise periodic:period=1e-3,duration=2.5e-5 (or leave "
                             f"--noise out for no noise)")
    # checked now, except what the run's layout decides (core=K, ranks_per_node,
    # layout=network): simulate() builds the noise on the machine's cores and the
    # network's placement and checks those
    build_noise(noise, layout_known=False)
    if noise:
        kwargs["noise"] = noise if isinstance(noise, str) else ";".join(noise)
    progress = make_progress(bool(getattr(ns, "quiet", False)), stream)
    if progress is not None:
        kwargs["progress"] = progress
    ns.run_state = {"tracer": tracer, "progress": progress}
    return kwargs


def finish_run_options(ns: argparse.Namespace, result: Any = None,
                       outputs: Any = None) -> None:
    """After the run: erase the progress line and write the trace file (or, given an
    :class:`~bsim.outputs.output_set.OutputSet`, add it there, to be written with the
    run's other outputs; :func:`trace_written` then says where it is)."""
    state = getattr(ns, "run_state", None) or {}
    if state.get("progress") is not None:
        state["progress"].close()
    tracer = state.get("tracer")
    if tracer is not None:
        if outputs is not None:
            outputs.add("--trace", ns.trace, tracer.text())
        else:
            tracer.write(ns.trace)
            trace_written(ns)
        window = tracer.window
        if window is not None and result is not None and window[0] >= result.elapsed:
            print(f"bsim: warning: the trace window starts at {window[0]:g} s, after the "
                  f"run ended at {result.elapsed:g} s: nothing in it", file=sys.stderr)


def trace_written(ns: argparse.Namespace) -> None:
    """Say on standard error where the trace went (unless ``--quiet``)."""
    tracer = (getattr(ns, "run_state", None) or {}).get("tracer")
    if tracer is not None and not getattr(ns, "quiet", False):
        note = f" ({tracer.warning()})" if tracer.truncated_at is not None else ""
        print(f"trace: {ns.trace} ({len(tracer.spans):,} spans, {len(tracer.messages):,} "
              f"messages){note}", file=sys.stderr)
