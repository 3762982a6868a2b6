"""The README's skeleton runs the three ways the README says, taken from the README itself."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from conftest import MPIEXEC, ROOT, needs_mpiexec

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _ring(tmp_path):
    """The README's ``ring.py`` block, written where the commands expect it."""
    block = re.search(r"Save this as\s+`ring.py`:\s+```python\n(.*?)```", README, re.S)
    assert block, "the README's ring.py example is gone"
    (tmp_path / "ring.py").write_text(block.group(1))
    return tmp_path / "ring.py"


def _run(args, cwd, **kw):
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300, **kw)


def test_bsim_run_simulates_the_file_once_per_virtual_rank(tmp_path):
    ring = _ring(tmp_path)
    out = tmp_path / "r.json"
    proc = _run([sys.executable, "-m", "bsim", "run", str(ring), "-n", "64", "--network",
                 "torus:dims=4x4x4,link_bandwidth=1e10", "--quiet", "--json", str(out)],
                tmp_path, env=_env())
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    # one Isend, one Irecv, Waitall, one Allreduce per rank; 1 ms of compute on each
    assert result["ranks"] == 64 and result["totals"]["messages"] == 64
    assert result["totals"]["calc"] == pytest.approx(64 * 1e-3)
    assert result["elapsed"] > 1e-3


def test_simulate_from_python(tmp_path):
    _ring(tmp_path)
    code = "import bsim, ring; r = bsim.simulate(ring.main, 256); print(r.ranks, r.elapsed)"
    proc = _run([sys.executable, "-c", code], tmp_path, env=_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    ranks, elapsed = proc.stdout.split()
    assert ranks == "256" and float(elapsed) > 1e-3


@needs_mpiexec
def test_real_mpiexec_runs_the_application_not_a_simulation(tmp_path):
    ring = _ring(tmp_path)
    proc = _run([MPIEXEC, "-n", "2", sys.executable, str(ring)], tmp_path, env=_env())
    assert proc.returncode == 0, proc.stderr
    assert "bsim prediction" not in proc.stdout   # no simulation ran


def _env(extra=None):
    import os
    paths = [str(ROOT)] + ([str(extra)] if extra else [])
    return dict(os.environ, PYTHONPATH=os.pathsep.join(paths))
