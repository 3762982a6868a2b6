"""Reading and interpolating the measured tables of the ``table`` collective model.

``read_csv`` parses ``op,nprocs,nbytes,seconds`` rows (naming file and line in
every error); ``interp`` interpolates linearly between measured points and
decides what happens beyond them (``extrapolate``, ``clamp``, ``error``).
"""

from __future__ import annotations

import csv
import warnings
from bisect import bisect_right
from pathlib import Path

from .collective_algorithms import CollectiveSpecError
from .input_files import note_input

__all__ = ["interp", "read_csv", "far_outside", "warn_far", "FAR", "ExtrapolationWarning"]

FAR = 2.0
"""A table call this many times beyond the measured ranks or sizes warns (once per op)."""


class ExtrapolationWarning(UserWarning):
    """A collective table is used far outside what it measured."""


def warn_far(where: str, name: str, far: list[str]) -> None:
    """Warn that a call of *name* lies *far* (:func:`far_outside`) beyond table *where*."""
    warnings.warn(f"collective table {where}: {name} at {' and '.join(far)} is extrapolated "
                  f"more than {FAR:g}x beyond what was measured (outside=extrapolate); "
                  f"measure there or use outside=clamp|error", ExtrapolationWarning,
                  stacklevel=4)


def far_outside(ps: list[int], rows: list[tuple[list[float], list[float]]], nprocs: int,
                nbytes: float) -> list[str]:
    """What of a call (ranks, size) lies more than :data:`FAR` times beyond the measured
    process counts *ps* and the sizes of *rows*: one phrase each, empty when none."""
    sizes = [x for row in rows for x in row[0]]
    far = []
    if nprocs > FAR * ps[-1] or nprocs * FAR < ps[0]:
        far.append(f"{nprocs} ranks (measured {ps[0]}..{ps[-1]})")
    if sizes and max(sizes) > 0 and (nbytes > FAR * max(sizes) or 0 < nbytes * FAR < min(sizes)):
        far.append(f"{nbytes:g} bytes (measured {min(sizes):g}..{max(sizes):g})")
    return far


def interp(xs: list[float], ys: list[float], x: float, outside: str, what: str) -> float:
    """Piecewise-linear ``y(x)`` through sorted *xs*; *outside* rules beyond the ends."""
    if len(xs) == 1:
        return ys[0]
    if x < xs[0] or x > xs[-1]:
        if outside == "error":
            raise CollectiveSpecError(f"table: {what} {x} outside measured range "
                                      f"[{xs[0]}, {xs[-1]}]")
        if outside == "clamp":
            return ys[0] if x < xs[0] else ys[-1]
        i = 0 if x < xs[0] else len(xs) - 2
    else:
        i = min(bisect_right(xs, x) - 1, len(xs) - 2)
    w = (x - xs[i]) / (xs[i + 1] - xs[i])
    return ys[i] * (1.0 - w) + ys[i + 1] * w        # exact at both segment ends


def read_csv(path: Path) -> list[tuple[str, str, int, float, float]]:
    try:
        text = path.read_text()
    except OSError as exc:
        raise CollectiveSpecError(f"table: cannot read {path}: {exc.strerror}") from None
    note_input("collective table", path, text)
    lines = [(i, ln) for i, ln in enumerate(text.splitlines(), 1)
             if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        raise CollectiveSpecError(f"table {path}: empty file")
    reader = csv.reader([ln for _, ln in lines])
    header = [h.strip().lower() for h in next(reader)]
    need = ("op", "nprocs", "nbytes", "seconds")
    missing = [c for c in need if c not in header]
    if missing:
        raise CollectiveSpecError(f"{path}:{lines[0][0]}: missing column(s) {', '.join(missing)}"
                                  f"; need {', '.join(need)}")
    col = {c: header.index(c) for c in need}
    out = []
    for (lineno, _), fields in zip(lines[1:], reader, strict=False):
        loc = f"{path}:{lineno}"
        try:
            op = fields[col["op"]].strip()
            raw = {c: fields[col[c]].strip() for c in need[1:]}
        except IndexError:
            raise CollectiveSpecError(f"{loc}: expected {len(header)} fields, got "
                                      f"{len(fields)}") from None
        try:
            nprocs_f, nbytes, seconds = (float(raw[c]) for c in need[1:])
        except ValueError:
            raise CollectiveSpecError(f"{loc}: nprocs, nbytes and seconds must be numbers, "
                                      f"got {list(raw.values())}") from None
        if not nprocs_f.is_integer():
            raise CollectiveSpecError(f"{loc}: nprocs must be an integer, got {raw['nprocs']}")
        out.append((loc, op, int(nprocs_f), nbytes, seconds))
    return out
