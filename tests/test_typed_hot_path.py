"""The typed hot path (``bsim.engine.compiled.TYPED``) compiled against its source.

The engine's state and loop, ranks, requests, messages, matching, the protocols' steps and
the flattened calls are compiled with C types (``.pxd`` beside each ``.py``).  Here runs
that go through every branch of them (the three point-to-point protocols, blocking and
nonblocking calls, wildcards, probes, ``Waitany``/``Testall``/``Waitsome``, synchronous
sends, real numpy data, pickled objects, collectives, a split communicator, a traced run,
the SMPI setting) run in two processes, one with the extensions and one with
``BSIM_PURE_PYTHON=1``, and must give the same per-rank times, data and trace bit for bit.
Then the group rule: the modules read each other's C fields, so one stale or missing
extension sends all of them to Python.
"""

from __future__ import annotations

import importlib.machinery
import json
import os
import warnings
from pathlib import Path

import pytest
from test_compiled_modules import run_cases

from bsim.engine import compiled

ROOT = Path(__file__).resolve().parents[1]

CASES = r"""
import json, sys
import numpy as np
import bsim
from bsim.engine.compiled import compiled_modules
from bsim.validation.programs import PROGRAMS
from bsim.validation.smpi import Platform, SMPI_PROTOCOL, SMPI_CONTENTION

def mixed(iters=3):
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    r, n = comm.Get_rank(), comm.Get_size()
    right, left = (r + 1) % n, (r - 1) % n
    sub = comm.Split(r % 2, r)
    out = []
    a, b = np.arange(16, dtype=float) * (r + 1), np.zeros(16)
    for it in range(iters):
        bsim.add_time(1e-6 * (r + 1))
        reqs = [comm.Irecv(b, source=MPI.ANY_SOURCE, tag=it),
                comm.Isend(a, dest=right, tag=it)]
        st = MPI.Status()
        k = MPI.Request.Waitany(reqs, st)
        MPI.Request.Waitall(reqs)
        out.append(float(b.sum()) + st.Get_source() + k)
        sreq = comm.Issend(bsim.Buffer(64 * (it + 1)), dest=right, tag=7)
        comm.Probe(source=left, tag=7)
        comm.Recv(bsim.Buffer(64 * (it + 1)), source=left, tag=7)
        sreq.Wait()
        out.append(comm.sendrecv({"it": it, "r": r}, dest=right, source=left)["r"])
        req = comm.isend([r] * (it + 1), dest=left, tag=3)
        while not comm.Iprobe(source=right, tag=3):
            bsim.add_time(1e-7)
        out.append(sum(comm.recv(source=right, tag=3)))
        req.wait()
        rs = [sub.Irecv(bsim.Buffer(1000), source=(sub.rank - 1) % sub.size, tag=1),
              sub.Isend(bsim.Buffer(1000), dest=(sub.rank + 1) % sub.size, tag=1)]
        while not MPI.Request.Testall(rs):
            bsim.add_time(2e-7)
        rs = [comm.Irecv(bsim.Buffer(10), source=left), comm.Isend(bsim.Buffer(10), dest=right)]
        done = []
        while len(done) < 2:
            done += MPI.Request.Waitsome(rs) or []
        out.append(comm.allreduce(r * it))
        comm.Sendrecv(bsim.Buffer(4096), dest=right, recvbuf=bsim.Buffer(4096), source=left)
        comm.Barrier()
    return out

def run(prog, network, protocol, args=(), ranks=16, contention=None, tracer=None, **kw):
    res = bsim.simulate(prog, ranks=ranks, network=network, protocol=protocol,
                        contention=contention, args=args, tracer=tracer, **kw)
    return [repr(float(x)) for x in (*res.finish, *res.comm, *res.wait)] + [repr(res.returns)]

out = {}
torus = Platform("torus", 16, dims=(4, 4)).bsim_network()
for proto in ("bsim", "loggp", "loggp:eager_limit=512", "loggops"):
    out[f"mixed/{proto}"] = run(mixed, torus, proto)
    for prog, args in (("ring", (4096, 3, 1e-6)), ("pingpong", (100000, 3, 1e-6)),
                       ("halo2d", (8192, 3, 1e-6)), ("sweep", (2048, 1, 1e-6)),
                       ("allreduce", (8192, 2, 1e-6)), ("collective", (8192, 2, 1e-6, "bcast"))):
        out[f"{prog}/{proto}"] = run(PROGRAMS[prog], torus, proto, args)
out["mixed/smpi"] = run(mixed, torus, SMPI_PROTOCOL, contention=SMPI_CONTENTION)
out["halo2d/smpi"] = run(PROGRAMS["halo2d"], torus, SMPI_PROTOCOL, (200000, 2, 1e-5),
                         contention=SMPI_CONTENTION)
out["mixed/bsim+fluid"] = run(mixed, torus, "bsim", contention="fluid")
import tempfile
from bsim.outputs.trace import ChromeTracer
tracer = ChromeTracer()
out["mixed/traced"] = run(mixed, torus, "loggp", tracer=tracer)
with tempfile.TemporaryDirectory() as tmp:
    out["trace"] = [tracer.write(tmp + "/t.json").read_text()]
json.dump({"compiled": compiled_modules(), "runs": out}, sys.stdout)
"""


def test_the_typed_hot_path_gives_the_pythons_results_bit_for_bit():
    fast, pure = run_cases(CASES, pure=False), run_cases(CASES, pure=True)
    assert pure["compiled"] == []
    if os.environ.get("BSIM_REQUIRE_COMPILED") == "1":
        assert set(compiled.TYPED) <= set(fast["compiled"]), "the hot path is not compiled"
    elif not set(compiled.TYPED) <= set(fast["compiled"]):
        pytest.skip("the hot path is not compiled here (no C compiler at install?)")
    assert fast["runs"].keys() == pure["runs"].keys()
    for case, values in pure["runs"].items():
        assert fast["runs"][case] == values, case
    # the runs differ from each other: not a comparison of zeros or of one repeated case
    # (some coincide: collectives priced by formula, small messages below every eager limit)
    assert len({tuple(v) for v in pure["runs"].values()}) > 25
    assert len(pure["runs"]["trace"][0]) > 10_000


def _fake_bsim(tmp_path: Path, built: dict[str, str | None]) -> Path:
    """A bsim folder holding the TYPED modules' sources (each ``X = 1``) and, for each name
    in *built*, a stand-in extension recorded as built from the given source (None: no
    record)."""
    root = tmp_path / "bsim"
    for name in compiled.TYPED:
        folder = root.joinpath(*name.split(".")[1:-1])
        folder.mkdir(parents=True, exist_ok=True)
        leaf = name.rpartition(".")[2]
        (folder / f"{leaf}.py").write_text("X = 1\n")
        if name in built:
            (folder / (leaf + importlib.machinery.EXTENSION_SUFFIXES[0])).write_bytes(b"so")
            source = built[name]
            if source is not None:
                record = folder / compiled.SOURCES_FILE
                table = json.loads(record.read_text()) if record.exists() else {}
                (folder / "x.py").write_text(source)
                table[name] = compiled.source_digest(folder / "x.py")
                record.write_text(json.dumps(table))
    return root


def _found(root: Path, name: str, pure: bool = False) -> str | None:
    finder = compiled._CompiledFinder(pure=pure, root=root)
    folder = root.joinpath(*name.split(".")[1:-1])
    spec = finder.find_spec(name, [str(folder)])
    return None if spec is None else spec.origin


def test_the_typed_modules_built_from_their_sources_run_compiled(tmp_path):
    root = _fake_bsim(tmp_path, {name: "X = 1\n" for name in compiled.TYPED})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _found(root, "bsim.engine.rank") is None          # Python's finder: the .so
        assert _found(root, "bsim.mpi.p2p.calls") is None
    assert _found(root, "bsim.engine.rank", pure=True).endswith("rank.py")


def test_one_stale_typed_module_sends_the_group_to_python(tmp_path):
    built = {name: "X = 1\n" for name in compiled.TYPED}
    built["bsim.mpi.p2p.calls"] = "X = 0\n"   # edited after the build
    root = _fake_bsim(tmp_path, built)
    with pytest.warns(RuntimeWarning, match=r"bsim\.mpi\.p2p\.calls \(changed since built\)"):
        origin = _found(root, "bsim.engine.rank")   # another module of the group
    assert origin is not None and origin.endswith("rank.py")


def test_a_typed_module_that_did_not_compile_sends_the_group_to_python(tmp_path):
    built = {name: "X = 1\n" for name in compiled.TYPED if name != "bsim.engine.core"}
    root = _fake_bsim(tmp_path, built)
    with pytest.warns(RuntimeWarning, match=r"bsim\.engine\.core \(not built\)"):
        origin = _found(root, "bsim.engine.matching")
    assert origin is not None and origin.endswith("matching.py")


def test_no_typed_module_built_runs_python_silently(tmp_path):
    root = _fake_bsim(tmp_path, {})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        origin = _found(root, "bsim.engine.core")
    assert origin is not None and origin.endswith("core.py")


def test_an_edited_pxd_makes_its_module_stale(tmp_path):
    """The .pxd's C types decide what the compiled code does: they are in the digest."""
    source = tmp_path / "m.py"
    source.write_text("X = 1\n")
    before = compiled.source_digest(source)
    (tmp_path / "m.pxd").write_text("cdef class A:\n    cdef public double x\n")
    assert compiled.source_digest(source) != before
