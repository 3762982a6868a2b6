"""``bsim record`` of a Fortran program (benchmarks/apps/traces_app.f90, ``use mpi``),
built with the ``mpif90`` on the PATH and run with the ``mpiexec`` beside it (Debian:
Open MPI, packages gfortran, libopenmpi-dev, openmpi-bin).  An MPI's Fortran layer calls
``PMPI_`` itself, so only the recording library's Fortran bindings
(bsim/traces/c/bsim_record_f.c) see these calls: before them the trace held none.

Skips when there is no ``mpif90`` with an ``mpiexec`` beside it; with
``BSIM_REQUIRE_FORTRAN=1`` (CI) that is an error instead."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from conftest import ROOT

from bsim.traces import record, replay
from bsim.traces.skeleton import write_skeleton

MPIF90 = shutil.which("mpif90")
LAUNCHER = Path(MPIF90).with_name("mpiexec") if MPIF90 else None
if LAUNCHER is None or not LAUNCHER.exists():
    if os.environ.get("BSIM_REQUIRE_FORTRAN") == "1":
        raise RuntimeError("BSIM_REQUIRE_FORTRAN=1 but no mpif90 with an mpiexec beside it "
                           "(Debian: apt-get install gfortran libopenmpi-dev openmpi-bin)")
    pytest.skip("needs mpif90 and its mpiexec (Debian: gfortran libopenmpi-dev openmpi-bin)",
                allow_module_level=True)

ITERS, NBYTES = 6, 2048
# Open MPI refuses more ranks than cores without it (a 1-core CI machine)
_VERSION = subprocess.run([str(LAUNCHER), "--version"], capture_output=True, text=True)
OVERSUBSCRIBE = ["--oversubscribe"] if "Open MPI" in _VERSION.stdout else []
HOCKNEY = "hockney:latency=1e-06,bandwidth=1000000000.0"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """traces_app.f90 compiled with mpif90 and recorded at 2 ranks."""
    where = tmp_path_factory.mktemp("fortran")
    exe = where / "traces_app_f"
    subprocess.run([MPIF90, "-O1", str(ROOT / "benchmarks/apps/traces_app.f90"), "-o",
                    str(exe)], check=True, capture_output=True, text=True, cwd=where)
    saved = {k: os.environ.get(k) for k in ("BSIM_CACHE", "OMPI_ALLOW_RUN_AS_ROOT",
                                            "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM")}
    os.environ.update(BSIM_CACHE=str(where / "cache"), OMPI_ALLOW_RUN_AS_ROOT="1",
                      OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    try:
        trace = record([str(LAUNCHER), *OVERSUBSCRIBE, "-n", "2", str(exe), str(ITERS),
                        str(NBYTES)],
                       where / "t.json", timeout=300)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return trace, where


def test_fortran_calls_are_recorded(recorded):
    """Per iteration (from the source): one Sendrecv, two Irecv, two Isend, one Waitall of
    all four, two Allreduce of one double (the first in place, on the world; the second
    on the even/odd half), one Bcast from rank 0; one split; a Send 0 -> 1 of 100 bytes,
    tag 7, received with MPI_ANY_SOURCE/MPI_ANY_TAG (so the status gave 0 and 7); a Send
    and a Recv with MPI_PROC_NULL; one Barrier."""
    trace, _ = recorded
    assert trace.nranks == 2
    for r, acts in enumerate(trace.ranks):
        ops = Counter(a[0] for a in acts)
        assert ops["sendrecv"] == ops["wait"] == ops["bcast"] == ITERS
        assert ops["irecv"] == ops["isend"] == 2 * ITERS
        assert ops["allreduce"] == 2 * ITERS
        assert ops["split"] == ops["barrier"] == 1
        other = 1 - r
        for a in acts:
            if a[0] == "sendrecv":
                assert a[2] == other and a[5] == other and a[4] == a[7] == NBYTES
            if a[0] in ("isend", "irecv"):
                assert a[2] == other and a[3] in (2, 3) and a[4] == NBYTES
            if a[0] == "wait":
                assert len(a[1]) == 4
            if a[0] == "allreduce":
                assert a[1] in (0, 2) and a[2] == 8
            if a[0] == "bcast":
                assert a[2] == NBYTES and a[3] == 0
        split = next(a for a in acts if a[0] == "split")
        assert split[1:] == (0, 2, r, 0)    # colour rank % 2: alone in its half
    # MPI_PROC_NULL (Open MPI's is -2, its MPI_ANY_SOURCE -1) is recorded as -1, bsim's
    null = ("send", 0, -1, 9, 10)
    assert [a for a in trace.ranks[0] if a[0] == "send"] == [("send", 0, 1, 7, 100), null]
    assert [a for a in trace.ranks[1] if a[0] == "send"] == [null]
    assert [a[:3] for a in trace.ranks[0] if a[0] == "recv"] == [("recv", 0, -1)]
    assert [a[:3] for a in trace.ranks[1] if a[0] == "recv"] == [("recv", 0, 0),
                                                                  ("recv", 0, -1)]
    assert next(a for a in trace.ranks[1] if a[0] == "recv") == ("recv", 0, 0, 7, 100)


def test_fortran_trace_replays_and_skeletonizes(recorded):
    """The trace replays (its MPI_PROC_NULL calls as bsim's, no-ops), and its skeleton
    reproduces the replay at 2 ranks and runs at 8 (tiles: rank 0 sends to rank 1)."""
    import importlib.util

    import bsim
    trace, where = recorded
    want = replay(trace, network=HOCKNEY, protocol="bsim", contention="none")
    out = where / "f_skel.py"
    write_skeleton(trace, out)
    spec = importlib.util.spec_from_file_location("f_skel", out)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    got = bsim.simulate(mod.main, 2, network=HOCKNEY, protocol="bsim", contention="none")
    assert got.elapsed == pytest.approx(want.elapsed, rel=1e-9)
    assert bsim.simulate(mod.main, 8, network=HOCKNEY, protocol="bsim",
                         contention="none").ranks == 8
