"""Sweeps: points of grid / strong / weak modes, rows in CSV and JSON, efficiency."""

from __future__ import annotations

import csv
import json

import pytest

from bsim.cli.sweep import parse_param_lists, points, run_sweep
from bsim.outputs.scaling import add_efficiency, read_rows

NET = "hockney:latency=2e-6,bandwidth=1e9"
SMALL = ["nx=64", "ny=64", "iterations=2"]


def test_points_grid_and_zip():
    """grid = product in parameter order; strong/weak = zip with length-1 lists fixed."""
    lists = parse_param_lists(["px=1,2", "py=1,2,4"])
    assert points(lists, "grid") == [
        {"px": "1", "py": "1"}, {"px": "1", "py": "2"}, {"px": "1", "py": "4"},
        {"px": "2", "py": "1"}, {"px": "2", "py": "2"}, {"px": "2", "py": "4"}]
    z = parse_param_lists(["px=1,2,4", "py=2", "nx=8,16,32"])
    assert points(z, "weak") == [{"px": "1", "py": "2", "nx": "8"},
                                 {"px": "2", "py": "2", "nx": "16"},
                                 {"px": "4", "py": "2", "nx": "32"}]
    with pytest.raises(ValueError, match="one length"):
        points(lists, "strong")
    with pytest.raises(ValueError, match="given twice"):
        parse_param_lists(["px=1", "px=2"])


def test_efficiency_definitions():
    """strong: S = T0/T, E = S*P0/P; weak: E = T0/T and the scaled speedup S = E*P/P0
    (it repeated the efficiency), P0 = fewest ranks."""
    rows = [{"ranks": 2, "elapsed": 4.0}, {"ranks": 8, "elapsed": 2.0}]
    add_efficiency(rows, "strong")
    assert [r["speedup"] for r in rows] == [1.0, 2.0]
    assert [r["efficiency"] for r in rows] == [1.0, 0.5]
    add_efficiency(rows, "weak")
    assert [r["efficiency"] for r in rows] == [1.0, 2.0]
    assert [r["speedup"] for r in rows] == [1.0, 8.0]   # 4x the work in half the time


def test_grid_sweep_rows_serial_equals_parallel():
    """A 2x2 halo2d grid: 4 rows with ranks px*py; jobs=2 gives the same predictions."""
    lists = parse_param_lists(["px=1,2", "py=1,2", *SMALL])
    serial = run_sweep("halo2d", lists, "grid", jobs=1, network=NET)
    parallel = run_sweep("halo2d", lists, "grid", jobs=2, network=NET)
    assert [(r["px"], r["py"], r["ranks"]) for r in serial] == [(1, 1, 1), (1, 2, 2),
                                                                (2, 1, 2), (2, 2, 4)]
    keys = ["px", "py", "ranks", "elapsed", "calc", "wait", "comm", "ops", "efficiency"]
    assert [{k: r[k] for k in keys} for r in serial] == [{k: r[k] for k in keys}
                                                         for r in parallel]
    # 1 rank: 2 iterations of 64*64 points at 5 ns, no neighbours
    assert serial[0]["elapsed"] == pytest.approx(2 * 64 * 64 * 5e-9, rel=1e-12)
    assert serial[0]["wait"] == serial[0]["comm"] == 0.0


def test_sweep_command_writes_csv_json_and_plot(tmp_path, capsys):
    """`bsim sweep halo2d --mode strong ...` writes one row per point and a plot."""
    from bsim.cli.main import build_parser
    p = build_parser()
    prefix = tmp_path / "sw"
    argv = ["sweep", "halo2d", "--param", "px=1,2,4", "--param", "py=1,1,2",
            *[x for s in SMALL for x in ("--param", s)], "--mode", "strong",
            "--jobs", "1", "--network", NET, "-o", str(prefix)]
    try:
        import matplotlib  # noqa: F401
        argv += ["--plot", str(tmp_path / "sw.png")]
    except ImportError:   # the plot extra is optional
        pass
    ns = p.parse_args(argv)
    assert ns.handler(ns) == 0
    out = capsys.readouterr()
    assert "[3/3]" in out.err and "wrote" in out.out
    with open(f"{prefix}.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["ranks"] for r in rows] == ["1", "2", "8"]
    assert list(rows[0])[:5] == ["px", "py", "nx", "ny", "iterations"]
    assert {"elapsed", "calc", "wait", "comm", "host_seconds", "efficiency"} <= set(rows[0])
    data = json.loads(open(f"{prefix}.json").read())
    assert data["format"] == "bsim-sweep/1" and data["mode"] == "strong"
    assert [r["ranks"] for r in data["rows"]] == [1, 2, 8]
    assert data["rows"][0]["efficiency"] == 1.0
    csv_rows, _ = read_rows(f"{prefix}.csv")
    assert [r["elapsed"] for r in csv_rows] == [r["elapsed"] for r in data["rows"]]
    if "--plot" in argv:
        assert (tmp_path / "sw.png").stat().st_size > 0


def test_ranks_parameter_for_program_files(tmp_path):
    """--param ranks=... sets the rank count of a Python file target."""
    prog = tmp_path / "prog.py"
    prog.write_text("import bsim\nfrom mpi4py import MPI\nbsim.add_time(1e-3)\n"
                    "MPI.COMM_WORLD.Barrier()\n")
    rows = run_sweep(str(prog), parse_param_lists(["ranks=2,4"]), "strong", network=NET)
    assert [r["ranks"] for r in rows] == [2, 4]
    assert all(r["calc"] == 1e-3 for r in rows)


def test_sweep_rows_record_every_parameter_and_bad_plots_stop_before_the_run(tmp_path):
    """Each row's settings hold every parameter the point ran with (halo2d's t_point and
    check_every too, which nobody swept); a --plot file matplotlib cannot write stops the
    command before any point runs, with one line naming the option."""
    from bsim.cli.main import build_parser, main
    prefix = tmp_path / "sw"
    argv = ["sweep", "halo2d", "--param", "px=1,2", *[x for s in SMALL for x in ("--param", s)],
            "--network", NET, "-o", str(prefix), "--quiet"]
    ns = build_parser().parse_args(argv)
    assert ns.handler(ns) == 0
    rows = json.loads(open(f"{prefix}.json").read())["rows"]
    for row, px in zip(rows, (1, 2), strict=True):
        params = row["settings"]["params"]
        assert params["px"] == px and params["nx"] == 64
        assert {"py", "t_point", "check_every"} <= set(params)
    again = tmp_path / "again"
    assert main([*argv[:-3], "-o", str(again), "--plot", str(tmp_path / "fig.json")]) == 2
    assert not (tmp_path / "again.csv").exists() and not (tmp_path / "again.json").exists()
