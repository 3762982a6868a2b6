"""``--param K=V`` reaches a file program as ``--K=V`` on its command line.

The program below reads its options with argparse, as an mpi4py application does, and
charges ``nx * steps`` microseconds per rank: the prediction is then known by hand, and
it is the same whether the options came from ``--param`` or from after ``--``.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from bsim.cli.main import main

PROGRAM = textwrap.dedent('''
    import argparse
    import sys

    import bsim
    from mpi4py import MPI

    parser = argparse.ArgumentParser()
    parser.add_argument("--nx", type=int, default=1)
    parser.add_argument("--steps", type=int, default=1)
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    for _ in range(args.steps):
        bsim.add_time(args.nx * 1e-6)
        comm.Barrier()
    if comm.Get_rank() == 0:
        print("argv", sys.argv[1:])
''')


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    return path


def _run(args, tmp_path, capsys, program_args=()):
    out = tmp_path / "r.json"
    assert main(["run", *args, "--network", "hockney:latency=0,bandwidth=1e9",
                 "--protocol", "bsim", "--quiet", "--json", str(out), "--", *program_args]) == 0
    return json.loads(out.read_text()), capsys.readouterr().out


def test_params_become_options_and_are_recorded(program, tmp_path, capsys):
    result, out = _run([str(program), "-n", "4", "--param", "nx=50"], tmp_path, capsys,
                       ["--steps", "3"])
    assert "argv ['--nx=50', '--steps', '3']" in out
    # 3 steps of 50 us each; a barrier on a zero-latency network costs nothing
    assert result["elapsed"] == pytest.approx(150e-6, rel=1e-12)
    assert result["params"]["nx"] == "50"
    assert result["params"]["argv"] == "--nx=50 --steps 3"


def test_param_and_arguments_after_dashes_predict_the_same(program, tmp_path, capsys):
    by_param, _ = _run([str(program), "-n", "2", "--param", "nx=7", "--param", "steps=2"],
                       tmp_path, capsys)
    by_args, _ = _run([str(program), "-n", "2"], tmp_path, capsys, ["--nx=7", "--steps=2"])
    assert by_param["elapsed"] == by_args["elapsed"] == pytest.approx(14e-6, rel=1e-12)


def test_a_parameter_that_is_not_an_option_name_is_one_line(program, tmp_path, capsys):
    assert main(["run", str(program), "-n", "2", "--param", "n x=3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is not an option name" in err[0]


def test_sweep_over_a_file_parameter(program, tmp_path, capsys):
    prefix = tmp_path / "sw"
    assert main(["sweep", str(program), "--param", "ranks=2", "--param", "nx=10,20",
                 "--network", "hockney:latency=0,bandwidth=1e9", "--protocol", "bsim",
                 "--jobs", "1", "--quiet",
                 "-o", str(prefix)]) == 0
    rows = json.loads(prefix.with_suffix(".json").read_text())["rows"]
    assert [(r["nx"], r["elapsed"]) for r in rows] == [("10", pytest.approx(10e-6)),
                                                       ("20", pytest.approx(20e-6))]
