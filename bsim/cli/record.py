"""``bsim record -o TRACE -- mpiexec -n N ./app ARGS``: record a real run's MPI calls.

The command after ``--`` runs as given, with bsim's PMPI library preloaded
(:mod:`bsim.traces.record`); the trace goes to ``-o`` (OTF2 for ``*.otf2``, else bsim's
JSON).  The real run's wall time and its ranks' compute are printed.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_parser", "command"]


def add_parser(subparsers: Any) -> None:
    """Register ``record`` on the ``bsim`` subparsers."""
    p = subparsers.add_parser("record", help="record a real MPI run's calls (C, C++, "
                              "Fortran): bsim record -o T.otf2 -- mpiexec -n N ./app")
    p.add_argument("-o", "--output", default="trace.otf2", metavar="TRACE",
                   help="trace file: NAME.otf2 (OTF2, needs bsim[traces]) or NAME.json "
                        "(default trace.otf2)")
    p.add_argument("--mpicc", default=None,
                   help="the MPI compiler wrapper to build the recording library with "
                        "(default: the mpicc beside the launcher, else on the PATH)")
    p.add_argument("--keep-raw", default=None, metavar="DIR",
                   help="also keep the raw per-rank files in DIR")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="stop the program after this long")
    p.add_argument("--compute-clock", choices=("wall", "cpu"), default="wall",
                   help="compute between calls as wall seconds (default) or as the "
                        "thread's CPU seconds (without the time it waited for a core: "
                        "for a run on a shared machine; 2 more clock reads per call)")
    p.set_defaults(handler=command)


def command(ns: argparse.Namespace) -> int:
    """Record the run; print what it measured."""
    from ..traces.record import record
    if not ns.program_args:
        raise ValueError("bsim record: give the command after --, e.g. "
                         "bsim record -o app.otf2 -- mpiexec -n 4 ./app")
    trace = record(ns.program_args, ns.output, mpicc=ns.mpicc, keep_raw=ns.keep_raw,
                   timeout=ns.timeout, compute_clock=ns.compute_clock)
    sys.stdout.write(trace.measured.get("stdout", ""))
    compute = trace.compute_seconds()
    print(f"recorded {trace.nranks} ranks, {trace.calls():,} MPI calls -> {ns.output}\n"
          f"  wall {trace.measured['wall']:.6f} s (MPI_Init to MPI_Finalize; command "
          f"{trace.measured['command_wall']:.3f} s)\n"
          f"  compute per rank {min(compute):.6f} .. {max(compute):.6f} s", file=sys.stderr)
    return 0
