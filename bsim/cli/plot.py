"""``bsim plot FILE -o FILE.png``: a result's breakdown, a trace's timeline, a sweep's scaling.

The input is checked before anything is drawn: a file that is not what its
kind needs (a bsim result, a Chrome trace written by bsim, a sweep's CSV or
JSON) ends the command with one line naming the file and what is wrong.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
from pathlib import Path
from typing import Any, TypeGuard

from .compare import check_result, json_kind

__all__ = ["add_parser", "command", "kind_of", "read_input", "check_trace", "check_sweep",
           "timeline_options"]

KINDS = ("breakdown", "timeline", "scaling")
SPAN_CATS = ("calc", "wait", "comm")


def add_parser(subparsers: Any) -> None:
    """Register ``plot`` on the ``bsim`` subparsers."""
    pl = subparsers.add_parser("plot", help="plot a result, a trace or a sweep")
    pl.add_argument("input", help="result JSON (breakdown), trace JSON (timeline) or "
                    "sweep CSV/JSON (scaling)")
    pl.add_argument("--kind", choices=list(KINDS), default=None,
                    help="default: from the file's format")
    pl.add_argument("-o", "--output", required=True, metavar="FILE.png")
    pl.add_argument("--ranks", default=None, metavar="LIST", help="timeline: ranks, e.g. 0-15")
    pl.add_argument("--window", default=None, metavar="START:END",
                    help="timeline: time window in seconds")
    pl.add_argument("--title", default=None)
    pl.set_defaults(handler=command)


def read_input(path: str) -> tuple[str, Any]:
    """``("json", data)`` for a JSON file, ``("csv", None)`` for anything else (a sweep CSV).

    Raises ValueError naming the file when it is not UTF-8 text, or starts as
    JSON (``{`` or ``[``) but does not parse; ``OSError`` when it cannot be read.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a text file (not UTF-8)") from None
    try:
        return "json", json.loads(text)
    except json.JSONDecodeError as exc:
        if text.lstrip()[:1] in ("{", "["):
            raise ValueError(f"{path}: not valid JSON: {exc.msg} at line {exc.lineno} "
                             f"column {exc.colno}") from None
        return "csv", None
    except RecursionError:
        raise ValueError(f"{path}: not valid JSON: nested too deeply") from None


def kind_of(path: str) -> str:
    """``breakdown``, ``timeline`` or ``scaling`` from the file's content.

    Raises ValueError naming the file for one that is none of bsim's formats.
    """
    return _kind(path, *read_input(path))


def _kind(path: str, form: str, data: Any) -> str:
    """:func:`kind_of` for a file :func:`read_input` read as *form*, *data*."""
    if form == "csv":
        return "scaling"   # a sweep's CSV
    if isinstance(data, dict) and "traceEvents" in data:
        return "timeline"
    fmt = data.get("format") if isinstance(data, dict) else None
    if fmt == "bsim-sweep/1":
        return "scaling"
    if fmt == "bsim-result/1":
        return "breakdown"
    what = f"format {fmt!r}" if isinstance(data, dict) else json_kind(data)
    raise ValueError(f"{path}: not a bsim result, trace or sweep ({what}); give --kind")


def _number(v: Any) -> TypeGuard[float]:
    """A finite int or float that is not a bool."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _event_problem(ev: Any) -> str | None:
    """What keeps the timeline from drawing event *ev* (None: nothing)."""
    if not isinstance(ev, dict):
        return f"is {json_kind(ev)}, not an object"
    ph = ev.get("ph")
    needs: tuple[str, ...] = ()
    if ph == "X" and ev.get("cat") in SPAN_CATS:
        needs = ("tid", "ts", "dur", "name")
    elif ph in ("s", "f"):
        needs = ("tid", "ts", "id")
    for key in needs:
        v = ev.get(key)
        if key in ("ts", "dur") and not (_number(v) and (key == "ts" or v >= 0)):
            return f'has "{key}" {v!r}, not a finite number' + (" >= 0" if key == "dur" else "")
        if key == "tid" and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
            return f'has "tid" {v!r}, not a rank (an integer >= 0)'
        if key in ("id", "name") and not isinstance(v, (str, int)):
            return f'has "{key}" {v!r}, not a string or integer'
    return None


def check_trace(path: str, data: Any) -> dict[str, Any]:
    """*data* (parsed from *path*) as a trace the timeline can draw.

    Raises ValueError naming *path*: no ``traceEvents`` list, an event the
    timeline cannot read (which one, and why), or no calc/wait/comm span.
    """
    if isinstance(data, dict) and "traceEvents" not in data:
        raise ValueError(f'{path}: not a bsim trace: no "traceEvents" array')
    if not isinstance(data, (dict, list)):
        raise ValueError(f'{path}: not a bsim trace: {json_kind(data)}, not an object with '
                         f'"traceEvents"')
    events = data.get("traceEvents") if isinstance(data, dict) else data
    if not isinstance(events, list):
        raise ValueError(f'{path}: not a bsim trace: "traceEvents" must be an array, got '
                         f"{json_kind(events)}")
    for i, ev in enumerate(events):
        problem = _event_problem(ev)
        if problem is not None:
            raise ValueError(f"{path}: trace event {i} {problem}")
    if not any(ev.get("ph") == "X" and ev.get("cat") in SPAN_CATS for ev in events):
        raise ValueError(f"{path}: the trace has no calc, wait or comm span to draw")
    return {"traceEvents": events}


def timeline_options(path: str, trace: dict[str, Any], ranks: str | None,
                     window: str | None) -> tuple[Any, tuple[float, float] | None]:
    """``--ranks`` and ``--window`` for the checked *trace*: ``(rank set, (t0, t1))``.

    An open end (``0.01:``) becomes the trace's last span end.  Raises
    ValueError for a malformed value, or ranks none of which is in the trace.
    """
    from ..outputs.trace import parse_ranks, parse_window
    spans = [ev for ev in trace["traceEvents"]
             if ev.get("ph") == "X" and ev.get("cat") in SPAN_CATS]
    wanted = parse_ranks(ranks)
    present = {ev["tid"] for ev in spans}
    if wanted is not None and not wanted & present:
        raise ValueError(f"--ranks {ranks}: none of these ranks is in {path} (ranks "
                         f"{min(present)}-{max(present)})")
    span = parse_window(window)
    if span is not None and math.isinf(span[1]):
        last = max((ev["ts"] + ev["dur"]) * 1e-6 for ev in spans)
        if not span[0] < last:
            raise ValueError(f"--window {window} starts after {path} ends (t={last:.6g} s)")
        span = (span[0], last)
    return wanted, span


def _row_problem(row: Any) -> str | None:
    """What keeps the scaling plot from using sweep row *row* (None: nothing)."""
    if not isinstance(row, dict):
        return f"is {json_kind(row)}, not an object"
    ranks, elapsed = row.get("ranks"), row.get("elapsed")
    if not isinstance(ranks, int) or isinstance(ranks, bool) or ranks < 1:
        return f'has "ranks" {ranks!r}, not a positive integer'
    if not _number(elapsed) or elapsed < 0:
        return f'has "elapsed" {elapsed!r}, not a finite number of seconds >= 0'
    eff = row.get("efficiency")
    if eff not in (None, "") and not isinstance(eff, (int, float)):
        return f'has "efficiency" {eff!r}, not a number'
    return None


def check_sweep(path: str, form: str, data: Any) -> None:
    """Raise ValueError naming *path* unless it is a sweep with rows to plot.

    *form* and *data* are :func:`read_input`'s.  A JSON sweep needs
    ``"format": "bsim-sweep/1"`` and a ``rows`` array; a CSV, ``ranks`` and
    ``elapsed`` columns; every row a positive ``ranks`` and an ``elapsed`` >= 0.
    """
    from ..outputs.scaling import FORMAT, read_rows
    if form == "json":
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            what = (f"format {data.get('format')!r}" if isinstance(data, dict)
                    else json_kind(data))
            raise ValueError(f"{path}: not a bsim sweep ({what}, expected {FORMAT!r})")
        rows = data.get("rows")
        if not isinstance(rows, list):
            raise ValueError(f'{path}: "rows" must be an array, got {json_kind(rows)}')
    else:
        try:
            rows, _ = read_rows(path)
        except (ValueError, csv.Error) as exc:
            text = str(exc)   # read_rows names the file
            raise ValueError(text if text.startswith(f"{Path(path)}:") else
                             f"{path}: not a sweep CSV ({text})") from None
    if not rows:
        raise ValueError(f"{path}: the sweep has no rows")
    for i, row in enumerate(rows):
        problem = _row_problem(row)
        if problem is not None:
            raise ValueError(f"{path}: sweep row {i + 1} {problem}")


def command(ns: argparse.Namespace) -> int:
    """Check the input, then draw the figure of *ns.input* into *ns.output*."""
    from ..outputs import plots
    from .failures import check_outputs
    check_outputs(("-o", ns.output))
    plots.check_figure_path(ns.output)
    form, data = read_input(ns.input)
    kind = ns.kind or _kind(ns.input, form, data)
    if kind == "breakdown":
        if form == "csv":
            raise ValueError(f"{ns.input}: not a bsim result (not JSON)")
        plots.breakdown(check_result(ns.input, data), out=ns.output, title=ns.title)
    elif kind == "timeline":
        if form == "csv":
            raise ValueError(f"{ns.input}: not a bsim trace (not JSON)")
        trace = check_trace(ns.input, data)
        ranks, window = timeline_options(ns.input, trace, ns.ranks, ns.window)
        plots.timeline(trace, ranks=ranks, window=window, out=ns.output, title=ns.title)
    else:
        check_sweep(ns.input, form, data)
        plots.scaling(ns.input, out=ns.output, title=ns.title)
    print(f"wrote {ns.output}")
    return 0
