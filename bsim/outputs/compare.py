"""Compare two predictions (what-if studies): ``bsim compare A.json B.json``.

The report has three parts:

1. **Runs**: program, ranks, network and protocol of A and B.
2. **Phases**: elapsed time, and the calc / wait / comm totals (summed over
   ranks) and per-rank means, with ``B - A`` and ``B / A``.  The phase with
   the largest change of total time is named.
3. **Rank groups**: ranks are binned into *groups* contiguous groups (group g
   holds the ranks with ``g*N/G <= rank < (g+1)*N/G``; with different rank
   counts the groups are the same fractions of each run's ranks).  For each
   group the mean finish / calc / wait / comm of A and B are compared and the
   *top* groups with the largest absolute change (of finish or any phase) are
   listed, largest first, each led by its most changed phase (ties go to the
   groups whose own calc + comm changed: the cause, not the induced waiting).
   With equal rank counts the single ranks with the largest finish change
   follow.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from .result import Result, _fmt_time

__all__ = ["compare", "phase_table", "group_differences"]

PHASES = ("calc", "wait", "comm")


def _load(x: Result | str) -> Result:
    return x if isinstance(x, Result) else Result.from_json(x)


def phase_table(a: Result, b: Result) -> list[tuple[str, float, float]]:
    """``(label, A, B)`` rows: elapsed, then total and mean of calc, wait, comm."""
    rows = [("elapsed", a.elapsed, b.elapsed)]
    for p in PHASES:
        rows.append((f"{p} total", float(getattr(a, p).sum()), float(getattr(b, p).sum())))
    for p in PHASES:
        rows.append((f"{p} mean", float(getattr(a, p).mean()), float(getattr(b, p).mean())))
    return rows


def _groups(n: int, groups: int) -> list[tuple[int, int]]:
    g = max(1, min(groups, n))
    return [(i * n // g, (i + 1) * n // g) for i in range(g)]


def group_differences(a: Result, b: Result, groups: int = 8) -> list[dict[str, Any]]:
    """Per group: rank ranges in A and B; ``(A, B, B - A)`` means of finish and each phase;
    ``largest``, the phase that changed most; ``score``, the largest absolute change."""
    g = max(1, min(groups, a.ranks, b.ranks))
    out = []
    for (a0, a1), (b0, b1) in zip(_groups(a.ranks, g), _groups(b.ranks, g), strict=True):
        row: dict[str, Any] = {"ranks_a": (a0, a1 - 1), "ranks_b": (b0, b1 - 1)}
        for p in ("finish", *PHASES):
            va = float(getattr(a, p)[a0:a1].mean())
            vb = float(getattr(b, p)[b0:b1].mean())
            row[p] = (va, vb, vb - va)
        row["largest"] = max(PHASES, key=lambda p: abs(row[p][2]))   # ties: calc, wait, comm
        row["score"] = max(abs(row[p][2]) for p in ("finish", *PHASES))
        out.append(row)
    return out


def _ratio(a: float, b: float) -> str:
    if a == 0:
        return "   =" if b == 0 else "  new"
    return f"{b / a:7.3f}x"


def _span(r: tuple[int, int]) -> str:
    return f"{r[0]}" if r[0] == r[1] else f"{r[0]}-{r[1]}"


def compare(a: Result | str, b: Result | str, groups: int = 8, top: int = 5,
            names: tuple[str, str] = ("A", "B"), paths: tuple[str, str] | None = None) -> str:
    """The comparison report of *a* and *b* (Results or JSON paths) as text; *paths* name
    the files Results were read from (a path given as *a* or *b* names itself)."""
    ra, rb = _load(a), _load(b)
    na, nb = names
    out = io.StringIO()
    w = out.write
    w("bsim compare\n")
    sources = paths or (a, b)
    for label, r, src in ((na, ra, sources[0]), (nb, rb, sources[1])):
        where = f" ({src})" if isinstance(src, str) else ""
        w(f"  {label}: {r.program or 'program'} on {r.ranks} ranks, network {r.network or '?'}, "
          f"protocol {r.protocol or '?'}{where}\n"
          f"     model {r.model_level or '?'}; calc from {r.compute_source}\n")
    if ra.params != rb.params:
        keys = sorted(set(ra.params) | set(rb.params))
        diff = [f"{k}: {ra.params.get(k)!r} -> {rb.params.get(k)!r}" for k in keys
                if ra.params.get(k) != rb.params.get(k)]
        w("  params differ: " + "; ".join(diff) + "\n")
    # what else shaped the predictions: the header shows the rest
    if ra.inputs != rb.inputs:
        keys = sorted(set(ra.inputs) | set(rb.inputs))
        diff = [f"{k}: {ra.inputs.get(k, 'none')} -> {rb.inputs.get(k, 'none')}" for k in keys
                if ra.inputs.get(k) != rb.inputs.get(k)]
        w("  input files differ: " + "; ".join(diff) + "\n")
    for what in ("machine", "kernel_model", "compute", "collectives", "contention", "noise",
                 "filesystem", "modules", "version"):
        va, vb = getattr(ra, what), getattr(rb, what)
        if va != vb:
            label = "bsim version" if what == "version" else what.replace("_", " ")
            w(f"  {label} differ: {va or 'none'!s} -> {vb or 'none'!s}\n")

    w(f"\n  {'phase':<12}{na:>14}{nb:>14}{nb + ' - ' + na:>14}{nb + '/' + na:>10}\n")
    for label, va, vb in phase_table(ra, rb):
        w(f"  {label:<12}{_fmt_time(va):>14}{_fmt_time(vb):>14}{_fmt_time(vb - va):>14}"
          f"{_ratio(va, vb):>10}\n")
    deltas = {p: float(getattr(rb, p).sum() - getattr(ra, p).sum()) for p in PHASES}
    main = max(PHASES, key=lambda p: abs(deltas[p]))
    de = rb.elapsed - ra.elapsed
    if de == 0 and all(v == 0 for v in deltas.values()):
        w("\n  no difference in elapsed time or phase totals\n")
    else:
        pct = f" ({100 * de / ra.elapsed:+.1f}%)" if ra.elapsed else ""
        w(f"\n  elapsed changes by {_fmt_time(de)}{pct}; the largest change of total time is "
          f"{main} ({_fmt_time(deltas[main])} over all ranks)\n")

    rows = group_differences(ra, rb, groups)
    same = ra.ranks == rb.ranks
    w(f"\n  rank groups ({len(rows)} groups{'' if same else ', by fraction of ranks'}), "
      f"largest differences first:\n")
    hdr = "ranks" if same else f"ranks {na} / {nb}"
    w(f"  {hdr:<16}{'phase':<8}{na:>14}{nb:>14}{nb + ' - ' + na:>14}\n")
    # ties (a collective spreads one group's delay to all) go to groups whose own work
    # (calc + comm) changed: the cause rather than the waiting it induces
    ranked = sorted(rows, key=lambda r: (-r["score"], -abs(r["calc"][2]) - abs(r["comm"][2])))
    ranked = ranked[:top]
    for g in ranked:
        label = _span(g["ranks_a"]) if same else f"{_span(g['ranks_a'])} / {_span(g['ranks_b'])}"
        p = g["largest"]
        va, vb, dv = g[p]
        w(f"  {label:<16}{p:<8}{_fmt_time(va):>14}{_fmt_time(vb):>14}{_fmt_time(dv):>14}\n")
        for q in ("finish", *PHASES):
            if q != p and g[q][2] != 0:
                qa, qb, dq = g[q]
                w(f"  {'':<16}{q:<8}{_fmt_time(qa):>14}{_fmt_time(qb):>14}{_fmt_time(dq):>14}\n")
    if same and ra.ranks > 1:
        d = rb.finish - ra.finish
        order = np.argsort(-np.abs(d), kind="stable")[:top]
        if np.abs(d[order]).max(initial=0.0) > 0:
            w("\n  ranks with the largest finish change:\n")
            for i in order:
                if d[i] == 0:
                    break
                w(f"  rank {int(i):<10} {_fmt_time(ra.finish[i]):>14} -> "
                  f"{_fmt_time(rb.finish[i]):<14} ({_fmt_time(d[i])})\n")
    return out.getvalue()
