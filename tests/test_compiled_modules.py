"""The compiled fluid layer (``setup.py``, ``bsim/engine/compiled.py``) against its source.

``setup.py`` compiles the fluid contention layer's modules with Cython, unchanged; the
``.py`` files are the reference.  Here the same contention-aware runs (every path of the
layer: flat NICs, torus and fat-tree routes, striped rails, adaptive routing, a model's
own ``contention_flows``, both sharing rules and both start rules, collectives expanded
into messages, a late-starting flow) run in two processes, one with the extensions and
one with ``BSIM_PURE_PYTHON=1``, and must give the same per-rank times bit for bit.
CI sets ``BSIM_REQUIRE_COMPILED=1`` so that a build that silently fell back to Python
fails instead of comparing Python with itself.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bsim.engine import compiled

ROOT = Path(__file__).resolve().parents[1]

CASES = r"""
import json, sys
import bsim
from bsim.engine.compiled import compiled_modules
from bsim.validation.programs import PROGRAMS
from bsim.validation.smpi import Platform, SMPI_PROTOCOL, SMPI_CONTENTION

def run(prog, network, protocol, contention, args, ranks=64, collectives=None):
    res = bsim.simulate(PROGRAMS[prog], ranks=ranks, network=network, protocol=protocol,
                        contention=contention, collectives=collectives, args=args)
    return [repr(float(x)) for x in (*res.finish, *res.comm, *res.wait)]

out = {}
platforms = {"star": Platform("star", 64).bsim_network(),
             "torus": Platform("torus", 64, dims=(4, 4, 4)).bsim_network(),
             "fattree": Platform("fattree", 64, dims=(4, 3)).bsim_network()}
for kind, net in platforms.items():
    for prog, args in (("sweep", (50000, 1, 1e-5)), ("halo2d", (200000, 2, 1e-4))):
        out[f"{prog}/{kind}/smpi"] = run(prog, net, SMPI_PROTOCOL, SMPI_CONTENTION, args)
        out[f"{prog}/{kind}/bsim"] = run(prog, net, "bsim", "fluid", args)
    out[f"allreduce/{kind}"] = run("allreduce", net, "loggp", "fluid", (1 << 20, 2, 1e-5),
                                   collectives="algorithmic")
rails = "fattree:k=4,n=2,rails=2,link_bandwidth=1e9,cores=2"
out["halo2d/rails"] = run("halo2d", rails, "loggp", "fluid", (300000, 2, 0.0), ranks=32)
out["halo2d/adaptive"] = run("halo2d", "fattree:k=4,n=2,routing=adaptive,cores=1", "loggp",
                             "fluid", (300000, 2, 0.0), ranks=16)
out["ring/twolevel"] = run("ring", "twolevel:cores=4", "bsim", "fluid:share=latency",
                           (1 << 20, 3, 1e-6), ranks=32)
out["ring/late"] = run("ring", "torus:dims=4x4", "loggp", "fluid:start=after_latency",
                       (100, 4, 0.0), ranks=16)
json.dump({"compiled": compiled_modules(), "runs": out}, sys.stdout)
"""


def run_cases(cases: str, pure: bool) -> dict:
    """The JSON that the script *cases* prints, run in a fresh process with the compiled
    modules (*pure* False) or with ``BSIM_PURE_PYTHON=1``."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), BSIM_PURE_PYTHON="1" if pure else "0")
    done = subprocess.run([sys.executable, "-c", cases], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_compiled_layer_gives_the_pythons_results_bit_for_bit():
    fast, pure = run_cases(CASES, pure=False), run_cases(CASES, pure=True)
    assert pure["compiled"] == []
    if os.environ.get("BSIM_REQUIRE_COMPILED") == "1":
        assert fast["compiled"] == list(compiled.COMPILED), "the fluid layer is not compiled"
    elif not fast["compiled"]:
        pytest.skip("the fluid layer is not compiled here (no C compiler at install?)")
    assert fast["runs"].keys() == pure["runs"].keys()
    for case, values in pure["runs"].items():
        assert fast["runs"][case] == values, case
    # the cases moved data: contention changed something (not a comparison of zeros)
    assert len({v for vals in pure["runs"].values() for v in vals}) > 100


def _package(tmp_path: Path, built_from: str | None, record: bool = True) -> Path:
    """A folder with ``fabric.py`` and a stand-in extension built from *built_from*
    (None: no extension); *record*: with the build's record of the source's digest."""
    import importlib.machinery
    folder = tmp_path / "engine"
    folder.mkdir()
    (folder / "fabric.py").write_text("WHICH = 'source'\n")
    if built_from is not None:
        ext = folder / ("fabric" + importlib.machinery.EXTENSION_SUFFIXES[0])
        ext.write_bytes(b"not really a shared object")
        if record:
            digest = hashlib.sha256(built_from.encode()).hexdigest()
            (folder / compiled.SOURCES_FILE).write_text(
                json.dumps({"bsim.engine.fabric": digest}))
    return folder


def test_an_extension_built_from_another_source_is_not_run(tmp_path):
    """A developer's edit after the build: the stale extension would run the old code."""
    folder = _package(tmp_path, built_from="WHICH = 'the old source'\n")
    finder = compiled._CompiledFinder(pure=False)
    with pytest.warns(RuntimeWarning, match="changed after it was compiled"):
        spec = finder.find_spec("bsim.engine.fabric", [str(folder)])
    assert spec is not None and spec.origin == str(folder / "fabric.py")


def test_an_extension_of_this_source_is_left_to_pythons_finder(tmp_path):
    """Whatever the files' times (a wheel's install unpacks the .py after the .so)."""
    folder = _package(tmp_path, built_from="WHICH = 'source'\n")
    import importlib.machinery
    ext = folder / ("fabric" + importlib.machinery.EXTENSION_SUFFIXES[0])
    os.utime(ext, (time.time() - 100, time.time() - 100))   # older than the .py
    assert compiled._CompiledFinder(pure=False).find_spec("bsim.engine.fabric",
                                                          [str(folder)]) is None
    # BSIM_PURE_PYTHON=1: the source all the same
    spec = compiled._CompiledFinder(pure=True).find_spec("bsim.engine.fabric", [str(folder)])
    assert spec is not None and spec.origin == str(folder / "fabric.py")
    # not one of the compiled modules: never this finder's business
    assert compiled._CompiledFinder(pure=True).find_spec("bsim.engine.hooks",
                                                         [str(folder)]) is None


def test_without_an_extension_or_a_record_pythons_finder_decides(tmp_path):
    finder = compiled._CompiledFinder(pure=False)
    assert finder.find_spec("bsim.engine.fabric", [str(_package(tmp_path, None))]) is None
    other = tmp_path / "other"
    other.mkdir()
    assert finder.find_spec("bsim.engine.fabric",
                            [str(_package(other, "x", record=False))]) is None


def test_the_build_recorded_the_sources_it_compiled():
    """The install this suite runs on: each extension's digest is its source's, the .py's
    bytes then the .pxd's (computed here, not by the function the build used)."""
    if not compiled.compiled_modules():
        pytest.skip("the modules are not compiled here")
    for name in compiled.COMPILED:
        folder = ROOT.joinpath(*name.split(".")[:-1])
        recorded = json.loads((folder / compiled.SOURCES_FILE).read_text())
        source = folder / (name.rpartition(".")[2] + ".py")
        pxd = source.with_suffix(".pxd")
        text = source.read_bytes() + (b"\0" + pxd.read_bytes() if pxd.exists() else b"")
        assert recorded[name] == hashlib.sha256(text).hexdigest(), name


def test_frames_of_compiled_modules_are_bsims_own():
    """Cython names a compiled frame's file by its path relative to the build directory;
    an error raised there must still be reported at the user's line, not at bsim's."""
    from bsim.engine.failures import _is_internal
    assert _is_internal("bsim/engine/fabric.py")
    assert _is_internal(str(ROOT / "bsim" / "engine" / "fabric.py"))
    assert not _is_internal("/home/user/bsim_runs/program.py")
