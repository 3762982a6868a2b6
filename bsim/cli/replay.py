"""``bsim replay TRACE --machine M``: a recorded run predicted on another machine.

TRACE is an OTF2 archive (``*.otf2``), a SimGrid time-independent trace (its index
file), bsim's JSON trace or a directory of raw ``rank-N.bin`` files
(:func:`bsim.traces.load_trace`).  The model options are ``bsim run``'s; the result is an
ordinary one (summary, ``--json``, ``--trace``, ``bsim compare``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from . import options

__all__ = ["add_parser", "command"]


def add_parser(subparsers: Any) -> None:
    """Register ``replay`` on the ``bsim`` subparsers."""
    p = subparsers.add_parser("replay", help="replay a recorded trace (OTF2, SimGrid "
                              "time-independent, bsim JSON) on a machine model")
    p.add_argument("target", metavar="TRACE")
    options.add_model_options(p)
    p.add_argument("--host-peak", type=float, default=None, metavar="FLOP/S",
                   help="peak flop/s per core of the host the trace was recorded on: "
                        "compute is scaled by host peak / --machine's peak (default: kept)")
    p.add_argument("--compute-scale", type=float, default=None, metavar="X",
                   help="multiply every recorded compute interval by X (overrides "
                        "--host-peak)")
    p.add_argument("--flops-per-second", type=float, default=1e9,
                   help="time-independent traces: host speed converting compute flops to "
                        "seconds (default 1e9, SimGrid's 1Gf)")
    p.add_argument("--json", metavar="FILE", help="write the result as JSON")
    options.add_timeline_options(p)
    p.set_defaults(handler=command)


def command(ns: argparse.Namespace) -> int:
    """Replay the trace; print the summary and the measured wall time beside it."""
    from ..traces.load import load_trace
    from ..traces.replay import replay
    from ..traces.ti import read_ti
    trace = load_trace(ns.target)
    if trace.source == "simgrid-ti" and ns.flops_per_second != 1e9:
        trace = read_ti(ns.target, ns.flops_per_second)
    kwargs = options.apply_run_options(ns)
    result = replay(trace, machine=ns.machine,
                    network=ns.network if ns.network is not None or ns.machine is not None
                    else None, protocol=ns.protocol, collectives=options.collectives(ns),
                    contention=ns.contention, level=ns.level,
                    host_peak=ns.host_peak, compute_scale=ns.compute_scale, label=ns.target,
                    filesystem=ns.filesystem, **kwargs)
    options.finish_run_options(ns, result)
    if not ns.quiet:
        sys.stdout.write(result.summary())
        wall = trace.measured.get("wall")
        if wall:
            print(f"  measured  {wall:.6f} s (the recorded run); predicted / measured = "
                  f"{result.elapsed / wall:.3f}")
            cpu = [c for c in trace.measured.get("cpu", []) if c == c]
            if cpu and min(cpu) < 0.8 * wall:
                print(f"  the recorded ranks ran on a core {min(cpu) / wall:.0%}-"
                      f"{max(cpu) / wall:.0%} of that time (CPU seconds / wall): waits for "
                      "a core are in the measured time, not in the prediction")
    if ns.json:
        result.to_json(ns.json)
    return 0
