"""Every example of the docs runs or is checked as written (docs cannot rot).

Python examples: each ```python block of ``docs/*.md`` and ``README.md`` is run as a
script in an empty folder with the repository on the path.  A block that needs real
``mpiexec`` says so by importing ``REAL`` from mpi4py; it runs as one host process here
(and under ``mpiexec -n 2`` when available).

Shell commands (``tests/doc_commands.py`` says what counts as one): every command of
every ```sh block and every whole command in the prose is **checked**: bsim's own
parser, the target with its parameters and rank count, the machine and the network
loaded and built as the run would (a sweep's every point as ``bsim sweep`` checks it),
a benchmark script's options against its ``--help``, a here-document's Python
compiled.  A page that shows a command which no longer parses, a renamed skeleton,
parameter, machine, option or script fails here.  A fenced block that holds commands
must be marked ```sh.

Commands are also **run** where that takes seconds, in-process in an empty folder,
by this rule:

* ``bsim run`` of at most ``RUN_RANKS`` (64) virtual ranks runs as shown; a larger run
  (the README's 4,096-rank ring, the 4,096-rank distributed halo) is checked only.
* ``bsim sweep`` runs with its lists cut short (the small-size override): in ``grid``
  mode every list keeps its first value (one point), in ``strong`` and ``weak`` mode
  the first two (the baseline and one scaled point), with ``--jobs 1``, when no point
  left has more than ``RUN_RANKS`` ranks.
* ``docs/calibration.md``'s workflow: steps 3 and 4 (kernel timing, fit, prediction) run
  as shown, with ``--n 256`` for the kernel timing (the small-size override; the
  tutorial times at that size), on a profile holding what step 1 writes (name, cores
  and a Hockney ``[network]``): steps 1 and 2 measure this machine under ``mpiexec``,
  which a loaded 2-core machine cannot do reliably, and are checked only (the tutorial's
  test runs ``calibrate network --quick``).
* The tutorial's and the README's commands run in ``tests/test_tutorial.py`` and
  ``tests/test_readme.py``; ``calibrate``, ``fit``, ``plot`` and ``compare`` elsewhere
  need measurements or earlier results, and benchmark scripts take minutes: these are
  checked only.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import doc_commands
import pytest
from conftest import MPIEXEC, ROOT

PAGES = doc_commands.PAGES
BLOCKS = [(page, i, block) for page in PAGES
          for i, block in enumerate(re.findall(r"```python\n(.*?)```",
                                               page.read_text(encoding="utf-8"), re.S))]
SHOWN = doc_commands.all_shown()
RUN_RANKS = 64
RUN_ELSEWHERE = ("docs/tutorial.md", "README.md")


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


# -- shell commands -----------------------------------------------------------------------

def test_the_docs_show_commands():
    """The finder sees the pages' commands (a broken finder would check nothing)."""
    blocks = {s.where.split(":")[0] for s in SHOWN if not s.inline}
    assert {"docs/calibration.md", "docs/outputs.md", "docs/distributed.md",
            "README.md"} <= blocks
    assert sum(1 for s in SHOWN if s.inline) >= 20
    assert any(s.heredoc for s in SHOWN if s.page == "docs/calibration.md")


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_command_blocks_are_marked_sh(page):
    """A fenced block that starts with a command is a ```sh block (so it is checked)."""
    assert doc_commands.unmarked_command_blocks(page) == []


@pytest.mark.parametrize("shown", SHOWN, ids=[f"{s.where}" for s in SHOWN])
def test_shown_command_is_valid(shown, tmp_path):
    doc_commands.check(shown, tmp_path)


def test_a_command_that_no_longer_parses_fails(tmp_path):
    """The check fails for a removed option, skeleton, parameter, machine or script."""
    bad = ["bsim run halo2d --no-such-option", "bsim run no_such_skeleton",
           "bsim run halo2d --param no_such=1", "bsim run hpl --machine no_such_machine",
           "bsim sweep halo2d --param px=0,2", "python benchmarks/no_such.py",
           "python benchmarks/engine_speed.py --no-such-option"]
    for text in bad:
        shown = doc_commands.Shown("test", 1, tuple(text.split()))
        with pytest.raises((AssertionError, ValueError, KeyError, FileNotFoundError)):
            doc_commands.check(shown, tmp_path)


def _runs_here(shown) -> bool:
    words = list(shown.words)
    return (not shown.inline and shown.page not in RUN_ELSEWHERE
            and words[:1] == ["bsim"] and words[1:2] in (["run"], ["sweep"]))


def _small(words: list[str], folder: Path) -> list[str] | None:
    """The command with the sweep override (module doc); None when it is too large."""
    args = words[1:]
    if args[0] == "sweep":
        mode = args[args.index("--mode") + 1] if "--mode" in args else "grid"
        keep = 1 if mode == "grid" else 2
        args = [",".join(a.split(",")[:keep]) if i and args[i - 1] == "--param" and
                "=" in a else a for i, a in enumerate(args)]
        args = args[:1] + ["--jobs", "1"] + args[1:]
    ranks = doc_commands.check_bsim(args, folder)
    return args if ranks is not None and ranks <= RUN_RANKS else None


RUNS = [s for s in SHOWN if _runs_here(s)]


@pytest.mark.parametrize("shown", RUNS, ids=[s.where for s in RUNS])
def test_shown_command_runs(shown, tmp_path):
    args = _small(list(shown.words), tmp_path)
    if args is None:
        pytest.skip(f"more than {RUN_RANKS} ranks: checked only (test_shown_command_is_valid)")
    if "--plot" in args:
        pytest.importorskip("matplotlib")
    from bsim.cli.main import main
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            assert main(args) == 0, shown.text
    finally:
        os.chdir(here)


PROFILE = """name = "host"
description = "what bsim calibrate network writes, for the test"
source = "tests/test_docs_examples.py"
cores_per_node = 2

[network]
model = "hockney"
latency = 2e-6
bandwidth = 5e9
"""


def _calibration_steps() -> str:
    """Steps 3 and 4 of docs/calibration.md's workflow, with the small-size override."""
    start, body = doc_commands.sh_blocks(ROOT / "docs" / "calibration.md")[0]
    assert "# 3. kernels" in body and "# 4. predict" in body
    steps = body[body.index("# 3. kernels"):]
    assert "--n 1024 --time-kernel" in steps
    return steps.replace("--n 1024 --time-kernel", "--n 256 --time-kernel")


def test_calibration_workflow_runs(tmp_path):
    """docs/calibration.md's steps 3 and 4, in order, on a profile as step 1 leaves it."""
    pytest.importorskip("scipy")
    pytest.importorskip("tomlkit")
    (tmp_path / "host.toml").write_text(PROFILE)
    (tmp_path / "benchmarks").symlink_to(ROOT / "benchmarks")
    bindir = Path(sys.executable).parent
    env = dict(os.environ, PYTHONPATH=str(ROOT),
               PATH=os.pathsep.join([str(bindir), os.environ.get("PATH", "")]))
    proc = subprocess.run(["bash", "-c", "set -euo pipefail\n" + _calibration_steps()],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "[kernels.jacobi2d]" in (tmp_path / "host.toml").read_text()
    assert re.search(r"predicted [\d.]+ ms for 50 iterations on 64 ranks", proc.stdout), \
        proc.stdout[-2000:]
    assert shutil.which("bsim", path=str(bindir))
