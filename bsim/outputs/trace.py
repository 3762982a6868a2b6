"""Timeline export in the Chrome Trace Event format (Perfetto, chrome://tracing).

:class:`ChromeTracer` implements the engine's ``tracer`` hook
(:class:`bsim.engine.hooks.Tracer`) and writes one JSON object file::

    {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}

Mapping (``docs/outputs.md`` has the full table):

* **Tracks**: one per virtual rank.  ``pid = 1 + rank // node_size`` (one
  process for the whole run unless *node_size* groups ranks into nodes) and
  ``tid = rank``.  Metadata events (``ph: "M"``) name them: ``process_name``
  ("bsim: PROGRAM" or "node K"), ``thread_name`` ("rank R") and
  ``thread_sort_index`` = rank, so tracks appear in rank order.
* **Spans**: complete events (``ph: "X"``) with ``name`` = the MPI call
  (``add_time`` for calc), ``cat`` = ``calc``/``wait``/``comm``, ``ts`` and
  ``dur`` in microseconds of simulated time (rounded to the picosecond;
  the format's unit), and ``cname`` colouring them in
  chrome://tracing.  Adjacent spans of one rank with the same kind and name
  are merged (``args.merged`` counts them), which keeps loops of tiny calls
  small.
* **Messages**: a flow start (``ph: "s"``) on the sender's track at the send
  time and a flow finish (``ph: "f"``, ``bp: "e"``) on the receiver's track at
  the time the receive completed, with the same ``id``, ``cat`` = "message"
  and ``name`` = "msg".  Each end binds to a zero-duration ``X`` marker
  (``send`` / ``recv``, ``cat`` "message", args ``src``, ``dst``,
  ``nbytes``, ``tag``) emitted just before it at the same timestamp: a
  flow's binding slice must enclose its timestamp, and a send under the
  ``bsim`` protocol takes no time, so no calc/wait/comm span encloses it.

Bounding the size: *ranks* (a set, or ``"0-63,100"``) records only those
ranks (a message only when both ends are recorded), *window* ``(t0, t1)``
clips spans to ``[t0, t1]`` and keeps messages sent and received inside it,
and *max_events* stops recording once that many events are held: a warning
goes to stderr at once, into ``otherData.warning`` and as a global instant
event ``TRACE TRUNCATED`` at the simulated time where recording stopped.
A run that fails or is interrupted keeps what was traced up to then
(:meth:`ChromeTracer.mark_incomplete`: ``otherData.incomplete``).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterable
from operator import itemgetter
from pathlib import Path
from typing import Any, TextIO

from .files import atomic_write_text

__all__ = ["ChromeTracer", "TraceDeadline", "parse_ranks", "parse_window", "FORMAT",
           "DEFAULT_MAX_EVENTS"]

FORMAT = "bsim-trace/1"          # otherData.format: marks a trace written by bsim
DEFAULT_MAX_EVENTS = 1_000_000   # about 120 MB of JSON
US = 1e6                         # seconds -> microseconds (the format's ts unit)
KINDS = ("calc", "wait", "comm")
# chrome://tracing reserved colour names (Perfetto colours by name instead)
CNAME = {"calc": "good", "wait": "terrible", "comm": "rail_load"}


def parse_ranks(text: str | Iterable[int] | None) -> frozenset[int] | None:
    """``"0-63,100"`` -> the set of those ranks; None or ``"all"`` -> None (every rank)."""
    if text is None:
        return None
    if not isinstance(text, str):
        return frozenset(int(r) for r in text)
    if text.strip().lower() in ("", "all"):
        return None
    out: set[int] = set()
    for item in text.split(","):
        lo, dash, hi = item.strip().partition("-")
        try:
            a = int(lo)
            b = int(hi) if dash else a
        except ValueError:
            raise ValueError(f"rank list {text!r}: expected items like 5 or 0-63, "
                             f"got {item!r}") from None
        if a < 0 or b < a:
            raise ValueError(f"rank list {text!r}: bad range {item!r}")
        out.update(range(a, b + 1))
    return frozenset(out)


def parse_window(text: str | tuple[float, float] | None) -> tuple[float, float] | None:
    """``"START:END"`` in seconds (either side may be empty) -> ``(t0, t1)``; None -> None."""
    if text is None:
        return None
    if not isinstance(text, str):
        t0, t1 = float(text[0]), float(text[1])
    else:
        lo, colon, hi = text.partition(":")
        if not colon:
            raise ValueError(f"time window {text!r}: expected START:END in seconds")
        try:
            t0 = float(lo) if lo.strip() else 0.0
            t1 = float(hi) if hi.strip() else float("inf")
        except ValueError:
            raise ValueError(f"time window {text!r}: START and END must be numbers") from None
    if not t0 < t1:
        raise ValueError(f"time window ({t0!r}, {t1!r}): START must be < END")
    return t0, t1


class TraceDeadline(Exception):
    """The trace's text was not done by :attr:`ChromeTracer.deadline` (nothing written)."""


class ChromeTracer:
    """A :class:`~bsim.engine.hooks.Tracer` that writes a Chrome Trace Event JSON file.

    *ranks* restricts recording to a rank subset (:func:`parse_ranks`),
    *window* to a time window in seconds (:func:`parse_window`), and
    *max_events* caps the number of events held (then recording stops with a
    warning on *stream*).  *node_size* > 0 groups every *node_size* ranks
    into one process track ("node K").  *merge* joins adjacent spans of the
    same kind and name.  Call :meth:`write` after the run.
    """

    def __init__(self, ranks: str | Iterable[int] | None = None,
                 window: str | tuple[float, float] | None = None,
                 max_events: int = DEFAULT_MAX_EVENTS, node_size: int = 0,
                 merge: bool = True, program: str = "",
                 stream: TextIO | None = None) -> None:
        if max_events < 1:
            raise ValueError(f"max_events must be >= 1, got {max_events!r}")
        if node_size < 0:
            raise ValueError(f"node_size must be >= 0, got {node_size!r}")
        self.ranks = parse_ranks(ranks)
        self.window = parse_window(window)
        self.max_events = int(max_events)
        self.node_size = int(node_size)
        self.merge = merge
        self.program = program
        self.stream = stream
        # spans: (rank, kind, name, start, end, merged); open: rank -> pending span
        self.spans: list[tuple[int, str, str, float, float, int]] = []
        self.open: dict[int, list[Any]] = {}
        # messages: (id, src, dst, nbytes, tag, sent, received)
        self.messages: list[tuple[int, int, int, int, int, float, float]] = []
        self.seen: set[int] = set()
        self.count = 0                    # events held (a message counts 4: 2 markers, 2 flows)
        self.truncated_at: float | None = None
        self.dropped = 0
        self.incomplete: dict[str, Any] | None = None   # set when the run failed
        self.deadline: float | None = None   # time.monotonic() by which text() must end

    @property
    def recorded(self) -> bool:
        """True once anything is held (a span or a message)."""
        return bool(self.spans or self.open or self.messages)

    def last_time(self) -> float:
        """The latest simulated time recorded (0 when nothing is)."""
        ends = [s[4] for s in self.spans] + [o[3] for o in self.open.values()]
        return max(ends + [m[6] for m in self.messages], default=0.0)

    def mark_incomplete(self, error: str, sim_time: float | None = None) -> None:
        """Record that the run stopped early with *error* (one line; at *sim_time* when
        known): the file is then what was traced up to it, and ``otherData.incomplete``
        says so (``{"error", "sim_time", "last_event"}``)."""
        self.incomplete = {"error": error, "sim_time": sim_time, "last_event": self.last_time()}

    # -- the Tracer hook ------------------------------------------------------
    def span(self, rank: int, kind: str, name: str, start: float, end: float) -> None:
        """Record that *rank* spent ``[start, end)`` in *kind* of *name*."""
        if self.ranks is not None and rank not in self.ranks:
            return
        if self.window is not None:
            t0, t1 = self.window
            if end <= t0 or start >= t1:
                return
            start, end = max(start, t0), min(end, t1)
        cur = self.open.get(rank)
        if cur is not None:
            # the engine computes some starts as end - cost: snap an overlap or gap of a
            # few ulps to the previous end so spans tile the rank's timeline exactly
            if abs(start - cur[3]) <= 1e-12 * abs(start):
                start = cur[3]
            # merge: same kind and name, contiguous in time (the common loop case)
            if self.merge and cur[0] == kind and cur[1] == name and cur[3] == start:
                cur[3] = end
                cur[4] += 1
                return
            self.spans.append((rank, cur[0], cur[1], cur[2], cur[3], cur[4]))
        elif rank not in self.seen:
            self.seen.add(rank)
        if not self._room(1, start):
            self.open.pop(rank, None)
            return
        self.open[rank] = [kind, name, start, end, 1]

    def message(self, src: int, dst: int, nbytes: int, tag: int, sent: float,
                received: float) -> None:
        """Record a message as a flow from *src* at *sent* to *dst* at *received*."""
        rs = self.ranks
        if rs is not None and (src not in rs or dst not in rs):
            return
        if self.window is not None:
            t0, t1 = self.window
            if sent < t0 or received > t1:
                return
        if not self._room(4, sent):
            return
        self.seen.add(src)
        self.seen.add(dst)
        self.messages.append((len(self.messages), src, dst, nbytes, tag, sent, received))

    def _room(self, n: int, t: float) -> bool:
        """Reserve *n* events; on the first refusal record where and warn."""
        if self.truncated_at is not None:
            self.dropped += n
            return False
        if self.count + n > self.max_events:
            self.truncated_at = t
            self.dropped += n
            if self.stream is not None or sys.stderr is not None:
                print(f"bsim: warning: {self.warning()}", file=self.stream or sys.stderr)
            return False
        self.count += n
        return True

    def warning(self) -> str:
        """The truncation message ('' while recording is complete)."""
        if self.truncated_at is None:
            return ""
        return (f"trace truncated at t={self.truncated_at!r} s: reached max_events="
                f"{self.max_events}; later events were not recorded (record fewer ranks "
                f"with --trace-ranks, a time window with --trace-window, or raise "
                f"--trace-max-events)")

    # -- output -----------------------------------------------------------------
    def _flush(self) -> None:
        for rank, (kind, name, start, end, merged) in self.open.items():
            self.spans.append((rank, kind, name, start, end, merged))
        self.open.clear()

    def _pid(self, rank: int) -> int:
        return 1 + (rank // self.node_size if self.node_size else 0)

    def events(self) -> list[dict[str, Any]]:
        """All trace events: metadata, spans, message markers and flows (timestamp order)."""
        self._flush()
        out: list[dict[str, Any]] = []
        # process metadata carries the tid of the process's first rank: viewers key
        # threads by tid alone, so a made-up tid would move a rank to another process
        first: dict[int, int] = {}
        for r in sorted(self.seen):
            first.setdefault(self._pid(r), r)
        for pid, tid in first.items():
            pname = (f"node {pid - 1}" if self.node_size else
                     f"bsim: {self.program or 'program'}")
            out.append({"name": "process_name", "ph": "M", "pid": pid, "tid": tid,
                        "args": {"name": pname}})
            out.append({"name": "process_sort_index", "ph": "M", "pid": pid, "tid": tid,
                        "args": {"sort_index": pid}})
        for rank in sorted(self.seen):
            pid = self._pid(rank)
            out.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": rank,
                        "args": {"name": f"rank {rank}"}})
            out.append({"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": rank,
                        "args": {"sort_index": rank}})
        timed: list[tuple[float, int, dict[str, Any]]] = []
        for i, (rank, kind, name, start, end, merged) in enumerate(self.spans):
            if not i & 8191:
                self._check_deadline()
            ts = _us(start)
            ev = {"name": name, "cat": kind, "ph": "X", "ts": ts,
                  "dur": round(_us(end) - ts, 6), "pid": self._pid(rank), "tid": rank,
                  "cname": CNAME.get(kind, "generic_work")}
            if merged > 1:
                ev["args"] = {"merged": merged}
            timed.append((start, 0, ev))
        for i, (fid, src, dst, nbytes, tag, sent, received) in enumerate(self.messages):
            if not i & 4095:
                self._check_deadline()
            args = {"src": src, "dst": dst, "nbytes": nbytes, "tag": tag}
            ps, pd = self._pid(src), self._pid(dst)
            # order at equal times: a receive's end before spans starting then (keys
            # -2, -1), a send after them (1, 2); each marker right before its flow event
            timed.append((sent, 1, {"name": "send", "cat": "message", "ph": "X",
                                    "ts": _us(sent), "dur": 0.0, "pid": ps, "tid": src,
                                    "args": args}))
            timed.append((sent, 2, {"name": "msg", "cat": "message", "ph": "s", "id": fid,
                                    "ts": _us(sent), "pid": ps, "tid": src}))
            timed.append((received, -2, {"name": "recv", "cat": "message", "ph": "X",
                                         "ts": _us(received), "dur": 0.0, "pid": pd,
                                         "tid": dst, "args": args}))
            timed.append((received, -1, {"name": "msg", "cat": "message", "ph": "f",
                                         "bp": "e", "id": fid, "ts": _us(received),
                                         "pid": pd, "tid": dst}))
        if self.truncated_at is not None:
            timed.append((self.truncated_at, 3, {
                "name": "TRACE TRUNCATED", "cat": "bsim", "ph": "i", "s": "g",
                "ts": _us(self.truncated_at), "pid": min(first, default=1),
                "tid": first[min(first)] if first else 0,
                "args": {"warning": self.warning()}}))
        timed.sort(key=_order)
        out.extend(ev for _, _, ev in timed)
        return out

    def to_dict(self) -> dict[str, Any]:
        """The whole JSON object (``traceEvents`` plus ``otherData``)."""
        events = self.events()
        other: dict[str, Any] = {
            "format": FORMAT, "program": self.program, "time_unit": "us (simulated)",
            "ranks_recorded": len(self.seen), "spans": len(self.spans),
            "messages": len(self.messages), "max_events": self.max_events,
            "rank_filter": _ranks_text(self.ranks),
            "window": list(self.window) if self.window else None,
        }
        if self.truncated_at is not None:
            other["warning"] = self.warning()
            other["truncated_at"] = self.truncated_at
            other["dropped_events"] = self.dropped
        if self.incomplete is not None:
            other["incomplete"] = self.incomplete
        return {"traceEvents": events, "displayTimeUnit": "ns", "otherData": other}

    def _check_deadline(self) -> None:
        """Raise :class:`TraceDeadline` once ``time.monotonic()`` passes ``self.deadline``
        (set for the partial trace written after a signal: the command must end soon)."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise TraceDeadline("the trace could not be written before the deadline")

    def write(self, path: str | Path) -> Path:
        """Write the trace JSON to *path* atomically; return the path."""
        return atomic_write_text(path, self.text())

    def text(self) -> str:
        """The trace JSON :meth:`write` writes."""
        data = self.to_dict()
        # one event per line: diff-able and still valid JSON
        encode = json.JSONEncoder(separators=(",", ":")).encode
        events = data["traceEvents"]
        parts = []
        for at in range(0, len(events), 8192):
            self._check_deadline()
            parts.append(",\n".join(map(encode, events[at:at + 8192])))
        body = ",\n".join(parts)
        text = ('{"traceEvents":[\n' + body + '\n],\n"displayTimeUnit":"ns",\n"otherData":'
                + json.dumps(data["otherData"]) + "}\n")
        return text

    def __repr__(self) -> str:
        state = f"truncated at {self.truncated_at!r}" if self.truncated_at is not None else "ok"
        return (f"<ChromeTracer ranks={_ranks_text(self.ranks)} events={self.count} "
                f"max={self.max_events} {state}>")


_order = itemgetter(0, 1)   # sort key of (time, order at equal times, event)


def _us(seconds: float) -> float:
    """Seconds -> microseconds rounded to the picosecond (exact-looking, shorter JSON)."""
    return round(seconds * US, 6)


def _ranks_text(ranks: frozenset[int] | None) -> str:
    """Compact text of a rank set: ``0-63,100`` (``all`` for None)."""
    if ranks is None:
        return "all"
    items: list[str] = []
    run: list[int] = []
    for r in sorted(ranks):
        if run and r == run[-1] + 1:
            run.append(r)
            continue
        if run:
            items.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [r]
    if run:
        items.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(items)
