"""The bsim command: unmodified mpi4py programs and registered skeletons."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from bsim.cli.main import main

PROGRAMS = Path(__file__).parent / "programs"
L, W = 1e-6, 1e9
NET = f"hockney:latency={L},bandwidth={W}"


def test_unmodified_pingpong_prints_value_and_time(capsys):
    """pingpong.py: the data is incremented remotely; round trip = 2 (l + 1000/w)."""
    assert main(["run", str(PROGRAMS / "pingpong.py"), "-n", "4", "--network", NET,
                 "--protocol", "bsim"]) == 0
    out = capsys.readouterr().out
    rtt = 2 * (L + 1000 / W)                       # 2 x 2 us
    assert f"pingpong round trip {rtt:.9f} s checksum 8000" in out   # 1000 bytes of 7+1
    assert "elapsed" in out


def test_unmodified_ring_prints_sum_and_time(capsys):
    """ring.py on 4 ranks: total 1+2+3 = 6 after 4 sequential small messages."""
    assert main(["run", str(PROGRAMS / "ring.py"), "-n", "4", "--network", NET,
                 "--protocol", "bsim"]) == 0
    out = capsys.readouterr().out
    size = len(pickle.dumps(0, pickle.HIGHEST_PROTOCOL))   # small ints pickle to the same size
    assert f"ring total 6 at t={4 * (L + size / W):.9f}" in out


def test_skeleton_run_writes_json(tmp_path, capsys):
    """bsim run halo2d --param ... --json writes a result with the expected rank count."""
    out = tmp_path / "halo.json"
    assert main(["run", "halo2d", "--param", "px=4", "--param", "py=2", "--param",
                 "iterations=2", "--network", NET, "--json", str(out), "--quiet"]) == 0
    doc = json.loads(out.read_text())
    assert doc["ranks"] == 8 and doc["params"]["px"] == 4
    assert capsys.readouterr().out == ""


def test_cli_errors_are_one_line_with_exit_code_2(capsys):
    """Unknown skeletons and parameters give a clear error and exit code 2."""
    assert main(["run", "nosuch"]) == 2
    assert "unknown skeleton 'nosuch'; valid: dns3d, halo2d" in capsys.readouterr().err
    assert main(["run", "halo2d", "--param", "bogus=1"]) == 2
    assert "unknown parameter(s) bogus" in capsys.readouterr().err



@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_a_non_finite_parameter_is_refused_before_the_run(value, capsys):
    """``t_point=nan`` passed the ``>= 0`` check (NaN compares false) and failed inside a
    rank at the skeleton's add_time; it is one line before the run now."""
    assert main(["run", "halo2d", "--param", f"t_point={value}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"parameter t_point={float(value)!r} must be a finite number" in err

@pytest.mark.parametrize("what", ["skeletons", "networks", "protocols", "filesystems"])
def test_list_commands(what, capsys):
    """bsim list shows names with their parameters."""
    assert main(["list", what]) == 0
    out = capsys.readouterr().out
    assert {"skeletons": "halo2d", "networks": "hockney", "protocols": "loggp",
            "filesystems": "stripe_count"}[what] in out


def test_console_script_runs_as_module():
    """python -m bsim works in a fresh process (the installed entry point's target)."""
    proc = subprocess.run([sys.executable, "-m", "bsim", "run", str(PROGRAMS / "ring.py"),
                           "-n", "3", "--network", NET, "--quiet"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "ring total 3" in proc.stdout


def test_declared_console_script_is_the_cli_entry_point():
    """pyproject's ``bsim = "module:function"`` names a function that runs the CLI."""
    import importlib
    try:
        import tomllib
    except ImportError:   # Python 3.10
        import tomli as tomllib

    from conftest import ROOT
    spec = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]["bsim"]
    module, _, attr = spec.partition(":")
    entry = getattr(importlib.import_module(module), attr)
    assert callable(entry) and entry is main
    with pytest.raises(SystemExit) as exc:
        entry(["--version"])
    assert exc.value.code == 0


@pytest.mark.parametrize("program,ranks,expected", [
    ("cpi.py", 4, "pi is approximately 3.14159265"),
    ("cart_halo.py", 6, "halo exchange on [3, 2] grid: ok"),
    ("matvec.py", 9, "matvec max error 0.0e+00"),
])
def test_unmodified_programs_with_collectives(program, ranks, expected, capsys):
    """cpi (bcast + reduce), a Cartesian halo exchange and a 2-D matvec give right answers."""
    assert main(["run", str(PROGRAMS / program), "-n", str(ranks), "--network", NET]) == 0
    assert expected in capsys.readouterr().out


def test_collective_cost_options_reach_the_simulation(tmp_path):
    """--collective OP=SPEC overrides one op's cost; --collectives clog sets the default.

    cpi.py calls bcast (root 0) then reduce (root 0); no add_time, so every rank reaches
    each collective at the same time and the dependency rules reduce to "+ T".
    """
    out = tmp_path / "r.json"
    assert main(["run", str(PROGRAMS / "cpi.py"), "-n", "4", "--network", NET,
                 "--collective", "reduce=clog:c=1e-3,d=0", "--collective",
                 "bcast=clog:c=0,d=0", "--json", str(out), "--quiet"]) == 0
    doc = json.loads(out.read_text())
    # bcast free, reduce 1 ms: the root (rank 0) finishes at its own compute + 1 ms; others
    # (fan-in non-roots) at their compute + 1 ms.  All compute is 0 here (no add_time).
    assert doc["per_rank"]["finish"] == [1e-3] * 4
    assert "reduce=clog" in doc["collectives"]
    # global --collectives clog: c = 2 ms, d = 0 prices bcast; reduce keeps its 1 ms override.
    # cpi's lowercase bcast is two bcasts, as mpi4py's (the pickle's length, then the
    # pickle): root at 0 + 2 x 2 ms, non-roots the same; reduce: root at max(4 ms) + 1 ms,
    # non-roots at 4 ms + 1 ms -> every rank finishes at 5 ms.
    assert main(["run", str(PROGRAMS / "cpi.py"), "-n", "4", "--network", NET,
                 "--collectives", "clog:c=2e-3,d=0", "--collective", "reduce=clog:c=1e-3,d=0",
                 "--json", str(out), "--quiet"]) == 0
    doc = json.loads(out.read_text())
    assert doc["per_rank"]["finish"] == pytest.approx([5e-3] * 4, rel=1e-12)
    assert doc["per_rank"]["comm"] == pytest.approx([5e-3] * 4, rel=1e-12)


def test_compute_measure_charges_host_time(tmp_path):
    """--compute measure turns cpi's Python loop into calc time > 0."""
    out = tmp_path / "m.json"
    assert main(["run", str(PROGRAMS / "cpi.py"), "-n", "2", "--network", NET,
                 "--compute", "measure", "--json", str(out), "--quiet"]) == 0
    assert min(json.loads(out.read_text())["per_rank"]["calc"]) > 0


def test_dash_writes_the_result_to_stdout(capsys, tmp_path, monkeypatch):
    """--csv - and --json - write to standard output (the summary moves to stderr); only
    one of them may."""
    import json as _json
    monkeypatch.chdir(tmp_path)
    assert main(["run", "halo2d", "--param", "px=3", "--param", "py=1", "--param",
                 "iterations=1", "--network", NET, "--csv", "-"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0] == "rank,finish,calc,wait,comm,ops,messages,bytes"
    assert "bsim prediction" in err and not (tmp_path / "-").exists()
    assert main(["run", "halo2d", "--param", "px=2", "--param", "py=1", "--param",
                 "iterations=1", "--network", NET, "--json", "-", "--quiet"]) == 0
    data = _json.loads(capsys.readouterr().out)
    assert data["format"] == "bsim-result/1" and data["ranks"] == 2
    assert main(["run", "halo2d", "--json", "-", "--csv", "-"]) == 2
    assert "only one of --json and --csv" in capsys.readouterr().err


@pytest.mark.parametrize("skeleton,n,expected", [
    ("halo2d", 64, {"px": 8, "py": 8}), ("sweep3d", 16, {"px": 4, "py": 4}),
    ("hpl", 8, {"p": 2, "q": 4}), ("phase", 8, {"pb": 2, "pf": 4}),
    ("dns3d", 8, {"px": 4, "pz": 2}), ("milc_cg", 64, {"nprocs": 64}),
])
def test_n_scales_a_skeleton_to_a_balanced_grid(skeleton, n, expected, tmp_path):
    """-n N gives the skeleton a balanced process grid of N (MPI_Dims_create's rule; HPL
    keeps P <= Q) when the user set none of its grid parameters."""
    from bsim.cli.targets import load_target
    target = load_target(skeleton, {}, None, None, n)
    assert target.ranks == n
    assert {k: target.params[k] for k in expected} == expected


def test_n_does_not_override_a_grid_the_user_gave(capsys):
    """--param px=4 --param py=4 with -n 64: the user's grid stands and the error names it."""
    assert main(["run", "halo2d", "-n", "64", "--param", "px=4", "--param", "py=4",
                 "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "runs on 16 ranks, not -n 64" in err and "--param px=..." in err


@pytest.mark.parametrize("skeleton", ["hpl", "phase"])
def test_quiet_silences_a_skeletons_own_output(skeleton, capsys):
    """--quiet: no summary, no progress, and HPL's and PHASE's result lines are off too
    (their verbose parameter defaults to False); --param verbose=true brings them back."""
    args = ["run", skeleton, "--quiet"] + (["--param", "n=500"] if skeleton == "hpl" else [])
    assert main(args) == 0
    assert capsys.readouterr().out == ""
    assert main(args + ["--param", "verbose=true"]) == 0
    assert capsys.readouterr().out != ""


def test_quiet_does_not_change_the_recorded_parameters(tmp_path):
    """--quiet silences HPL's own print (verbose=False) but shapes nothing: the JSON's
    params are the same with and without it (bsim compare showed a difference)."""
    import json

    from bsim.cli.main import main as cli
    out = {}
    for quiet in (True, False):
        path = tmp_path / f"{quiet}.json"
        assert cli(["run", "hpl", "--param", "n=1000", "--param", "p=2", "--param", "q=2",
                    "-n", "4", "--json", str(path)] + (["--quiet"] if quiet else [])) == 0
        out[quiet] = json.loads(path.read_text())["params"]
    assert out[True] == out[False] and "verbose" not in out[True]
