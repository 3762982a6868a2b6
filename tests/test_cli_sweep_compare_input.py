"""`bsim sweep`, `bsim compare`, `bsim plot`: what shaped a sweep is recorded, bad input is
refused up front with one line naming it, and a point failing at run time loses nothing."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT

from bsim.cli import sweep as sweep_cli
from bsim.cli.main import main
from bsim.outputs.result import Result

NET = "hockney:latency=2e-6,bandwidth=1e9"
SMALL = ["--param", "nx=16", "--param", "ny=16", "--param", "iterations=1"]

# a program whose failure at run time depends on its --t option (ValueError in rank 0)
PROGRAM = """\
import argparse
import bsim
from mpi4py import MPI
p = argparse.ArgumentParser()
p.add_argument("--t", type=float)
t = p.parse_args().t
if t < 0 and MPI.COMM_WORLD.Get_rank() == 0:
    raise ValueError(f"negative t={t}")
bsim.add_time(abs(t))
MPI.COMM_WORLD.Barrier()
"""


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    """The only stderr line (bsim: error: ...), asserting there is exactly one."""
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("bsim: error: ")
    return lines[0]


@pytest.fixture
def program(tmp_path: Path) -> Path:
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    return path


# -- sweep: what shaped each point ------------------------------------------------------
def test_sweep_json_records_machine_collectives_and_contention(tmp_path, capsys):
    """The sweep JSON names the machine, clog and fluid, and each row's settings are
    exactly those `bsim run --json` records for the same point; the CSV stays numeric."""
    prefix = tmp_path / "sw"
    models = ["--machine", "es40", "--collectives", "clog:c=1e-3,d=0",
              "--contention", "fluid"]
    point = ["--param", "px=1", "--param", "py=2", "--param", "t_point=1e-8", *SMALL]
    assert main(["sweep", "halo2d", *point, *models, "-j", "1", "--quiet",
                 "-o", str(prefix)]) == 0
    assert main(["run", "halo2d", *point, *models, "--quiet",
                 "--json", str(tmp_path / "run.json")]) == 0
    data = json.loads(prefix.with_suffix(".json").read_text())
    assert (data["machine"], data["collectives"], data["contention"]) == (
        "es40", "clog:c=1e-3,d=0", "fluid")
    run = json.loads((tmp_path / "run.json").read_text())
    settings = data["rows"][0]["settings"]
    assert settings == {k: run[k] for k in sweep_cli.SETTINGS if k in run}
    assert settings["machine"] == "es40" and settings["collectives"] == "clog:c=1e-3,d=0"
    assert settings["contention"].startswith("fluid")
    assert data["rows"][0]["elapsed"] == run["elapsed"]
    with open(prefix.with_suffix(".csv")) as fh:
        assert "settings" not in next(csv.reader(fh))


# -- sweep: parameters checked before the first point -----------------------------------
def test_bad_point_is_refused_before_any_point_runs(tmp_path, capsys):
    """px=1,2,0: one line naming point 3 and px, and no point has run or been written."""
    prefix = tmp_path / "sw"
    assert main(["sweep", "halo2d", "--param", "px=1,2,0", "--param", "py=1", *SMALL,
                 "--network", NET, "-j", "1", "-o", str(prefix)]) == 2
    line = _one_error_line(capsys)   # no "[1/3] ..." log line before it
    assert line == ("bsim: error: sweep: point 3/3 (px=0 py=1 nx=16 ny=16 iterations=1): "
                    "skeleton 'halo2d': parameter px=0 must be >= 1")
    assert not prefix.with_suffix(".csv").exists() and not prefix.with_suffix(".json").exists()


def test_bad_ranks_value_is_refused_before_any_point_runs(program, tmp_path, capsys):
    """ranks=2,0 on a file: point 2 named, ranks must be a positive integer."""
    assert main(["sweep", str(program), "--param", "ranks=2,0", "--param", "t=1e-3",
                 "--network", NET, "-j", "1", "-o", str(tmp_path / "sw")]) == 2
    assert _one_error_line(capsys) == ("bsim: error: sweep: point 2/2 (ranks=0 t=1e-3): "
                                       "parameter ranks=0 must be a positive integer")


@pytest.mark.parametrize("argv,message", [
    (["-j", "0"], "sweep: --jobs must be a positive integer, got 0"),
    (["-j", "-3"], "sweep: --jobs must be a positive integer, got -3"),
    (["--param", "px=1,,2"], "sweep: --param px=1,,2: value 2 is empty"),
    (["--param", "px=1,"], "sweep: --param px=1,: value 2 is empty"),
])
def test_bad_jobs_and_empty_list_items_are_one_line(tmp_path, capsys, argv, message):
    """-j 0, -j -3 and empty list items: refused in one line, nothing run."""
    base = ["sweep", "halo2d", "--param", "py=1", *SMALL, "--network", NET]
    if "px=" not in " ".join(argv):
        base += ["--param", "px=1"]
    assert main([*base, *argv, "-o", str(tmp_path / "sw")]) == 2
    assert _one_error_line(capsys) == f"bsim: error: {message}"
    assert not (tmp_path / "sw.csv").exists()


def test_run_sweep_refuses_non_positive_jobs():
    """The Python API refuses jobs=0 instead of running with 1."""
    with pytest.raises(ValueError, match="--jobs must be a positive integer, got 0"):
        sweep_cli.run_sweep("halo2d", {"px": ["1"], "py": ["1"]}, jobs=0, network=NET)


# -- sweep: a point failing while it runs ----------------------------------------------
def test_failure_at_run_time_keeps_the_finished_points(program, tmp_path, capsys):
    """t=1e-3,-1: point 2 fails in its rank 0; point 1's row is written, the line says so."""
    prefix = tmp_path / "sw"
    assert main(["sweep", str(program), "--param", "ranks=2", "--param", "t=1e-3,-1",
                 "--network", NET, "-j", "1", "--quiet", "-o", str(prefix)]) == 2
    line = _one_error_line(capsys)
    assert line.startswith("bsim: error: sweep: point 2/2 (ranks=2 t=-1) failed: rank 0 ")
    assert "negative t=-1.0" in line
    assert line.endswith(f"; the point that finished is in {prefix}.csv and {prefix}.json")
    with open(prefix.with_suffix(".csv")) as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["t"], float(r["calc"])) for r in rows] == [("1e-3", 1e-3)]
    data = json.loads(prefix.with_suffix(".json").read_text())
    assert [r["t"] for r in data["rows"]] == ["1e-3"]
    assert data["incomplete"]["points"] == 2 and data["incomplete"]["finished"] == 1
    assert data["incomplete"]["failed_point"] == 2
    assert data["incomplete"]["failed_params"] == {"ranks": "2", "t": "-1"}


def test_failure_of_the_first_point_says_nothing_was_written(program, tmp_path, capsys):
    """Point 1 fails, serially: no point has finished, so no file, and the line says so."""
    prefix = tmp_path / "sw"
    assert main(["sweep", str(program), "--param", "ranks=2", "--param", "t=-1,1e-3",
                 "--network", NET, "-j", "1", "--quiet", "-o", str(prefix)]) == 2
    line = _one_error_line(capsys)
    assert line.startswith("bsim: error: sweep: point 1/2 (ranks=2 t=-1) failed: ")
    assert line.endswith("; no point had finished, nothing written")
    assert not prefix.with_suffix(".csv").exists()


def test_parallel_failure_names_its_point(program, tmp_path):
    """-j 2, every point failing in a rank: the line names the failed point and its
    parameters (a rank's error does not unpickle, so it used to hang the pool: the
    subprocess has a timeout)."""
    proc = subprocess.run([sys.executable, "-m", "bsim", "sweep", str(program), "--param",
                           "ranks=1,2", "--param", "t=-1", "--network", NET, "-j", "2",
                           "--quiet", "-o", str(tmp_path / "sw")],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    m = re.match(r"bsim: error: sweep: point (\d)/2 \(ranks=(\d) t=-1\) failed: rank 0 ",
                 lines[0])
    assert m is not None, lines[0]
    assert m.group(1) == m.group(2)   # point 1 is ranks=1, point 2 ranks=2


def test_a_bug_in_a_point_still_writes_the_finished_points(tmp_path, monkeypatch, capsys):
    """A non-user failure (a TypeError) stays a traceback, after the finished rows are
    written."""
    real = sweep_cli.run_point

    def flaky(task):
        if task[1]["px"] == "2":
            raise TypeError("internal bug")
        return real(task)

    monkeypatch.setattr(sweep_cli, "run_point", flaky)
    prefix = tmp_path / "sw"
    with pytest.raises(RuntimeError, match=r"point 2/2 \(px=2 py=1\) failed: TypeError: "
                                           r"internal bug; the point that finished is in"):
        main(["sweep", "halo2d", "--param", "px=1,2", "--param", "py=1", "--network", NET,
              "-j", "1", "--quiet", "-o", str(prefix)])
    rows = json.loads(prefix.with_suffix(".json").read_text())["rows"]
    assert [r["px"] for r in rows] == [1]


# -- compare and plot: malformed input files --------------------------------------------
def _result() -> Result:
    calc = np.array([1e-3, 2e-3, 1e-3, 1e-3])
    zeros = np.zeros(4)
    return Result(ranks=4, finish=calc.copy(), calc=calc, wait=zeros, comm=zeros.copy(),
                  ops=np.ones(4, np.int64), messages=np.zeros(4, np.int64),
                  bytes=np.zeros(4, np.int64), program="p", network="hockney")


def _variant(name: str) -> str | bytes:
    """The text of a malformed result file *name*."""
    data = _result().to_dict()
    if name == "list":
        return "[]"
    if name == "string":
        return '"a result"'
    if name == "bad_json":
        return '{"format": "bsim-result/1",'
    if name == "binary":
        return b"\x89PNG\r\n\x1a\n\xff\xfe"
    if name == "per_rank_null":
        data["per_rank"] = None
    elif name == "ranks_disagree":
        data["ranks"] = 8
    elif name == "not_a_number":
        data["per_rank"]["calc"][1] = "x"
    elif name == "other_format":
        data["format"] = "something/1"
    return json.dumps(data)


MALFORMED = {
    "list": "not a bsim result",
    "string": "not a bsim result",
    "bad_json": "not valid JSON",
    "binary": "not a text file",
    "per_rank_null": '"per_rank" must be an object of per-rank lists, got null',
    "ranks_disagree": '"per_rank.finish" has 4 values but "ranks" is 8',
    "not_a_number": '"per_rank.calc" of rank 1 is \'x\'',
    "other_format": "something/1",
}


def _write(tmp_path: Path, name: str) -> Path:
    text = _variant(name)
    path = tmp_path / f"{name}.json"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_compare_refuses_a_malformed_file_in_one_line(tmp_path, capsys, name):
    """`bsim compare good bad`: status 2 and one stderr line naming the file and the fault."""
    good = _result().to_json(tmp_path / "good.json")
    bad = _write(tmp_path, name)
    assert main(["compare", str(good), str(bad)]) == 2
    line = _one_error_line(capsys)
    assert line.startswith(f"bsim: error: {bad}: ") and MALFORMED[name] in line
    assert "nan" not in line


@pytest.mark.parametrize("option,value", [("--top", "-1"), ("--top", "0"),
                                          ("--groups", "0"), ("--groups", "-1")])
def test_compare_refuses_non_positive_top_and_groups(tmp_path, capsys, option, value):
    """--top -1 would list all but one group (slicing); --groups 0 means nothing."""
    a = _result().to_json(tmp_path / "a.json")
    assert main(["compare", str(a), str(a), option, value]) == 2
    assert _one_error_line(capsys) == (f"bsim: error: {option} must be a positive integer, "
                                       f"got {value}")


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_plot_refuses_a_malformed_result_in_one_line(tmp_path, capsys, name):
    """`bsim plot bad.json` (kind from the file, or --kind breakdown): one line naming it."""
    bad = _write(tmp_path, name)
    kind = ["--kind", "breakdown"] if name in ("list", "string", "other_format") else []
    assert main(["plot", str(bad), *kind, "-o", str(tmp_path / "x.png")]) == 2
    line = _one_error_line(capsys)
    assert line.startswith(f"bsim: error: {bad}: ") and MALFORMED[name] in line
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("name,kind", [("list", None), ("string", None)])
def test_plot_names_a_file_of_no_known_kind(tmp_path, capsys, name, kind):
    """A JSON array or string is none of bsim's formats: said in one line, not 'no rows'."""
    bad = _write(tmp_path, name)
    assert main(["plot", str(bad), "-o", str(tmp_path / "x.png")]) == 2
    assert _one_error_line(capsys).startswith(f"bsim: error: {bad}: not a bsim result, "
                                              f"trace or sweep")


@pytest.mark.parametrize("content,kind,message", [
    ({"traceEvents": None}, "timeline",
     'not a bsim trace: "traceEvents" must be an array, got null'),
    ({"traceEvents": [1]}, "timeline", "trace event 0 is a number, not an object"),
    ({"traceEvents": [{"ph": "X", "cat": "calc", "tid": 0, "ts": "x", "dur": 1,
                       "name": "add_time"}]}, "timeline",
     'trace event 0 has "ts" \'x\', not a finite number'),
    ({"format": "bsim-sweep/1", "rows": None}, "scaling", '"rows" must be an array, got null'),
    ({"format": "bsim-sweep/1", "rows": []}, "scaling", "the sweep has no rows"),
    ({"format": "bsim-sweep/1", "rows": [{"ranks": 0, "elapsed": 1.0}]}, "scaling",
     'sweep row 1 has "ranks" 0, not a positive integer'),
])
def test_plot_refuses_malformed_traces_and_sweeps(tmp_path, capsys, content, kind, message):
    """Traces and sweeps that the timeline or scaling plot cannot read: one line naming them."""
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(content))
    assert main(["plot", str(bad), "--kind", kind, "-o", str(tmp_path / "x.png")]) == 2
    assert _one_error_line(capsys) == f"bsim: error: {bad}: {message}"


def test_an_interrupted_sweep_keeps_the_points_that_finished(tmp_path, capsys):
    """Ctrl-C during point 2 (a SIGINT while its rank runs): point 1's row is written with
    an ``incomplete`` record that says so, and the one line names the files (it said
    "nothing written" and dropped the finished point).  (A ``raise KeyboardInterrupt`` of
    the program is the program's error, not a Ctrl-C: tests/test_error_lines_more.py.)"""
    prog = tmp_path / "stop.py"
    prog.write_text(PROGRAM.replace('raise ValueError(f"negative t={t}")',
                                    "import signal; signal.raise_signal(signal.SIGINT)"))
    prefix = tmp_path / "sw"
    assert main(["sweep", str(prog), "--param", "ranks=2", "--param", "t=1e-3,-1,2e-3",
                 "--network", NET, "-j", "1", "--quiet", "-o", str(prefix)]) == 130
    err = capsys.readouterr().err.strip()
    assert err == (f"bsim: interrupted at simulated t=0.0 s, the 1 of 3 points that finished "
                   f"are in {prefix}.csv and {prefix}.json")
    data = json.loads(prefix.with_suffix(".json").read_text())
    assert [r["t"] for r in data["rows"]] == ["1e-3"]
    assert data["incomplete"] == {"points": 3, "finished": 1, "interrupted": True}
