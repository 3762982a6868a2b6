"""Figures: breakdown, timeline and scaling plots produce labelled files; `bsim plot`."""

from __future__ import annotations

import pytest

import bsim
from bsim import MPI
from bsim.outputs.trace import ChromeTracer

pytest.importorskip("matplotlib")

NET = "hockney:latency=2e-6,bandwidth=1e9"


def imbalanced():
    """Rank r computes (r + 1) ms, then a barrier: wait grows toward rank 0."""
    comm = MPI.COMM_WORLD
    bsim.add_time((comm.rank + 1) * 1e-3)
    comm.Barrier()


def labelled(ax):
    return ax.get_xlabel() and ax.get_ylabel() and ax.get_title()


@pytest.fixture
def result_and_trace(tmp_path):
    tracer = ChromeTracer(program="imbalanced")
    res = bsim.simulate(imbalanced, 4, network=NET, tracer=tracer, name="imbalanced",
                        protocol="bsim")
    return res.to_json(tmp_path / "r.json"), tracer.write(tmp_path / "t.json"), res


def test_breakdown_plot_stacks_calc_wait_comm(tmp_path, result_and_trace):
    """One stacked bar per rank whose segments are the rank's calc, wait, comm (in ms)."""
    from bsim.outputs.plots import breakdown
    rjson, _, res = result_and_trace
    fig = breakdown(rjson, out=tmp_path / "b.png")
    assert (tmp_path / "b.png").stat().st_size > 0
    ax = fig.axes[0]
    assert labelled(ax) and ax.get_ylabel() == "time (ms)" and ax.get_xlabel() == "rank"
    heights = {c.get_label(): [p.get_height() for p in c.patches] for c in ax.containers}
    assert heights["calc"] == pytest.approx([1, 2, 3, 4])
    assert heights["wait"] == pytest.approx((res.wait * 1e3).tolist())
    # barrier: everyone leaves after rank 3 arrives at 4 ms, so rank r waits 4 - (r + 1) ms
    assert heights["wait"] == pytest.approx([3.0, 2.0, 1.0, 0.0], rel=1e-12, abs=1e-12)
    # dissemination barrier on 4 ranks: 2 rounds of a 0-byte message, l = 2 us each
    assert heights["comm"] == pytest.approx([2 * 2e-3] * 4, rel=1e-12)


def test_timeline_plot_of_a_rank_subset(tmp_path, result_and_trace):
    """A Gantt chart of ranks 1-2 has those two rows and labelled axes."""
    from bsim.outputs.plots import timeline
    _, tjson, _ = result_and_trace
    fig = timeline(tjson, ranks="1-2", out=tmp_path / "tl.png")
    ax = fig.axes[0]
    assert labelled(ax)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["1", "2"]
    assert (tmp_path / "tl.png").stat().st_size > 0


def test_scaling_plot_time_and_efficiency(tmp_path):
    """Two panels: time vs ranks (with ideal) and efficiency vs ranks, from sweep rows."""
    from bsim.outputs.plots import scaling
    rows = [{"ranks": 1, "elapsed": 1.0}, {"ranks": 2, "elapsed": 0.6},
            {"ranks": 4, "elapsed": 0.4}]
    fig = scaling(rows, out=tmp_path / "s.png")
    ax1, ax2 = fig.axes
    assert labelled(ax1) and labelled(ax2)
    assert ax1.get_xlabel() == "ranks" and "efficiency" in ax2.get_ylabel()
    eff = ax2.lines[0].get_ydata()
    assert list(eff) == pytest.approx([1.0, 1 / 0.6 / 2, 1 / 0.4 / 4])
    assert (tmp_path / "s.png").stat().st_size > 0


@pytest.mark.parametrize("kind", ["breakdown", "timeline"])
def test_bsim_plot_command(tmp_path, result_and_trace, kind, capsys):
    """`bsim plot FILE --kind K -o FILE.png`  writes the image."""
    from bsim.cli.main import build_parser
    rjson, tjson, _ = result_and_trace
    p = build_parser()
    src = rjson if kind == "breakdown" else tjson
    out = tmp_path / f"{kind}.png"
    ns = p.parse_args(["plot", str(src), "-o", str(out)])   # kind from the file's format
    assert ns.handler(ns) == 0
    assert out.stat().st_size > 0 and "wrote" in capsys.readouterr().out
    ns = p.parse_args(["plot", str(src), "--kind", kind, "-o", str(out)])
    assert ns.handler(ns) == 0
