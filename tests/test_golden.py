"""Golden traces: the exact predictions of representative runs, compared bit for bit.

Each case runs ``bsim run`` in a subprocess (the user's entry point, independent of
where bsim's modules live) and compares its JSON result, without the ``host``
section (wall time), and its Chrome trace where the timeline matters, with the
files in ``tests/golden/``.  The expected files were produced by bsim itself: they
do not say the predictions are right (the hand-derived and paper tests do that),
they say that a change which should not move a prediction did not move it.

Regenerate after a change that is *meant* to move predictions::

    python -m pytest tests/test_golden.py --update-golden

and say in the commit which prediction moved, by how much and why.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import MPIEXEC, ROOT

GOLDEN = Path(__file__).resolve().parent / "golden"
# program paths relative to the repository (runs use it as cwd): a trace records the
# program as given, so absolute paths would differ between checkouts
PROGRAMS = Path("tests/golden/programs")
TORUS = "torus:dims=2x2x2,link_bandwidth=1e9,latency=1e-6,hop_latency=1e-7"
HOCKNEY = "hockney:latency=2e-6,bandwidth=1e9"
LOGGP = "loggp:L=3e-6,o=1e-6,g=2e-6,G=1e-9"

# name -> (bsim run arguments, also compare the trace)
CASES: dict[str, tuple[list[str], bool]] = {
    "pingpong_bsim": (["tests/programs/pingpong.py", "-n", "2",
                       "--network", HOCKNEY, "--protocol", "bsim"], False),
    "pingpong_loggp": (["tests/programs/pingpong.py", "-n", "2",
                        "--network", LOGGP, "--protocol", "loggp"], False),
    "probe_wildcard_bsim": ([str(PROGRAMS / "probe_wildcard.py"), "-n", "4",
                             "--network", HOCKNEY, "--protocol", "bsim"], True),
    "probe_wildcard_loggp": ([str(PROGRAMS / "probe_wildcard.py"), "-n", "4",
                              "--network", LOGGP, "--protocol", "loggp"], True),
    "collectives_analytic": ([str(PROGRAMS / "collectives.py"), "-n", "8",
                              "--network", TORUS, "--protocol", "bsim"], False),
    "collectives_algorithmic_fluid": ([str(PROGRAMS / "collectives.py"), "-n", "8",
                                       "--network", TORUS, "--protocol", "loggp",
                                       "--collectives", "algorithmic",
                                       "--contention", "fluid"], True),
    "cart_halo_loggp_torus": (["tests/programs/cart_halo.py", "-n", "8",
                               "--network", TORUS, "--protocol", "loggp"], False),
    "halo2d_torus_fluid": (["halo2d", "--param", "px=8", "--param", "py=8",
                            "--param", "nx=512", "--param", "ny=512",
                            "--param", "iterations=3", "--param", "check_every=2",
                            "--network", "torus:dims=4x4x4,link_bandwidth=2e9,cores=1",
                            "--protocol", "loggp", "--contention", "fluid"], True),
    "sweep3d_es40": (["sweep3d", "--machine", "es40", "--protocol", "bsim"], False),
    "milc_cg_bgp": (["milc_cg", "--machine", "bgp", "--param", "niters=20",
                     "--protocol", "bsim"], False),
    "milc_rmd_xt5": (["milc_rmd", "--machine", "xt5", "--param", "niters=10",
                      "--protocol", "bsim"], False),
    "hpl_small": (["hpl", "--param", "n=2000", "--param", "nb=64", "--param", "p=2",
                   "--param", "q=2", "--machine", "primequest", "--protocol", "bsim"], False),
    "phase_small": (["phase", "--param", "ne=32", "--param", "nf=1024", "--param", "pb=2",
                     "--param", "pf=4", "--machine", "primequest", "--protocol", "bsim"], False),
}

# cases also run over K = 2 host processes: the same JSON as the one-process golden
DISTRIBUTED = ["milc_cg_bgp", "collectives_analytic"]


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT), PYTHONHASHSEED="0")


def _run(name: str, tmp_path: Path, launcher: list[str] | None = None) -> tuple[dict, str]:
    args, traced = CASES[name]
    out = tmp_path / f"{name}.json"
    cmd = [*(launcher or []), sys.executable, "-m", "bsim", "run", *args, "--quiet",
           "--json", str(out)]
    trace = tmp_path / f"{name}.trace.json"
    if traced and launcher is None:
        cmd += ["--trace", str(trace)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_env(), cwd=ROOT,
                          timeout=300)
    assert proc.returncode == 0, f"{name}: bsim run failed\n{proc.stderr}"
    result = json.loads(out.read_text())
    result.pop("host")
    result.pop("bsim_version")   # recorded, but a release must not move the goldens
    # the program file by content (an edit of its comments must not move the goldens)
    program = Path(args[0])
    expected = {f"program {program.name}": "sha256:" + hashlib.sha256(
        (ROOT / program).read_bytes()).hexdigest()[:16]} if program.suffix == ".py" else {}
    if "--machine" in args:   # a bundled preset, by content
        preset = args[args.index("--machine") + 1]
        expected[f"preset {preset}.toml"] = "sha256:" + hashlib.sha256(
            (ROOT / "bsim" / "machines" / f"{preset}.toml").read_bytes()).hexdigest()[:16]
    assert result.pop("inputs", {}) == expected, f"{name}: the input files recorded"
    return result, trace.read_text() if traced and launcher is None else ""


def _expected(path: Path, actual: str, update: bool) -> str:
    if update:
        path.write_text(actual)
    if not path.exists():
        pytest.fail(f"no golden file {path.name}: run pytest with --update-golden")
    return path.read_text()


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name: str, tmp_path: Path, update_golden: bool) -> None:
    """The prediction (and timeline) of each case is bit-identical to its golden file."""
    result, trace = _run(name, tmp_path)
    text = json.dumps(result, indent=1, sort_keys=True) + "\n"
    expected = _expected(GOLDEN / f"{name}.json", text, update_golden)
    assert json.loads(text) == json.loads(expected), f"{name}: the prediction moved"
    assert text == expected
    if CASES[name][1]:
        expected_trace = _expected(GOLDEN / f"{name}.trace.json", trace, update_golden)
        assert trace == expected_trace, f"{name}: the timeline moved"


@pytest.mark.skipif(MPIEXEC is None, reason="needs mpiexec and mpi4py (pip install 'bsim[mpi]')")
@pytest.mark.parametrize("name", DISTRIBUTED)
def test_golden_distributed(name: str, tmp_path: Path) -> None:
    """Over K = 2 host processes the prediction equals the one-process golden file."""
    result, _ = _run(name, tmp_path, launcher=[str(MPIEXEC), "-n", "2"])
    result.pop("distributed", None)
    expected = json.loads((GOLDEN / f"{name}.json").read_text())
    assert result == expected
