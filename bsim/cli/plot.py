"""``bsim plot FILE -o FILE.png``: a result's breakdown, a trace's timeline, a sweep's scaling."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

__all__ = ["add_parser", "command", "kind_of"]


def add_parser(subparsers: Any) -> None:
    """Register ``plot`` on the ``bsim`` subparsers."""
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
    pl.set_defaults(handler=command)


def kind_of(path: str) -> str:
    """``breakdown``, ``timeline`` or ``scaling`` from the file's content.

    Raises ValueError for a file that is none of bsim's formats.
    """
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


def command(ns: argparse.Namespace) -> int:
    """Draw the figure of *ns.input* into *ns.output*."""
    from ..outputs import plots
    from .failures import check_outputs
    check_outputs(("-o", ns.output))
    kind = ns.kind or kind_of(ns.input)
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
