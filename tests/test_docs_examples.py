"""Every ```python example of the docs runs as written (docs cannot rot).

Each block is run as a script in an empty folder with the repository on the path.
A block that needs real ``mpiexec`` says so by importing ``REAL`` from mpi4py; it
runs as one host process here (and under ``mpiexec -n 2`` when available).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from conftest import MPIEXEC, ROOT

PAGES = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
BLOCKS = [(page, i, block) for page in PAGES
          for i, block in enumerate(re.findall(r"```python\n(.*?)```",
                                               page.read_text(encoding="utf-8"), re.S))]


def _run(args, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)


def test_the_docs_have_examples():
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize("page,index,block", BLOCKS,
                         ids=[f"{p.name}-{i}" for p, i, _ in BLOCKS])
def test_python_example_runs(page, index, block, tmp_path):
    if "mpi4py" in block:
        pytest.importorskip("mpi4py")
    script = tmp_path / "example.py"
    script.write_text(block)
    proc = _run([sys.executable, str(script)], tmp_path)
    assert proc.returncode == 0, f"{page.name} example {index}:\n{proc.stderr[-2000:]}"
    if "MPI as REAL" in block and MPIEXEC is not None:
        proc = _run([MPIEXEC, "-n", "2", sys.executable, str(script)], tmp_path)
        where = f"{page.name} example {index} under mpiexec -n 2"
        assert proc.returncode == 0, f"{where}:\n{proc.stderr[-2000:]}"
