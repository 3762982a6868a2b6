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


def _run_json(tmp_path, module, *args):
    """``bsim run MODULE ARGS`` with the user's module named in $BSIM_SKELETONS; its JSON."""
    out = tmp_path / "r.json"
    proc = _bsim(["run", module, *args, "--quiet", "--json", str(out)], tmp_path, module)
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def test_bsim_skeletons_names_a_module_whose_skeleton_runs_by_name(tmp_path):
    (tmp_path / "mysk.py").write_text(MYSK)
    res = _run_json(tmp_path, "mysk", "-n", "8", "--machine", "bgp", "--param", "steps=5")
    assert res["program"] == "mysk" and res["machine"] == "bgp" and res["ranks"] == 8
    assert abs(res["totals"]["calc"] - 8 * 5 * 1e-3) < 1e-12   # 8 ranks x 5 steps x 1 ms
    listed = _bsim(["list", "skeletons"], tmp_path, "mysk")
    assert "mysk: a user's skeleton" in listed.stdout


def test_a_module_that_cannot_be_imported_is_one_line(tmp_path):
    proc = _bsim(["run", "mysk", "-n", "2"], tmp_path, "nosuchmodule")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "$BSIM_SKELETONS names module 'nosuchmodule'" \
        in proc.stderr


def _doc_example(name: str) -> str:
    """The ```python block of docs/skeletons.md that registers skeleton *name*."""
    import re
    page = (ROOT / "docs" / "skeletons.md").read_text(encoding="utf-8")
    return next(b for b in re.findall(r"```python\n(.*?)```", page, re.S)
                if f'name="{name}"' in b)


MYROOF = _doc_example("myroof")   # the page's own example, as written


def test_a_users_machine_kernel_takes_the_machines_table_else_its_roofline(tmp_path):
    """docs/skeletons.md, "Your own skeletons": on bgp (3.4 GFlop/s a core, 10 GB/s a node
    of 4 cores) a step of 6.8 Mflop and 1 MB costs max(6.8e6 / 3.4e9, 1e6 / 2.5e9) =
    2 ms (compute-bound); a machine file with [kernels.myroof] t_step = 5e-4 gives 0.5 ms."""
    (tmp_path / "myroof.py").write_text(MYROOF)
    res = _run_json(tmp_path, "myroof", "-n", "4", "--machine", "bgp", "--param", "steps=5")
    assert abs(res["totals"]["calc"] - 4 * 5 * 2e-3) < 1e-12
    assert "generic roofline on bgp" in res["kernel_model"]
    bgp = (ROOT / "bsim" / "machines" / "bgp.toml").read_text()
    (tmp_path / "mine.toml").write_text(bgp + "\n[kernels.myroof]\nt_step = 5e-4\n")
    res = _run_json(tmp_path, "myroof", "-n", "4", "--machine", str(tmp_path / "mine.toml"),
                    "--param", "steps=5")
    assert abs(res["totals"]["calc"] - 4 * 5 * 5e-4) < 1e-12
