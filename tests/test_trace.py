"""Chrome trace export: format validity, hand-derived spans, bounds, and the PNG timeline."""

from __future__ import annotations

import argparse
import json
from collections import defaultdict

import numpy as np
import pytest

import bsim
from bsim import MPI
from bsim.outputs.trace import ChromeTracer, parse_ranks, parse_window

NET = "hockney:latency=2e-6,bandwidth=1e9"     # 1000 B cost 2 us + 1 us = 3 us


def exchange():
    """Rank 1 computes 1 ms and sends to 0; rank 0 computes 2 ms and replies (1000 B each)."""
    comm = MPI.COMM_WORLD
    buf = bsim.Buffer(1000)
    if comm.rank == 1:
        bsim.add_time(1e-3)
        comm.Send(buf, dest=0, tag=4)
        bsim.add_time(5e-4)
        bsim.add_time(5e-4)
        comm.Recv(buf, source=0, tag=5)
    else:
        comm.Recv(buf, source=1, tag=4)
        bsim.add_time(2e-3)
        comm.Send(buf, dest=1, tag=5)


# Hand derivation (bsim protocol: send is free, a receive blocking at tp on a message
# sent at ts ends at max(tp, ts) + 3 us, wait = max(0, ts - tp)):
#   rank 0: Recv posted at 0, message sent at 1000 us -> wait 0..1000, comm 1000..1003;
#           calc 1003..3003; sends at 3003.
#   rank 1: calc 0..1000, send at 1000 (no time), calc 1000..1500..2000: the three calc
#           spans are adjacent and merge into 0..2000; Recv posted at 2000, message sent
#           at 3003 -> wait 2000..3003, comm 3003..3006.
EXPECTED_SPANS = {
    (0, "wait", "Recv", 0.0, 1000.0), (0, "comm", "Recv", 1000.0, 1003.0),
    (0, "calc", "add_time", 1003.0, 3003.0),
    (1, "calc", "add_time", 0.0, 2000.0), (1, "wait", "Recv", 2000.0, 3003.0),
    (1, "comm", "Recv", 3003.0, 3006.0),
}
EXPECTED_FLOWS = {(1, 0, 1000.0, 1003.0), (0, 1, 3003.0, 3006.0)}   # src, dst, ts s, ts f


def validate(data):
    """Check the Trace Event format rules bsim relies on; return the X events by track."""
    assert isinstance(data["traceEvents"], list)
    tracks = defaultdict(list)
    flows = defaultdict(dict)
    for ev in data["traceEvents"]:
        for key in ("ph", "pid", "tid", "name"):
            assert key in ev, (key, ev)
        assert isinstance(ev["pid"], int) and isinstance(ev["tid"], int)
        if ev["ph"] == "M":
            assert ev["name"] in ("process_name", "process_sort_index", "thread_name",
                                  "thread_sort_index")
            continue
        assert isinstance(ev["ts"], (int, float)) and ev["ts"] >= 0
        if ev["ph"] == "X":
            assert ev["dur"] >= 0
            tracks[(ev["pid"], ev["tid"])].append((ev["ts"], ev["ts"] + ev["dur"], ev))
        elif ev["ph"] in ("s", "f"):
            key = (ev["id"], ev["cat"], ev["name"])
            assert ev["ph"] not in flows[key], f"duplicate flow {ev['ph']} {key}"
            flows[key][ev["ph"]] = ev
            if ev["ph"] == "f":
                assert ev.get("bp") == "e"
        else:
            assert ev["ph"] == "i"
    # balanced spans: on each track, slices are disjoint or properly nested
    for spans in tracks.values():
        stack = []
        for a, b, _ in sorted(spans, key=lambda s: (s[0], -(s[1] - s[0]))):
            while stack and stack[-1] <= a + 1e-9:   # ts + dur: float noise
                stack.pop()
            assert not stack or b <= stack[-1] + 1e-9, "partially overlapping slices"
            stack.append(b)
    # every flow start has exactly one finish, later, each bound to an enclosing slice
    for key, ends in flows.items():
        assert set(ends) == {"s", "f"}, f"unmatched flow {key}"
        assert ends["f"]["ts"] >= ends["s"]["ts"]
        for ev in ends.values():
            enclosing = [x for x in tracks[(ev["pid"], ev["tid"])] if x[0] <= ev["ts"] <= x[1]]
            assert enclosing, f"flow {ev['ph']} {key} has no slice to bind to"
    return tracks, flows


def traced(**kw):
    tracer = ChromeTracer(program="exchange", **kw)
    result = bsim.simulate(exchange, ranks=2, network=NET, tracer=tracer, protocol="bsim")
    return tracer, result


def test_trace_file_validates_and_names_tracks(tmp_path):
    """The written file is valid JSON in the Trace Event object format with named tracks."""
    tracer, _ = traced()
    path = tracer.write(tmp_path / "t.json")
    data = json.loads(path.read_text())
    validate(data)
    names = {(e["tid"], e["args"]["name"]) for e in data["traceEvents"]
             if e["name"] == "thread_name"}
    assert names == {(0, "rank 0"), (1, "rank 1")}
    assert data["otherData"]["format"] == "bsim-trace/1"
    assert "warning" not in data["otherData"]


def test_spans_and_flows_at_hand_derived_times():
    """Spans (in us) and message flows match the hand derivation above exactly."""
    tracer, _ = traced()
    data = tracer.to_dict()
    spans = {(e["tid"], e["cat"], e["name"], e["ts"], round(e["ts"] + e["dur"], 6))
             for e in data["traceEvents"] if e["ph"] == "X" and e["cat"] != "message"}
    assert spans == EXPECTED_SPANS
    merged = [e for e in data["traceEvents"] if e.get("args", {}).get("merged")]
    assert [(e["tid"], e["args"]["merged"]) for e in merged] == [(1, 3)]
    s = {e["id"]: e for e in data["traceEvents"] if e["ph"] == "s"}
    f = {e["id"]: e for e in data["traceEvents"] if e["ph"] == "f"}
    flows = {(s[i]["tid"], f[i]["tid"], s[i]["ts"], f[i]["ts"]) for i in s}
    assert flows == EXPECTED_FLOWS


@pytest.mark.parametrize("ranks", [4, 9])
def test_span_totals_equal_the_accounting(ranks):
    """Per rank, traced calc + wait + comm durations equal the Result's (halo2d)."""
    from skeletons.halo2d import main as halo
    px = 2 if ranks == 4 else 3
    tracer = ChromeTracer(merge=ranks == 9)
    res = bsim.simulate(halo, ranks=ranks, network=NET, tracer=tracer,
                        kwargs=dict(px=px, py=px, nx=64, ny=64, iterations=3), protocol="bsim")
    tracks, _ = validate(tracer.to_dict())
    for r in range(ranks):
        tot = defaultdict(float)
        for a, b, ev in tracks[(1, r)]:
            if ev["cat"] != "message":
                tot[ev["cat"]] += (b - a) * 1e-6
        for kind in ("calc", "wait", "comm"):
            assert tot[kind] == pytest.approx(getattr(res, kind)[r], rel=1e-9, abs=1e-12)


def test_rank_subset_window_and_node_grouping():
    """ranks='1' keeps rank 1 only (no flows); a window clips spans; node_size sets pids."""
    tracer, _ = traced(ranks="1")
    evs = [e for e in tracer.to_dict()["traceEvents"] if e["ph"] != "M"]
    assert {e["tid"] for e in evs} == {1}
    assert not [e for e in evs if e["ph"] in "sf"]
    tracer, _ = traced(window=(1.5e-3, 3.004e-3))
    data = tracer.to_dict()
    validate(data)
    spans = {(e["tid"], e["cat"], e["ts"], round(e["ts"] + e["dur"], 6))
             for e in data["traceEvents"] if e["ph"] == "X" and e["cat"] != "message"}
    assert spans == {(0, "calc", 1500.0, 3003.0), (1, "calc", 1500.0, 2000.0),
                     (1, "wait", 2000.0, 3003.0), (1, "comm", 3003.0, 3004.0)}
    assert not [e for e in data["traceEvents"] if e["ph"] in "sf"]   # 2nd ends at 3006
    tracer, _ = traced(node_size=1)
    pids = {(e["tid"], e["pid"]) for e in tracer.to_dict()["traceEvents"] if e["ph"] == "X"}
    assert pids == {(0, 1), (1, 2)}


def test_event_cap_stops_recording_with_a_warning(capsys, tmp_path):
    """max_events=3: recording stops, stderr and otherData carry the warning."""
    tracer, _ = traced(max_events=3)
    err = capsys.readouterr().err
    assert "trace truncated" in err and "max_events=3" in err
    data = json.loads(tracer.write(tmp_path / "t.json").read_text())
    validate(data)
    assert "trace truncated" in data["otherData"]["warning"]
    assert data["otherData"]["dropped_events"] > 0
    assert [e["name"] for e in data["traceEvents"] if e["ph"] == "i"] == ["TRACE TRUNCATED"]
    assert sum(1 for e in data["traceEvents"] if e["ph"] == "X") <= 3


def test_parse_ranks_and_window():
    """Rank lists and windows parse; bad ones raise with the text."""
    assert parse_ranks("0-3,7") == {0, 1, 2, 3, 7}
    assert parse_ranks("all") is None
    assert parse_window("1e-3:2e-3") == (1e-3, 2e-3)
    assert parse_window(":5") == (0.0, 5.0)
    with pytest.raises(ValueError, match="3-1"):
        parse_ranks("3-1")
    with pytest.raises(ValueError, match="START"):
        parse_window("2:1")


def test_run_options_build_a_tracer_and_write_it(tmp_path):
    """--trace/--trace-ranks through the run options: kwargs carry a tracer; finish writes it."""
    from bsim.cli import options
    p = argparse.ArgumentParser()
    p.add_argument("target")
    p.add_argument("--network", default=NET)
    options.add_timeline_options(p)
    out = tmp_path / "run.json"
    ns = p.parse_args(["x", "--trace", str(out), "--trace-ranks", "0-1", "--quiet"])
    kw = options.apply_run_options(ns)
    assert set(kw) == {"tracer"}
    res = bsim.simulate(exchange, ranks=2, network=ns.network, **kw)
    options.finish_run_options(ns, res)
    validate(json.loads(out.read_text()))


def test_timeline_png_shows_spans_at_known_times(tmp_path):
    """Screenshot test: pixels of the rendered Gantt chart have the kind's colour at known times.
    """
    pytest.importorskip("matplotlib")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import to_rgb

    from bsim.outputs.plots import COLORS, timeline
    tracer, _ = traced()
    path = tracer.write(tmp_path / "t.json")
    fig = timeline(path, out=tmp_path / "tl.png", messages=False)
    assert (tmp_path / "tl.png").stat().st_size > 0
    ax = fig.axes[0]
    assert ax.get_xlabel() == "simulated time (ms)" and ax.get_ylabel() == "rank"

    def colour(figure, t_ms, row):
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        img = np.asarray(canvas.buffer_rgba())
        ax = figure.axes[0]
        x, y = ax.transData.transform((t_ms, row))
        px = img[int(round(img.shape[0] - y)), int(round(x))]
        return tuple(round(c / 255, 1) for c in px[:3])

    def rgb(kind):
        return tuple(round(c, 1) for c in to_rgb(COLORS[kind]))

    # (time in ms, rank row) -> kind, from EXPECTED_SPANS
    for t_ms, row, kind in [(0.5, 0, "wait"), (2.0, 0, "calc"), (0.5, 1, "calc"),
                            (1.7, 1, "calc"), (2.5, 1, "wait")]:
        assert colour(fig, t_ms, row) == rgb(kind), (t_ms, row, kind)
    assert colour(fig, 3.2, 0) == (1.0, 1.0, 1.0)   # rank 0 finished at 3.003 ms
    # the 3 us receive costs are visible when zoomed in on 0.999 .. 1.004 ms
    zoom = timeline(path, window=(0.999e-3, 1.004e-3), messages=False)
    for t_ms, row, kind in [(0.9995, 0, "wait"), (1.0015, 0, "comm"), (1.0035, 0, "calc"),
                            (1.0015, 1, "calc")]:
        assert colour(zoom, t_ms, row) == rgb(kind), (t_ms, row, kind)


def test_a_trace_window_after_the_run_is_warned_of(tmp_path, capsys):
    """``--trace-window`` starting after the run's end wrote an empty trace with no word
    (docs/outputs.md's own example did): the run now warns, even with --quiet."""
    from bsim.cli.main import main
    out = tmp_path / "t.json"
    net = ["--network", "hockney:latency=1e-6,bandwidth=1e9"]
    assert main(["run", "halo2d", *net, "--quiet", "--trace", str(out),
                 "--trace-window", "10:20"]) == 0
    err = capsys.readouterr().err
    assert "bsim: warning: the trace window starts at 10 s, after the run ended at" in err
    assert main(["run", "halo2d", *net, "--quiet", "--trace", str(out),
                 "--trace-window", "0:1"]) == 0
    assert "warning" not in capsys.readouterr().err
