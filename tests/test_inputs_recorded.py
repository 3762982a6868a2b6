"""Every file that shaped a prediction is in ``Result.inputs``, whichever rank read it and
however many runs a process makes (``netmodels/input_files.py``).

An outside review found three holes: a note made inside a rank was lost (the ranks'
greenlets ran in an empty ``contextvars`` context, so the run's recording was not
seen there); MILC's kernel table was read once per process (``functools.cache``) and
HPL's ``table:path=`` file was never noted, so ``milc_cg --param machine=mine.toml``
and ``hpl --param kernel=table:path=k.csv`` recorded nothing while an edit of the file
moved the prediction (1.277 s -> 3.677 s, 0.156 s -> 0.297 s); and a module imported
from the program's own folder was not recorded.  The expected fingerprints are
computed here from the files' bytes with hashlib, independently of bsim.
"""

from __future__ import annotations

import hashlib
import sys
import threading
from pathlib import Path

import pytest
from conftest import file_sha, run_cli_json

import bsim
from bsim.cli.targets import load_target
from bsim.machines import MACHINE_DIR
from bsim.outputs.compare import compare
from netmodels.input_files import note_input, recording_inputs

HPL = ["hpl", "--param", "n=2000", "--param", "nb=64", "--param", "p=2", "--param", "q=2",
       "--param", "verbose=False"]
PROGRAM = """\
import bsim
from mpi4py import MPI
import helper
from pkg import sub
comm = MPI.COMM_WORLD
bsim.add_time(helper.T * (comm.rank + 1) + sub.U)
comm.Barrier()
"""


_sha = file_sha


def _text_sha(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16]


_run = run_cli_json


def _mine(tmp_path: Path, b1: str = "3.04e-6") -> Path:
    """bgp's machine file renamed ``mine``, with MILC's ``CG b1`` set to *b1*."""
    text = (MACHINE_DIR / "bgp.toml").read_text().replace('name = "bgp"', 'name = "mine"')
    assert "CG = { b1 = 3.04e-6" in text
    mine = tmp_path / "mine.toml"
    mine.write_text(text.replace("CG = { b1 = 3.04e-6", f"CG = {{ b1 = {b1}"))
    return mine


def test_a_note_made_inside_a_rank_is_recorded(tmp_path):
    """A file noted by a rank, and by a Python thread of another rank, is the run's input
    (the rank's greenlet runs in a copy of the run's context, not an empty one)."""
    def main():
        from mpi4py import MPI
        if MPI.COMM_WORLD.rank == 0:
            note_input("inside", tmp_path / "b.txt", "y")
        elif MPI.COMM_WORLD.rank == 1:
            t = threading.Thread(target=note_input, args=("thread", "c.txt", "z"))
            t.start()
            t.join()
        bsim.add_time(1e-3)

    assert bsim.simulate(main, 3, protocol="bsim").inputs == {"inside b.txt": _text_sha("y"),
                                             "thread c.txt": _text_sha("z")}


def test_two_runs_in_one_process_both_record_the_machine_file(tmp_path):
    """milc_cg with a machine file, twice in one process: both runs record the file (it
    was read once per process), and an edit between them changes the digest and the
    prediction (the second run no longer reuses the first run's kernel table)."""
    mine = _mine(tmp_path)
    results = []
    for b1 in ("3.04e-6", "9.04e-6"):
        mine.write_text(mine.read_text().replace("CG = { b1 = 3.04e-6", f"CG = {{ b1 = {b1}"))
        target = load_target("milc_cg", {"machine": str(mine), "niters": 20})
        results.append(bsim.simulate(target.main, target.ranks, kwargs=target.kwargs,
                                     protocol="bsim"))
        assert results[-1].inputs == {"machine mine.toml": _sha(mine)}
    first, second = results
    assert first.inputs != second.inputs
    assert second.elapsed > first.elapsed


def test_two_runs_in_one_process_both_record_the_hpl_kernel_table(tmp_path):
    """hpl with ``kernel=table:path=k.csv``, twice in one process with an edit between:
    each run records the table as it read it, and the edit moves the prediction."""
    table = tmp_path / "k.csv"
    results = []
    for seconds in ("0.1", "0.2"):
        table.write_text(f"kernel,flops,seconds\ndgemm,1e9,{seconds}\n")
        target = load_target("hpl", {"n": 2000, "nb": 64, "p": 2, "q": 2, "verbose": False,
                                     "kernel": f"table:path={table}"})
        results.append(bsim.simulate(target.main, target.ranks, kwargs=target.kwargs,
                                     protocol="bsim"))
        assert results[-1].inputs == {"kernel table k.csv": _sha(table)}
    assert results[0].inputs != results[1].inputs
    assert results[1].elapsed > results[0].elapsed


def test_milc_machine_file_is_recorded_and_its_edit_told(tmp_path):
    """``bsim run milc_cg --param machine=mine.toml``: the result records the file by
    content and the kernel model names it; after editing ``CG b1`` the digest differs
    and ``bsim compare`` says the input files differ."""
    mine = _mine(tmp_path)
    a = _run(tmp_path, "a.json", "milc_cg", "--param", "machine=mine.toml",
             "--protocol", "bsim")
    first = _sha(mine)
    _mine(tmp_path, b1="9.04e-6")
    b = _run(tmp_path, "b.json", "milc_cg", "--param", "machine=mine.toml",
             "--protocol", "bsim")
    assert a["inputs"] == {"machine mine.toml": first}
    assert b["inputs"] == {"machine mine.toml": _sha(mine)} != a["inputs"]
    assert a["kernel_model"] == b["kernel_model"] == \
        "machine = mine.toml (given): mine [kernels.milc]"
    assert a["elapsed"] == pytest.approx(1.2768959679999852, rel=1e-12)
    assert b["elapsed"] == pytest.approx(3.676895968000151, rel=1e-12)
    report = compare(str(tmp_path / "a.json"), str(tmp_path / "b.json"))
    assert f"input files differ: machine mine.toml: {first} -> {_sha(mine)}" in report


def test_hpl_kernel_table_is_recorded_and_its_edit_told(tmp_path):
    """``bsim run hpl --param kernel=table:path=k.csv``: the table is recorded by content;
    an edit changes the digest and ``bsim compare`` says so."""
    table = tmp_path / "k.csv"
    table.write_text("kernel,flops,seconds\ndgemm,1e9,0.1\n")
    a = _run(tmp_path, "a.json", *HPL, "--param", "kernel=table:path=k.csv")
    first = _sha(table)
    table.write_text("kernel,flops,seconds\ndgemm,1e9,0.2\n")
    b = _run(tmp_path, "b.json", *HPL, "--param", "kernel=table:path=k.csv")
    assert a["inputs"] == {"kernel table k.csv": first}
    assert b["inputs"] == {"kernel table k.csv": _sha(table)} != a["inputs"]
    assert a["kernel_model"] == "kernel = table:path=k.csv (given)"
    assert b["elapsed"] > a["elapsed"]
    report = compare(str(tmp_path / "a.json"), str(tmp_path / "b.json"))
    assert f"input files differ: kernel table k.csv: {first} -> {_sha(table)}" in report


def _program(folder: Path, t: str = "1e-3") -> Path:
    (folder / "pkg").mkdir(parents=True, exist_ok=True)
    (folder / "helper.py").write_text(f"T = {t}\n")
    (folder / "pkg" / "__init__.py").write_text("")
    (folder / "pkg" / "sub.py").write_text("import json\nU = 2e-3\n")   # json: stdlib
    prog = folder / "prog.py"
    prog.write_text(PROGRAM)
    return prog


def _local(folder: Path) -> dict[str, str]:
    return {"program prog.py": _sha(folder / "prog.py"),
            "module helper.py": _sha(folder / "helper.py"),
            "module pkg/__init__.py": _sha(folder / "pkg" / "__init__.py"),
            "module pkg/sub.py": _sha(folder / "pkg" / "sub.py")}


def test_local_modules_are_recorded_and_an_edit_told(tmp_path):
    """A program importing ``helper`` and ``pkg.sub`` from its folder: the result records
    the program and those modules (by path relative to the folder), no others; editing
    ``helper.py`` changes its digest and the prediction, and ``bsim compare`` says so."""
    _program(tmp_path / "app")
    a = _run(tmp_path, "a.json", "app/prog.py", "-n", "4", "--protocol", "bsim")
    first = _local(tmp_path / "app")
    (tmp_path / "app" / "helper.py").write_text("T = 5.0e-3\n")   # another size: no stale .pyc
    b = _run(tmp_path, "b.json", "app/prog.py", "-n", "4", "--protocol", "bsim")
    assert a["inputs"] == first
    assert b["inputs"] == _local(tmp_path / "app")
    assert b["inputs"]["module helper.py"] != first["module helper.py"]
    assert (a["elapsed"], b["elapsed"]) == (pytest.approx(6.002e-3), pytest.approx(22.002e-3))
    report = compare(str(tmp_path / "a.json"), str(tmp_path / "b.json"))
    assert (f"input files differ: module helper.py: {first['module helper.py']} -> "
            f"{b['inputs']['module helper.py']}") in report


@pytest.mark.parametrize("private", [True, False])
def test_local_modules_are_recorded_by_every_run_of_a_process(tmp_path, private):
    """Two runs of one file program in one process both record its local modules, with
    private module copies per rank (re-imported by each run, so an edit between the runs
    is seen and recorded) and with shared ones (kept in ``sys.modules``: the second run
    records what it used, the first run's helper)."""
    prog = _program(tmp_path / f"app{private}")
    helper = prog.parent / "helper.py"
    used = _local(prog.parent)
    results = []
    try:
        for t in ("1e-3", "5.0e-3"):
            helper.write_text(f"T = {t}\n")
            with recording_inputs():   # as bsim run and a sweep's point: the program too
                target = load_target(str(prog), {})
                results.append(bsim.simulate(target.main, 4, private_modules=private,
                                             protocol="bsim"))
    finally:
        for name in ("helper", "pkg", "pkg.sub"):
            sys.modules.pop(name, None)
        sys.path.remove(str(prog.parent.resolve()))
    assert results[0].inputs == used
    if private:
        assert results[1].inputs == _local(prog.parent) != used
        assert results[1].elapsed == pytest.approx(22.002e-3)
    else:
        assert results[1].inputs == used
        assert results[1].elapsed == pytest.approx(6.002e-3)
