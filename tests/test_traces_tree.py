"""A recorded program whose ranks run different code (benchmarks/apps/traces_tree.c:
HPL's binomial-tree reduce and broadcast of point-to-point messages, as in hpcc, then row
and column communicators of a 2 x 2 grid): its skeleton reproduces the replay at the
recorded 4 ranks and runs at 16 (copies of the recorded run), and refuses 6.

Before the skeletons of such programs ran their recorded ranks as tiles, the 16-rank run
deadlocked: ranks 4-15 took rank 1's branch and waited on rank 0, which only knew the
partners of the recorded tree (1 and 2).  Skips when no ``mpicc`` is beside ``mpiexec``;
with ``BSIM_REQUIRE_MPI=1`` (CI) that is an error instead."""

from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path

import pytest
from conftest import MPIEXEC, ROOT

import bsim
from bsim.traces import record, replay
from bsim.traces.skeleton import write_skeleton

MPICC = Path(MPIEXEC).with_name("mpicc") if MPIEXEC else None
if MPICC is None or not MPICC.exists():
    if os.environ.get("BSIM_REQUIRE_MPI") == "1":
        raise RuntimeError("BSIM_REQUIRE_MPI=1 but no mpicc beside mpiexec (the mpich wheel "
                           "has one: pip install -e '.[test]')")
    pytest.skip("needs mpicc beside mpiexec (pip install 'bsim[mpi]')", allow_module_level=True)

HOCKNEY = "hockney:latency=1e-06,bandwidth=1000000000.0"
ITERS = 4


@pytest.fixture(scope="module")
def skeleton(tmp_path_factory):
    """traces_tree.c built with the MPI's own mpicc, recorded at 4 ranks, skeletonized."""
    where = tmp_path_factory.mktemp("tree")
    exe = where / "traces_tree"
    subprocess.run([str(MPICC), "-O1", str(ROOT / "benchmarks/apps/traces_tree.c"), "-o",
                    str(exe)], check=True, capture_output=True, text=True)
    before = os.environ.get("BSIM_CACHE")
    os.environ["BSIM_CACHE"] = str(where / "cache")
    try:
        trace = record([MPIEXEC, "-n", "4", str(exe), str(ITERS), "1024", "100"],
                       where / "t.json", timeout=300)
    finally:   # the other tests keep their cache
        if before is None:
            del os.environ["BSIM_CACHE"]
        else:
            os.environ["BSIM_CACHE"] = before
    out = where / "tree_skel.py"
    info = write_skeleton(trace, out)
    spec = importlib.util.spec_from_file_location("tree_skel", out)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return trace, info, mod


def _run(mod, n: int) -> bsim.Result:
    return bsim.simulate(mod.main, n, network=HOCKNEY, protocol="bsim", contention="none")


def test_trace_has_the_tree(skeleton):
    """From the source: per tree_sum, rank 0 receives from 1 and 2 and sends to 2 and 1,
    rank 2 receives from 3, sends to 0, receives from 0, sends to 3, ranks 1 and 3 send
    to and receive from their parent; so three groups of ranks."""
    trace, info, _ = skeleton
    p2p = [[(a[0], a[2]) for a in acts if a[0] in ("send", "recv") and a[1] == 0]
           for acts in trace.ranks]
    assert p2p[0] == [("recv", 1), ("recv", 2), ("send", 2), ("send", 1)] * 2
    assert p2p[1] == [("send", 0), ("recv", 0)] * 2
    assert p2p[2] == [("recv", 3), ("send", 0), ("recv", 0), ("send", 3)] * 2
    assert p2p[3] == [("send", 2), ("recv", 2)] * 2
    assert info["groups"] == 3 and info["tiled"]


def test_skeleton_reproduces_replay_at_the_recorded_count(skeleton):
    """At 4 ranks the skeleton charges the recorded compute series: every rank finishes
    when the replay's does (well within 1%)."""
    trace, _, mod = skeleton
    want = replay(trace, network=HOCKNEY, protocol="bsim", contention="none")
    got = _run(mod, 4)
    assert got.elapsed == pytest.approx(want.elapsed, rel=0.01)
    assert list(got.finish) == pytest.approx(list(want.finish), rel=1e-9)


def test_skeleton_runs_at_four_times_the_ranks(skeleton, monkeypatch, tmp_path):
    """At 16 ranks: four tiles of the recorded run.  Each rank makes its recorded rank's
    point-to-point messages inside its tile, and
    the world allreduces span all 16 ranks, so they cost more than at 4."""
    _, _, mod = skeleton
    monkeypatch.setattr(mod, "SERIES", tmp_path / "absent.json")   # the means at 4 too
    small = _run(mod, 4)
    big = _run(mod, 16)
    assert big.ranks == 16 and all(big.finish > 0)
    assert big.elapsed > small.elapsed


def test_other_counts_are_refused(skeleton):
    """6 is not a multiple of the 4 recorded ranks: one clear error."""
    _, _, mod = skeleton
    with pytest.raises(Exception, match="multiple of 4 ranks"):
        _run(mod, 6)
