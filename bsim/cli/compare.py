"""``bsim compare A.json B.json``: what changed between two predictions (a what-if)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_parser", "command"]


def add_parser(subparsers: Any) -> None:
    """Register ``compare`` on the ``bsim`` subparsers."""
    cp = subparsers.add_parser("compare", help="compare two result JSON files (what-if)")
    cp.add_argument("a", metavar="A.json")
    cp.add_argument("b", metavar="B.json")
    cp.add_argument("--groups", type=int, default=8, help="rank groups (default 8)")
    cp.add_argument("--top", type=int, default=5, help="groups and ranks to list (default 5)")
    cp.set_defaults(handler=command)


def command(ns: argparse.Namespace) -> int:
    """Print the comparison report (``bsim.outputs.compare``)."""
    from ..outputs.compare import compare
    sys.stdout.write(compare(ns.a, ns.b, groups=ns.groups, top=ns.top))
    return 0
