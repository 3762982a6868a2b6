"""The files a run read are recorded by content (``netmodels/input_files.py``).

Two runs from different files with the same path or name (an explicit mapping edited
between runs, two versions of ``prog.py``) were recorded as equal and ``bsim compare``
reported no difference in their settings.  The expected fingerprints are computed here
from the files' bytes with hashlib, independently of bsim.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

from conftest import ROOT, file_sha, run_cli_json

import bsim
from bsim.machines import MACHINE_DIR
from bsim.outputs.compare import compare

PROGRAM = """\
from mpi4py import MPI
import bsim
comm = MPI.COMM_WORLD
bsim.add_time({calc})
comm.Barrier()
if comm.rank == 0:
    comm.Send(bsim.buffer(1 << 20, MPI.BYTE), dest=1)
elif comm.rank == 1:
    comm.Recv(bsim.buffer(1 << 20, MPI.BYTE), source=0)
"""
TWO_LEVEL = "twolevel:cores=2"


_sha = file_sha
_run = run_cli_json


def test_two_versions_of_one_program_file_are_told_apart(tmp_path):
    for version, calc in (("v1", "1e-3"), ("v2", "2e-3")):
        (tmp_path / version).mkdir()
        (tmp_path / version / "prog.py").write_text(PROGRAM.format(calc=calc))
    a = _run(tmp_path, "a.json", "v1/prog.py", "-n", "2")
    b = _run(tmp_path, "b.json", "v2/prog.py", "-n", "2")
    assert a["program"] == b["program"] == "prog.py"
    assert a["inputs"] == {"program prog.py": _sha(tmp_path / "v1" / "prog.py")}
    assert b["inputs"] == {"program prog.py": _sha(tmp_path / "v2" / "prog.py")}
    report = compare(str(tmp_path / "a.json"), str(tmp_path / "b.json"))
    assert "input files differ: program prog.py: " + a["inputs"]["program prog.py"] in report


def test_an_edited_mapping_file_is_told_apart(tmp_path):
    (tmp_path / "prog.py").write_text(PROGRAM.format(calc="0"))
    layout = tmp_path / "layout.txt"
    layout.write_text("0\n0\n1\n1\n")       # ranks 0 and 1 share a node
    a = _run(tmp_path, "a.json", "prog.py", "-n", "4", "--network",
             f"{TWO_LEVEL},mapping=file:layout.txt")
    first = _sha(layout)
    layout.write_text("0\n1\n0\n1\n")       # now they do not
    b = _run(tmp_path, "b.json", "prog.py", "-n", "4", "--network",
             f"{TWO_LEVEL},mapping=file:layout.txt")
    assert a["network"] == b["network"]
    assert a["elapsed"] != b["elapsed"]     # the layouts do differ
    assert a["inputs"]["mapping layout.txt"] == first
    assert b["inputs"]["mapping layout.txt"] == _sha(layout) != first
    assert "input files differ: mapping layout.txt" in compare(str(tmp_path / "a.json"),
                                                               str(tmp_path / "b.json"))


def test_a_machine_file_and_a_bundled_preset_are_recorded_by_content(tmp_path):
    """A bundled preset is recorded too (``preset es45.toml``): its tables change between
    trees while ``bsim_version`` stays 0.1.0, so results of one preset name from two trees
    could not be told apart (an outside review; it recorded nothing)."""
    mine = tmp_path / "mine.toml"
    shutil.copy(MACHINE_DIR / "es45.toml", mine)
    a = _run(tmp_path, "a.json", "sweep3d", "--machine", str(mine))
    b = _run(tmp_path, "b.json", "sweep3d", "--machine", "es45")
    assert a["inputs"] == {"machine mine.toml": _sha(mine)}
    assert b["inputs"] == {"preset es45.toml": _sha(MACHINE_DIR / "es45.toml")}
    assert a["elapsed"] == b["elapsed"]


def test_simulate_records_a_collective_table_and_a_mapping(tmp_path):
    table = tmp_path / "coll.csv"
    table.write_text("op,nprocs,nbytes,seconds\nbarrier,2,0,1e-6\nbarrier,4,0,2e-6\n")
    layout = tmp_path / "nodes.txt"
    layout.write_text("0\n0\n1\n1\n")

    def main():
        bsim.MPI.COMM_WORLD.Barrier()

    res = bsim.simulate(main, 4, network=f"{TWO_LEVEL},mapping=file:{layout}",
                        collectives=f"table:path={table}")
    assert res.inputs == {"collective table coll.csv": _sha(table),
                          "mapping nodes.txt": _sha(layout)}
    assert bsim.Result.from_dict(res.to_dict()).inputs == res.inputs
    # a run that reads no file records none
    assert bsim.simulate(main, 2).inputs == {}


def test_one_file_given_by_two_paths_is_one_input(tmp_path):
    """A relative and an absolute path to one mapping: compare finds no difference."""
    (tmp_path / "prog.py").write_text(PROGRAM.format(calc="0"))
    (tmp_path / "layout.txt").write_text("0\n0\n1\n1\n")
    a = _run(tmp_path, "a.json", "prog.py", "-n", "4", "--network",
             f"{TWO_LEVEL},mapping=file:layout.txt")
    b = _run(tmp_path, "b.json", "prog.py", "-n", "4", "--network",
             f"{TWO_LEVEL},mapping=file:{tmp_path / 'layout.txt'}")
    assert a["inputs"] == b["inputs"]
    assert "input files differ" not in compare(str(tmp_path / "a.json"),
                                               str(tmp_path / "b.json"))


def test_a_machine_files_mapping_is_found_beside_it_not_in_the_working_directory(tmp_path):
    """``mapping = "file:nodes.txt"`` in a machine file names the file next to it; it was
    looked up in the working directory (an error there, or another file of that name)."""
    machine_dir, elsewhere = tmp_path / "machine", tmp_path / "elsewhere"
    machine_dir.mkdir()
    elsewhere.mkdir()
    (machine_dir / "nodes.txt").write_text("0\n0\n1\n1\n")
    (elsewhere / "nodes.txt").write_text("0\n1\n0\n1\n")   # a decoy in the cwd
    text = (MACHINE_DIR / "es45.toml").read_text()
    text = text.replace("[network_variants.fattree]\n",
                        '[network_variants.fattree]\nmapping = "file:nodes.txt"\n', 1)
    (machine_dir / "mine.toml").write_text(text)
    (elsewhere / "prog.py").write_text(PROGRAM.format(calc="0"))
    out = _run(elsewhere, "a.json", "prog.py", "-n", "4", "--machine",
               f"{machine_dir / 'mine.toml'}:fattree")
    assert out["inputs"]["mapping nodes.txt"] == _sha(machine_dir / "nodes.txt")


def test_each_sweep_row_records_its_input_files(tmp_path):
    """``bsim sweep`` rows record the program and mapping files as ``bsim run`` does (they
    recorded none)."""
    (tmp_path / "prog.py").write_text(PROGRAM.format(calc="1e-3"))
    (tmp_path / "layout.txt").write_text("0\n0\n1\n1\n")
    done = subprocess.run([sys.executable, "-m", "bsim", "sweep", "prog.py",
                           "--param", "ranks=2,4",
                           "--network", f"{TWO_LEVEL},mapping=file:layout.txt", "-j", "1",
                           "--quiet", "-o", "sw"], capture_output=True, text=True,
                          cwd=tmp_path, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
                          timeout=120)
    assert done.returncode == 0, done.stderr
    rows = json.loads((tmp_path / "sw.json").read_text())["rows"]
    expected = {"program prog.py": _sha(tmp_path / "prog.py"),
                "mapping layout.txt": _sha(tmp_path / "layout.txt")}
    assert [row["settings"]["inputs"] for row in rows] == [expected, expected]
