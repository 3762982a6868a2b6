"""docs/tutorial.md: every ```sh block, in order, runs (the page cannot go stale)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import MPIEXEC, ROOT

PAGE = ROOT / "docs" / "tutorial.md"


def blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)


def test_the_tutorial_has_its_steps():
    text = "\n".join(blocks())
    for step in ("mpiexec -n 4", "--compute measure", "--time-kernel", "bsim fit kernel",
                 "calibrate network", "bsim.simulate", "bsim compare", "bsim plot", "--trace",
                 "bsim record", "bsim replay", "bsim skeleton"):
        assert step in text, step


@pytest.mark.skipif(MPIEXEC is None, reason="the tutorial runs mpiexec (pip install 'bsim[mpi]')")
def test_every_command_of_the_tutorial_runs(tmp_path: Path):
    pytest.importorskip("scipy")
    pytest.importorskip("matplotlib")
    (tmp_path / "benchmarks").symlink_to(ROOT / "benchmarks")
    bindir = Path(sys.executable).parent
    env = dict(os.environ, PYTHONPATH=str(ROOT),
               PATH=os.pathsep.join([str(bindir), os.environ.get("PATH", "")]))
    script = "set -euo pipefail\n" + "\n".join(blocks())
    proc = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    out = tmp_path / "tutorial-out"
    for name in ("unmodified.json", "step.csv", "here.toml", "bgp.json", "xt5.json",
                 "bgp.png", "jacobi.trace.json", "app-trace.otf2", "app-here.json",
                 "app-xt5.json", "app_skel.py", "app-skel2.json", "app-skel64.json"):
        assert (out / name).stat().st_size > 0, name
    assert re.search(r"bgp: [\d.]+ ms for 20 iterations", proc.stdout)
    assert "machine differ: bgp -> xt5" in proc.stdout
    assert shutil.which("bsim", path=str(bindir))
