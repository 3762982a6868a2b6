"""Sweep baselines per problem, the modes checked against the parameters, flop rates in rows.

An outside review (findings 4 and 9): a grid of two problem sizes shared one baseline
(a 1-rank run of the larger problem had efficiency 0.5), ``--mode strong`` took a problem
grown with P and ``--mode weak`` a fixed one without a word, the baseline was not
recorded, and rows dropped ``flops``/``peak_flops``.  Expected values come from the
definitions: ``S = T0 / T``, ``E = S * P0 / P`` (strong, grid), ``E = T0 / T`` (weak),
with ``T0`` the time of the row's own baseline.
"""

from __future__ import annotations

import csv
import json

import pytest

from bsim.cli.main import main
from bsim.cli.sweep import parse_param_lists, run_sweep
from bsim.outputs.scaling import add_efficiency

NET = "hockney:latency=2e-6,bandwidth=1e9"
SMALL = ["iterations=2"]


def _sweep(tmp_path, *argv: str) -> int:
    return main(["sweep", *argv, "--jobs", "1", "--quiet", "-o", str(tmp_path / "sw")])


def test_grid_rows_have_a_baseline_per_problem():
    """Two problem sizes at 1 and 2 ranks: each 1-rank run is its own problem's baseline
    (efficiency 1), each 2-rank run is measured against the 1-rank run of its nx."""
    rows = [{"nx": 1, "ranks": 1, "elapsed": 4.0}, {"nx": 2, "ranks": 1, "elapsed": 8.0},
            {"nx": 1, "ranks": 2, "elapsed": 2.5}, {"nx": 2, "ranks": 2, "elapsed": 5.0}]
    add_efficiency(rows, "grid")
    assert [r["speedup"] for r in rows] == [1.0, 1.0, 4.0 / 2.5, 8.0 / 5.0]
    assert [r["efficiency"] for r in rows] == [1.0, 1.0, 0.8, 0.8]
    assert [r["baseline_point"] for r in rows] == [1, 2, 1, 2]
    assert [r["baseline_ranks"] for r in rows] == [1, 1, 1, 1]
    assert [r["baseline_elapsed"] for r in rows] == [4.0, 8.0, 4.0, 8.0]


def test_grid_of_two_problem_sizes_simulated(tmp_path):
    """halo2d nx=64,128 on 1 and 2 ranks: the 1-rank run of nx=128 has efficiency 1 (it
    was 0.5: the nx=64 run was its baseline); baselines in the CSV and the JSON."""
    argv = ["halo2d", "--param", "px=1,2", "--param", "py=1", "--param", "nx=64,128",
            "--param", "ny=64", "--param", "iterations=2", "--network", NET]
    assert _sweep(tmp_path, *argv) == 0
    data = json.loads((tmp_path / "sw.json").read_text())
    rows = data["rows"]
    assert [(r["px"], r["nx"]) for r in rows] == [(1, 64), (1, 128), (2, 64), (2, 128)]
    base = {64: rows[0], 128: rows[1]}
    for i, r in enumerate(rows):
        b = base[r["nx"]]
        assert r["baseline_point"] == (1 if r["nx"] == 64 else 2)
        assert (r["baseline_ranks"], r["baseline_elapsed"]) == (1, b["elapsed"])
        assert r["speedup"] == pytest.approx(b["elapsed"] / r["elapsed"], rel=1e-12)
        assert r["efficiency"] == pytest.approx(b["elapsed"] / r["elapsed"] / r["ranks"],
                                                rel=1e-12), i
    assert rows[1]["efficiency"] == 1.0
    with open(tmp_path / "sw.csv") as fh:
        table = list(csv.DictReader(fh))
    assert [int(r["baseline_point"]) for r in table] == [1, 2, 1, 2]
    assert [float(r["baseline_elapsed"]) for r in table] == [r["baseline_elapsed"]
                                                             for r in rows]


def test_strong_mode_with_a_problem_grown_with_p_is_refused(tmp_path, capsys):
    """nx, ny double with px, py: not strong scaling; one line, status 2, nothing run."""
    argv = ["halo2d", "--mode", "strong", "--param", "px=1,2,4", "--param", "py=1,2,4",
            "--param", "nx=64,128,256", "--param", "ny=64,128,256", "--network", NET]
    assert _sweep(tmp_path, *argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("bsim: error: sweep --mode strong")
    assert "nx changes" in err[0] and "1, 4, 16 ranks" in err[0]
    assert not (tmp_path / "sw.csv").exists()


def test_weak_mode_with_a_fixed_problem_is_refused(tmp_path, capsys):
    """halo2d's nx, ny are the global grid: kept fixed while P grows it is strong scaling."""
    argv = ["halo2d", "--mode", "weak", "--param", "px=1,2,4", "--param", "py=1,2,4",
            "--param", "nx=256", "--param", "ny=256", "--network", NET]
    assert _sweep(tmp_path, *argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("bsim: error: sweep --mode weak")
    assert "nx, ny stay fixed" in err[0]
    # ranks set by the rank count alone (the skeleton's grid rule) is refused the same way
    assert _sweep(tmp_path, "halo2d", "--mode", "weak", "--param", "ranks=1,4",
                  "--network", NET) == 2
    assert "sweep --mode weak" in capsys.readouterr().err


def test_strong_and_weak_sweeps_that_fit_their_mode_record_their_baseline():
    """A fixed problem in strong mode and a grown one in weak mode run, against P0 = 1."""
    strong = run_sweep("halo2d", parse_param_lists(
        ["px=1,2,4", "py=1,1,2", "nx=64", "ny=64", *SMALL]), "strong", network=NET)
    t0 = strong[0]["elapsed"]
    for r in strong:
        assert (r["baseline_point"], r["baseline_ranks"], r["baseline_elapsed"]) == (1, 1, t0)
        assert r["efficiency"] == pytest.approx(t0 / r["elapsed"] / r["ranks"], rel=1e-12)
    weak = run_sweep("halo2d", parse_param_lists(
        ["px=1,2", "py=1,2", "nx=64,128", "ny=64,128", *SMALL]), "weak", network=NET)
    t0 = weak[0]["elapsed"]
    assert [r["baseline_elapsed"] for r in weak] == [t0, t0]
    assert weak[1]["efficiency"] == pytest.approx(t0 / weak[1]["elapsed"], rel=1e-12)
    assert weak[1]["speedup"] == pytest.approx(t0 / weak[1]["elapsed"] * 4, rel=1e-12)


def test_rank_parameters_that_are_not_the_grid_rule_are_not_the_problem():
    """MILC's px..pt set the ranks (its grid rule is nprocs): a strong sweep over them is
    one problem; SAGE's cells are per processor, so a weak sweep keeping them runs."""
    milc = run_sweep("milc_cg", parse_param_lists(
        ["px=1,2", "py=1", "pz=1", "pt=1", "nx=4", "ny=4", "nz=4", "nt=4", "niters=2"]),
        "strong", network=NET)
    t0 = milc[0]["elapsed"]
    assert [r["ranks"] for r in milc] == [1, 2]
    assert [r["baseline_elapsed"] for r in milc] == [t0, t0]
    assert milc[1]["efficiency"] == pytest.approx(t0 / milc[1]["elapsed"] / 2, rel=1e-12)
    sage = run_sweep("sage", parse_param_lists(["ranks=1,2", "cells=800", "cycles=1"]),
                     "weak", network=NET)
    assert [r["baseline_ranks"] for r in sage] == [1, 1]


def test_rows_carry_flops_peak_and_fraction_of_peak(tmp_path):
    """HPL n=200 on 1x2 and 2x2 BG/P ranks: flops = 2/3 n^3 + 3/2 n^2 (HPL's count), peak
    = ranks * 3.4e9 (850 MHz * 4 flop/cycle), rate = flops / elapsed, fraction = rate /
    peak; the same numbers as bsim run --json of the point.  sweep3d counts none."""
    argv = ["hpl", "--param", "n=200", "--param", "nb=32", "--param", "p=1,2",
            "--param", "q=2", "--param", "verbose=false", "--machine", "bgp"]
    assert _sweep(tmp_path, *argv) == 0
    rows = json.loads((tmp_path / "sw.json").read_text())["rows"]
    n = 200
    for r in rows:
        assert r["flops"] == pytest.approx(2 / 3 * n**3 + 1.5 * n**2, rel=1e-12)
        assert r["peak_flops"] == pytest.approx(r["ranks"] * 3.4e9, rel=1e-12)
        assert r["flop_rate"] == pytest.approx(r["flops"] / r["elapsed"], rel=1e-12)
        assert r["peak_fraction"] == pytest.approx(r["flops"] / r["elapsed"] /
                                                   (r["ranks"] * 3.4e9), rel=1e-12)
    with open(tmp_path / "sw.csv") as fh:
        table = list(csv.DictReader(fh))
    assert [float(t["peak_fraction"]) for t in table] == [r["peak_fraction"] for r in rows]
    assert [float(t["flops"]) for t in table] == [r["flops"] for r in rows]
    one = tmp_path / "one.json"
    assert main(["run", "hpl", "--param", "n=200", "--param", "nb=32", "--param", "p=2",
                 "--param", "q=2", "--param", "verbose=false", "--machine", "bgp",
                 "--quiet", "--json", str(one)]) == 0
    ran = json.loads(one.read_text())
    assert (ran["flops"], ran["peak_flops"]) == (rows[1]["flops"], rows[1]["peak_flops"])
    assert _sweep(tmp_path, "sweep3d", "--param", "px=1,2", "--param", "py=1",
                  "--param", "nx=4", "--param", "ny=4", "--param", "nz=4",
                  "--param", "mk=2", "--param", "iterations=1", "--network", NET) == 0
    with open(tmp_path / "sw.csv") as fh:
        header = next(csv.reader(fh))
    assert "flops" not in header and "peak_fraction" not in header


def test_a_strong_sweep_of_a_per_rank_size_is_one_problem():
    """SAGE's cells are per processor: 16,000 cells in all on 1, 4, 16 ranks is
    cells = 16000, 4000, 1000, a strong sweep (it was refused as 'cells changes with
    them', and each point became its own problem with efficiency 1: an outside review).
    One baseline, the 1-rank run: E(P) = T0 / (P T(P))."""
    rows = run_sweep("sage", parse_param_lists(["ranks=1,4,16", "cells=16000,4000,1000",
                                                "cycles=1"]), "strong", network=NET)
    t0 = rows[0]["elapsed"]
    assert [r["baseline_ranks"] for r in rows] == [1, 1, 1]
    for r in rows:
        assert r["efficiency"] == pytest.approx(t0 / (r["ranks"] * r["elapsed"]), rel=1e-12)
    assert rows[2]["efficiency"] < 1.0
