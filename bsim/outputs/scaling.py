"""Scaling tables: the rows of a parameter sweep, their speedup and efficiency, their files.

A row is one simulated point: its parameters, ``ranks``, ``elapsed`` (s),
the mean ``calc``, ``wait`` and ``comm`` over ranks (s), ``host_seconds``,
``events``, ``ops``, and after :func:`add_efficiency` ``speedup`` and
``efficiency`` (strong scaling: ``S(P) = T(P0) / T(P)``, ``E(P) = S(P) P0 / P``;
weak scaling: ``E(P) = T(P0) / T(P)`` and the scaled speedup ``S(P) = E(P) P / P0``,
Gustafson's, the work per unit time against ``P0``'s; ``P0`` is the smallest rank count).
``bsim sweep`` (:mod:`bsim.cli.sweep`) makes them; ``bsim plot`` reads them.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from netmodels.spec import parse_value

from .files import atomic_write_text

__all__ = ["FORMAT", "COLUMNS", "add_efficiency", "write_csv", "write_json", "read_rows"]

FORMAT = "bsim-sweep/1"
COLUMNS = ["ranks", "elapsed", "calc", "wait", "comm", "host_seconds", "events", "ops",
           "speedup", "efficiency"]


def add_efficiency(rows: list[dict[str, Any]], mode: str) -> None:
    """Fill ``speedup`` and ``efficiency`` of *rows* (in place) as defined for *mode*."""
    if not rows:
        return
    p0 = min(r["ranks"] for r in rows)
    t0 = min(r["elapsed"] for r in rows if r["ranks"] == p0)
    for r in rows:
        t, p = r["elapsed"], r["ranks"]
        ratio = t0 / t if t > 0 else float("nan")
        if mode == "weak":   # work grows with P: the scaled speedup
            r["efficiency"], r["speedup"] = ratio, ratio * p / p0
        else:
            r["speedup"], r["efficiency"] = ratio, ratio * p0 / p


def _columns(rows: list[dict[str, Any]]) -> list[str]:
    keys = [k for k in rows[0] if k not in COLUMNS] if rows else []
    return keys + COLUMNS


def write_csv(rows: list[dict[str, Any]], path: str | Path) -> Path:
    """One row per point: parameters first, then :data:`COLUMNS` (floats exact); nested
    records (a sweep row's ``settings``) belong to the JSON and are left out."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    cols = [c for c in _columns(rows) if not any(isinstance(r.get(c), dict) for r in rows)]
    w.writerow(cols)
    for r in rows:
        w.writerow([repr(r[c]) if isinstance(r.get(c), float) else r.get(c, "") for c in cols])
    return atomic_write_text(path, buf.getvalue())


def write_json(rows: list[dict[str, Any]], path: str | Path, **meta: Any) -> Path:
    """``{"format": "bsim-sweep/1", ...meta, "rows": [...]}`` written atomically."""
    data = {"format": FORMAT, **meta, "rows": rows}
    return atomic_write_text(path, json.dumps(data, indent=1) + "\n")


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
