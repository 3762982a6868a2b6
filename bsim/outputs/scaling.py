"""Scaling tables: the rows of a parameter sweep, their speedup and efficiency, their files.

A row is one simulated point: its parameters, ``ranks``, ``elapsed`` (s),
the mean ``calc``, ``wait`` and ``comm`` over ranks (s), ``host_seconds``,
``events``, ``ops``, when the run counts its floating-point operations ``flops``,
``flop_rate`` (``flops / elapsed``, flop/s) and, when the machine's peak is known,
``peak_flops`` (flop/s) and ``peak_fraction`` (``flop_rate / peak_flops``), and after
:func:`add_efficiency` ``speedup`` and ``efficiency`` (strong scaling:
``S(P) = T(P0) / T(P)``, ``E(P) = S(P) P0 / P``; weak scaling: ``E(P) = T(P0) / T(P)`` and
the scaled speedup ``S(P) = E(P) P / P0``, Gustafson's, the work per unit time against
``P0``'s) with the baseline they were taken against: ``baseline_point`` (its 1-based row),
``baseline_ranks`` (``P0``) and ``baseline_elapsed`` (``T(P0)``).  The baseline is per
problem: rows whose parameters other than the rank parameters are equal form one problem,
and its baseline is its fastest row among its fewest ranks (weak scaling: the whole sweep
is one problem, grown with the ranks).
``bsim sweep`` (:mod:`bsim.cli.sweep`) makes them; ``bsim plot`` reads them.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Collection
from pathlib import Path
from typing import Any

from netmodels.spec import parse_value

from .files import atomic_write_text

__all__ = ["FORMAT", "COLUMNS", "OPTIONAL", "problem_key", "add_efficiency", "write_csv",
           "csv_text", "write_json", "json_text", "read_rows"]

FORMAT = "bsim-sweep/1"
COLUMNS = ["ranks", "elapsed", "calc", "wait", "comm", "host_seconds", "events", "ops",
           "flops", "flop_rate", "peak_flops", "peak_fraction",
           "speedup", "efficiency", "baseline_point", "baseline_ranks", "baseline_elapsed"]
"""The measured columns, in file order (after the parameters); ``flops`` to
``peak_fraction`` only when a row has them."""
OPTIONAL = ("flops", "flop_rate", "peak_flops", "peak_fraction")
"""Columns present only for runs that count their operations (and know the peak)."""


def problem_key(row: dict[str, Any], rank_params: Collection[str] = ("ranks",)
                ) -> tuple[tuple[str, str], ...]:
    """The problem a row ran: its parameters other than *rank_params* and the measured
    columns (:data:`COLUMNS`, ``settings``), as sorted ``(name, str(value))`` pairs."""
    skip = set(COLUMNS) | set(rank_params) | {"settings"}
    return tuple(sorted((k, str(v)) for k, v in row.items() if k not in skip))


def add_efficiency(rows: list[dict[str, Any]], mode: str,
                   rank_params: Collection[str] = ("ranks",)) -> None:
    """Fill ``speedup``, ``efficiency`` and the ``baseline_*`` columns of *rows* (in place).

    Each row is measured against its problem's baseline: grid mode groups rows by
    :func:`problem_key` (a grid of two problem sizes has two baselines); strong and weak
    modes take the whole sweep as one problem, fixed or grown with the ranks (a strong
    sweep of a per-rank size, SAGE's ``cells``, changes that parameter with the ranks).
    A group's baseline is its fastest row among its fewest ranks ``P0`` (time ``T0``).
    Strong/grid: ``S(P) = T0 / T(P)``, ``E(P) = S(P) * P0 / P``; weak: ``E(P) = T0 / T(P)``,
    ``S(P) = E(P) * P / P0`` (the scaled speedup).  ``T(P) = 0`` gives NaN.
    """
    groups: dict[Any, list[int]] = {}
    for i, r in enumerate(rows):
        key = () if mode in ("strong", "weak") else problem_key(r, rank_params)
        groups.setdefault(key, []).append(i)
    for members in groups.values():
        p0 = min(rows[i]["ranks"] for i in members)
        base = min((i for i in members if rows[i]["ranks"] == p0),
                   key=lambda i: rows[i]["elapsed"])   # the first of equal times
        t0 = rows[base]["elapsed"]
        for i in members:
            r = rows[i]
            t, p = r["elapsed"], r["ranks"]
            ratio = t0 / t if t > 0 else float("nan")
            if mode == "weak":   # work grows with P: the scaled speedup
                r["efficiency"], r["speedup"] = ratio, ratio * p / p0
            else:
                r["speedup"], r["efficiency"] = ratio, ratio * p0 / p
            r.update(baseline_point=base + 1, baseline_ranks=p0, baseline_elapsed=t0)


def _columns(rows: list[dict[str, Any]]) -> list[str]:
    """Parameters (every row's, first-seen order), then :data:`COLUMNS` (the optional
    ones only when some row has them)."""
    present = {k for r in rows for k in r}
    keys = list(dict.fromkeys(k for r in rows for k in r if k not in COLUMNS))
    return keys + [c for c in COLUMNS if c not in OPTIONAL or c in present]


def write_csv(rows: list[dict[str, Any]], path: str | Path) -> Path:
    """One row per point: parameters first, then :data:`COLUMNS` (floats exact); nested
    records (a sweep row's ``settings``) belong to the JSON and are left out."""
    return atomic_write_text(path, csv_text(rows))


def csv_text(rows: list[dict[str, Any]]) -> str:
    """The CSV document :func:`write_csv` writes."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    cols = [c for c in _columns(rows) if not any(isinstance(r.get(c), dict) for r in rows)]
    w.writerow(cols)
    for r in rows:
        w.writerow([repr(r[c]) if isinstance(r.get(c), float) else r.get(c, "") for c in cols])
    return buf.getvalue()


def write_json(rows: list[dict[str, Any]], path: str | Path, **meta: Any) -> Path:
    """``{"format": "bsim-sweep/1", ...meta, "rows": [...]}`` written atomically."""
    return atomic_write_text(path, json_text(rows, **meta))


def json_text(rows: list[dict[str, Any]], **meta: Any) -> str:
    """The JSON document :func:`write_json` writes."""
    return json.dumps({"format": FORMAT, **meta, "rows": rows}, indent=1) + "\n"


def read_rows(path: str | Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Rows and metadata of a sweep written by :func:`write_csv` or :func:`write_json`."""
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    if text.lstrip().startswith("{"):
        data = json.loads(text)
        if data.get("format") != FORMAT:
            raise ValueError(f"{p}: not a bsim sweep (format {data.get('format')!r})")
        meta = {k: v for k, v in data.items() if k != "rows"}
        return data["rows"], meta
    rows = []
    for rec in csv.DictReader(io.StringIO(text)):
        rows.append({k: parse_value(v) for k, v in rec.items()})
    if rows and not {"ranks", "elapsed"} <= set(rows[0]):
        raise ValueError(f"{p}: a sweep CSV needs 'ranks' and 'elapsed' columns")
    return rows, {}
