"""A user registers a skeleton of their own and runs it by name, like the bundled ones."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from conftest import ROOT

MYSK = textwrap.dedent('''
    import bsim
    from skeletons.registry import Param, Skeleton, grid, register


    def main(steps: int = 3, t_step: float = 1e-3):
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        for _ in range(steps):
            bsim.add_time(t_step)
            comm.Barrier()


    register(Skeleton(name="mysk", main=main, description="a user's skeleton",
                      params={"steps": Param("steps", minimum=0),
                              "t_step": Param("seconds per step", minimum=0)}))
''')


def _bsim(args, tmp_path, modules):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]),
               BSIM_SKELETONS=modules)
    return subprocess.run([sys.executable, "-m", "bsim", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)


def test_bsim_skeletons_names_a_module_whose_skeleton_runs_by_name(tmp_path):
    (tmp_path / "mysk.py").write_text(MYSK)
    out = tmp_path / "r.json"
    proc = _bsim(["run", "mysk", "-n", "8", "--machine", "bgp", "--param", "steps=5",
                  "--quiet", "--json", str(out)], tmp_path, "mysk")
    assert proc.returncode == 0, proc.stderr
    res = json.loads(out.read_text())
    assert res["program"] == "mysk" and res["machine"] == "bgp" and res["ranks"] == 8
    assert abs(res["totals"]["calc"] - 8 * 5 * 1e-3) < 1e-12   # 8 ranks x 5 steps x 1 ms
    listed = _bsim(["list", "skeletons"], tmp_path, "mysk")
    assert "mysk: a user's skeleton" in listed.stdout


def test_a_module_that_cannot_be_imported_is_one_line(tmp_path):
    proc = _bsim(["run", "mysk", "-n", "2"], tmp_path, "nosuchmodule")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "$BSIM_SKELETONS names module 'nosuchmodule'" \
        in proc.stderr
