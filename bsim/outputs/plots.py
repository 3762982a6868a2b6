"""Figures of a prediction (matplotlib, the optional ``plot`` extra).

* :func:`breakdown`: per-rank stacked calc / wait / comm bars from a
  :class:`~bsim.outputs.result.Result` (or its JSON file).
* :func:`timeline`: a Gantt chart of a rank set from a Chrome trace written by
  :mod:`bsim.outputs.trace`, in the style of the tutorial's trace figures (modeling tutorial,
  "Trace Analysis with One Wavefront"): one row per rank, calc / wait / comm
  coloured, messages as thin lines from sender to receiver.
* :func:`scaling`: predicted time vs ranks (log-log, with the ideal line) and
  parallel efficiency vs ranks, from a sweep's rows or its CSV/JSON file.

Each returns a matplotlib ``Figure`` (built without pyplot, so no display or
global state is needed) and writes *out* atomically when given.  matplotlib
is imported lazily; without it a clear :class:`ImportError` says how to get it.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .files import atomic_write_bytes

__all__ = ["breakdown", "timeline", "scaling", "scaling_lines", "save", "read_trace_spans",
           "COLORS", "check_figure_path", "FORMATS"]

#: file formats matplotlib's Agg backend writes, by suffix (``Figure.savefig``)
FORMATS = ("png", "pdf", "svg", "svgz", "eps", "ps", "jpg", "jpeg", "tif", "tiff", "webp",
           "pgf", "raw", "rgba")

COLORS = {"calc": "#4c9a2a", "wait": "#d62728", "comm": "#1f77b4"}   # green, red, blue
KINDS = ("calc", "wait", "comm")


def _figure(width: float, height: float) -> Any:
    try:
        from matplotlib.figure import Figure
    except ImportError:   # pragma: no cover - depends on the environment
        raise ImportError("bsim plots need matplotlib: pip install 'bsim[plot]' "
                          "(or pip install matplotlib)") from None
    return Figure(figsize=(width, height), layout="constrained")


def check_figure_path(out: str | Path, option: str = "-o") -> None:
    """Before any work: *out*'s suffix must name a format in :data:`FORMATS` (none: png)
    and matplotlib must be installed, else one line naming the option and the path."""
    fmt = Path(out).suffix.lstrip(".").lower()
    if fmt and fmt not in FORMATS:
        raise ValueError(f"{option} {out}: a figure cannot be written as .{fmt}; use one of "
                         f"{', '.join('.' + f for f in FORMATS)}")
    import importlib.util
    if importlib.util.find_spec("matplotlib") is None:
        raise ImportError(f"{option} {out}: plotting needs matplotlib", name="matplotlib")


def save(fig: Any, out: str | Path, dpi: int = 120) -> Path:
    """Write *fig* to *out* atomically (format from the suffix, e.g. .png, .pdf, .svg).

    As every output (:mod:`bsim.outputs.files`): a link is followed, a device or
    FIFO written directly.
    """
    target = Path(out)
    fmt = target.suffix.lstrip(".").lower() or "png"
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=dpi)
    return atomic_write_bytes(target, buf.getvalue())


def _result(source: Any) -> Any:
    from .result import Result
    if isinstance(source, Result):
        return source
    return Result.from_json(source)


def breakdown(source: Any, out: str | Path | None = None, title: str | None = None) -> Any:
    """Stacked calc / wait / comm bars per rank (time in ms) from a Result or its JSON."""
    import numpy as np
    res = _result(source)
    n = res.ranks
    fig = _figure(max(7.5, min(14.0, 5.5 + n * 0.15)), 4.0)
    ax = fig.add_subplot()
    x = np.arange(n)
    bottom = np.zeros(n)
    width = 0.8 if n <= 64 else 1.0
    for kind in KINDS:
        vals = getattr(res, kind) * 1e3
        ax.bar(x, vals, width, bottom=bottom, color=COLORS[kind], label=kind,
               linewidth=0)
        bottom = bottom + vals
    ax.axhline(res.elapsed * 1e3, color="black", linestyle="--", linewidth=0.8,
               label=f"elapsed {res.elapsed * 1e3:.4g} ms")
    ax.set_xlabel("rank")
    ax.set_ylabel("time (ms)")
    ax.set_xlim(-0.5 if n <= 64 else -1, n - 0.5 if n <= 64 else n)
    ax.set_title(title or f"{res.program or 'program'} on {n} ranks: calc / wait / comm per rank")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
    if out is not None:
        save(fig, out)
    return fig


def read_trace_spans(source: Any) -> tuple[list[tuple[int, str, str, float, float]],
                                           list[tuple[int, int, float, float]]]:
    """Spans ``(rank, kind, name, start, end)`` and messages ``(src, dst, sent, received)``.

    *source* is a trace file path, its parsed dict, or a
    :class:`~bsim.outputs.trace.ChromeTracer`; times are converted back to seconds.
    """
    from .trace import ChromeTracer
    if isinstance(source, ChromeTracer):
        data = source.to_dict()
    elif isinstance(source, dict):
        data = source
    else:
        data = json.loads(Path(source).read_text(encoding="utf-8"))
    events = data["traceEvents"] if isinstance(data, dict) else data
    spans = []
    starts: dict[Any, tuple[int, float]] = {}
    msgs = []
    for ev in events:
        ph = ev.get("ph")
        if ph == "X" and ev.get("cat") in KINDS:
            t = ev["ts"] * 1e-6
            spans.append((ev["tid"], ev["cat"], ev["name"], t, t + ev["dur"] * 1e-6))
        elif ph == "s":
            starts[ev["id"]] = (ev["tid"], ev["ts"] * 1e-6)
        elif ph == "f" and ev["id"] in starts:
            src, sent = starts.pop(ev["id"])
            msgs.append((src, ev["tid"], sent, ev["ts"] * 1e-6))
    return spans, msgs


def timeline(source: Any, ranks: Iterable[int] | str | None = None,
             out: str | Path | None = None, window: tuple[float, float] | None = None,
             messages: bool = True, title: str | None = None, max_messages: int = 2000) -> Any:
    """Gantt chart of *ranks* (default: all in the trace) from a bsim Chrome trace.

    Time axis in ms; rank 0 at the top as in the tutorial's figures.
    *window* ``(t0, t1)`` in seconds zooms in.  Messages are drawn as lines
    from (send time, sender) to (receive time, receiver), up to *max_messages*.
    """
    from .trace import parse_ranks
    spans, msgs = read_trace_spans(source)
    wanted = parse_ranks(ranks) if ranks is not None else None
    rows = sorted({s[0] for s in spans} | {m[0] for m in msgs} | {m[1] for m in msgs})
    if wanted is not None:
        rows = [r for r in rows if r in wanted]
    pos = {r: i for i, r in enumerate(rows)}
    fig = _figure(10.0, max(2.5, min(12.0, 1.2 + 0.35 * len(rows))))
    ax = fig.add_subplot()
    bars: dict[str, list[tuple[float, float]]] = {k: [] for k in KINDS}
    ys: dict[str, list[int]] = {k: [] for k in KINDS}
    for rank, kind, _name, a, b in spans:
        if rank in pos:
            bars[kind].append((a * 1e3, (b - a) * 1e3))
            ys[kind].append(pos[rank])
    for kind in KINDS:   # one broken_barh call per kind and row keeps big traces fast
        by_row: dict[int, list[tuple[float, float]]] = {}
        for y, seg in zip(ys[kind], bars[kind], strict=True):
            by_row.setdefault(y, []).append(seg)
        for y, segs in by_row.items():
            ax.broken_barh(segs, (y - 0.4, 0.8), facecolors=COLORS[kind], linewidth=0,
                           label=kind if y == min(by_row) else None)
    if messages:
        drawn = [m for m in msgs if m[0] in pos and m[1] in pos][:max_messages]
        for src, dst, sent, recv in drawn:
            ax.plot([sent * 1e3, recv * 1e3], [pos[src], pos[dst]], color="black",
                    linewidth=0.5, alpha=0.6)
        if drawn:
            ax.plot([], [], color="black", linewidth=0.5, label="message")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([str(r) for r in rows] if len(rows) <= 64 else
                       [str(r) if i % max(1, len(rows) // 32) == 0 else ""
                        for i, r in enumerate(rows)])
    ax.set_ylim(len(rows) - 0.5, -0.5)
    if window is not None:
        ax.set_xlim(window[0] * 1e3, window[1] * 1e3)
    elif spans:
        lo = min(a for r, _, _, a, _ in spans if r in pos) if pos else 0.0
        hi = max(b for r, _, _, _, b in spans if r in pos) if pos else 1.0
        pad = 0.01 * (hi - lo) if hi > lo else 1e-6
        ax.set_xlim((lo - pad) * 1e3, (hi + pad) * 1e3)
    ax.set_xlabel("simulated time (ms)")
    ax.set_ylabel("rank")
    ax.set_title(title or f"timeline of {len(rows)} rank{'s' if len(rows) != 1 else ''}")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
    if out is not None:
        save(fig, out)
    return fig


def scaling_lines(rows: list[dict[str, Any]], mode: str = "grid") -> list[dict[str, Any]]:
    """The lines :func:`scaling` draws from sweep *rows*: one per problem.

    Rows that record the same baseline (``baseline_point``, ``bsim/outputs/scaling.py``)
    are one problem (a grid over two ``nx`` has two); rows without one (an older sweep)
    are one problem together.  Each line: ``label`` (the problem's parameters that differ
    between problems; ``"predicted"`` for a single problem), ``ranks`` (sorted), ``time_ms``
    and ``efficiency`` of the problem's fastest row at each rank count, and ``ideal_ms``
    (``T0 P0 / P`` from the first point, flat in weak mode).
    """
    from .scaling import COLUMNS, add_efficiency
    groups: dict[Any, list[dict[str, Any]]] = {}
    recorded = all(r.get("baseline_point") not in (None, "") for r in rows)
    for r in rows:
        groups.setdefault(r["baseline_point"] if recorded else None, []).append(r)
    members = list(groups.values())
    names = {k for r in rows for k in r} - set(COLUMNS) - {"settings"}
    # a problem's own parameters: one value within each problem, several across them
    own = [k for k in dict.fromkeys(k for r in rows for k in r if k in names)
           if all(len({str(r.get(k)) for r in g}) == 1 for g in members)
           and len({str(g[0].get(k)) for g in members}) > 1]
    lines = []
    for group in members:
        if any(r.get("efficiency") in ("", None) for r in group):
            group = [dict(r) for r in group]   # one problem: every other key a rank key
            add_efficiency(group, mode, rank_params={k for r in group for k in r})
        best: dict[int, dict[str, Any]] = {}
        for r in group:   # several points per rank count (a grid): keep the fastest
            p = int(r["ranks"])
            if p not in best or r["elapsed"] < best[p]["elapsed"]:
                best[p] = r
        ps = sorted(best)
        ts = [best[p]["elapsed"] * 1e3 for p in ps]
        label = ", ".join(f"{k}={group[0].get(k)}" for k in own) or "predicted"
        ideal = [ts[0]] * len(ps) if mode == "weak" else [ts[0] * ps[0] / p for p in ps]
        lines.append({"label": label, "ranks": ps, "time_ms": ts, "ideal_ms": ideal,
                      "efficiency": [best[p]["efficiency"] for p in ps],
                      "points": len(group)})
    return lines


def scaling(source: Any, out: str | Path | None = None, title: str | None = None) -> Any:
    """Time vs ranks (log-log, ideal line) and efficiency vs ranks from sweep rows or a
    file: one line, and one ideal line, per problem (:func:`scaling_lines`)."""
    from .scaling import read_rows
    meta: dict[str, Any] = {}
    if isinstance(source, (str, Path)):
        rows, meta = read_rows(source)
    else:
        rows = list(source)
    if not rows:
        raise ValueError("scaling plot: the sweep has no rows")
    mode = meta.get("mode", "grid")
    lines = scaling_lines(rows, mode)
    ps = sorted({p for line in lines for p in line["ranks"]})
    fig = _figure(10.0, 4.0)
    ax1, ax2 = fig.subplots(1, 2)
    if sum(len(line["ranks"]) for line in lines) < len(rows):
        ax1.scatter([int(r["ranks"]) for r in rows], [r["elapsed"] * 1e3 for r in rows],
                    s=12, color="grey", label="all points")
    single = len(lines) == 1
    ideal = "ideal (constant)" if mode == "weak" else "ideal (T ∝ 1/P)"
    for i, line in enumerate(lines):
        color = COLORS["comm"] if single else f"C{i % 10}"
        ax1.plot(line["ranks"], line["time_ms"], "o-", color=color, label=line["label"])
        ax1.plot(line["ranks"], line["ideal_ms"], "--", color="grey" if single else color,
                 linewidth=1.0 if single else 0.8,
                 label=ideal if single else f"{ideal}, {line['label']}")
        ax2.plot(line["ranks"], line["efficiency"], "o-",
                 color=COLORS["calc"] if single else color, label=line["label"])
    ax1.set_xscale("log", base=2)
    ax1.set_yscale("log")
    ax1.set_xlabel("ranks")
    ax1.set_ylabel("predicted time (ms)")
    ax1.set_title("time vs ranks")
    ax1.legend(fontsize="small")
    _plain_ticks(ax1, ps, y=True)
    ax2.axhline(1.0, color="grey", linestyle="--", linewidth=0.8)
    ax2.set_xscale("log", base=2)
    _plain_ticks(ax2, ps, y=False)
    eff = [e for line in lines for e in line["efficiency"]]
    ax2.set_ylim(0, max(1.05, max(eff) * 1.05))
    ax2.set_xlabel("ranks")
    ax2.set_ylabel(f"{'weak' if mode == 'weak' else 'strong'}-scaling efficiency")
    ax2.set_title("parallel efficiency")
    if not single:
        ax2.legend(fontsize="small")
    target = meta.get("target", "")
    fig.suptitle(title or f"scaling{' of ' + target if target else ''} ({mode} mode)")
    if out is not None:
        save(fig, out)
    return fig


def _plain_ticks(ax: Any, ps: list[int], y: bool) -> None:
    """Rank counts as plain x ticks; plain numbers instead of 4x10^1 on a log y axis."""
    from matplotlib.ticker import FuncFormatter, NullLocator
    if len(ps) <= 12:
        ax.set_xticks(ps, labels=[str(p) for p in ps])
        ax.xaxis.set_minor_locator(NullLocator())
    if y:
        plain = FuncFormatter(lambda v, _pos: f"{v:g}")
        ax.yaxis.set_major_formatter(plain)
        ax.yaxis.set_minor_formatter(plain)
