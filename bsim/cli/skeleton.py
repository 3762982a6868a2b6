"""``bsim skeleton TRACE -o app_skel.py``: an editable Python skeleton of a recorded run
(:mod:`bsim.traces.skeleton`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_parser", "command"]


def add_parser(subparsers: Any) -> None:
    """Register ``skeleton`` on the ``bsim`` subparsers."""
    p = subparsers.add_parser("skeleton", help="write a Python skeleton of a recorded trace")
    p.add_argument("target", metavar="TRACE")
    p.add_argument("-o", "--output", default="app_skel.py", metavar="FILE.py")
    p.set_defaults(handler=command)


def command(ns: argparse.Namespace) -> int:
    """Write the skeleton; say how to run it."""
    from ..traces.load import load_trace
    from ..traces.skeleton import write_skeleton
    trace = load_trace(ns.target)
    info = write_skeleton(trace, ns.output)
    print(f"{ns.output}: {info['loops']} loop(s), {info['blocks']} compute block(s), "
          f"{info['statements']} statements for {trace.calls():,} recorded calls; run it: "
          f"bsim run {ns.output} -n {trace.nranks}", file=sys.stderr)
    return 0
