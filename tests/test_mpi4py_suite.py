"""The conformance harness (bsim.validation.mpi4py_suite) on a hand-made test module.

Four tests with known fates: one passes, one fails on rank 1 only, one
deadlocks (both ranks receive first), one passes after it.  The harness must
report exactly that, restarting once after the deadlock without losing the
last test.
"""

from __future__ import annotations

import shutil
import textwrap

import pytest

from bsim.validation.mpi4py_suite import run_module

MODULE = textwrap.dedent("""
    import unittest
    from mpi4py import MPI

    class T(unittest.TestCase):
        def test_a_pass(self):
            self.assertEqual(MPI.COMM_WORLD.allreduce(1), MPI.COMM_WORLD.Get_size())

        def test_b_fail_on_one_rank(self):
            self.assertEqual(MPI.COMM_WORLD.Get_rank(), 0)

        def test_c_deadlock(self):
            comm = MPI.COMM_WORLD
            comm.recv(source=(comm.Get_rank() + 1) % comm.Get_size())

        def test_d_pass_after(self):
            MPI.COMM_WORLD.Barrier()
""")


@pytest.fixture
def suite(tmp_path):
    tdir = tmp_path / "test"
    tdir.mkdir()
    (tdir / "test_fake.py").write_text(MODULE)
    return tdir


def test_outcomes_and_restart_under_bsim(suite, tmp_path):
    run = run_module(suite, "test_fake", "bsim:2", tmp_path / "work", timeout=60)
    got = {t.rsplit(".", 1)[1]: o.outcome for t, o in run.outcomes.items()}
    assert got == {"test_a_pass": "pass", "test_b_fail_on_one_rank": "fail",
                   "test_c_deadlock": "hang", "test_d_pass_after": "pass"}
    assert run.restarts == 1
    assert "deadlock" in run.aborts[0].lower()
    fail = run.outcomes["test_fake.T.test_b_fail_on_one_rank"]
    assert fail.where.startswith("test_fake.py:") and "assertEqual" in fail.where
    assert run.passing() == {"test_fake.T.test_a_pass", "test_fake.T.test_d_pass_after"}


def test_one_rank_world(suite, tmp_path):
    """At n = 1 the 'deadlock' is a receive from oneself, which bsim reports in the call."""
    run = run_module(suite, "test_fake", "bsim:1", tmp_path / "work", timeout=60)
    got = {t.rsplit(".", 1)[1]: o.outcome for t, o in run.outcomes.items()}
    assert got["test_b_fail_on_one_rank"] == "pass" and got["test_d_pass_after"] == "pass"
    assert got["test_c_deadlock"] == "hang"


@pytest.mark.skipif(shutil.which("mpiexec") is None and not shutil.which(
    "mpiexec", path=__import__("sys").executable.rsplit("/", 1)[0]), reason="no mpiexec")
def test_real_mpi_wall_limit(suite, tmp_path):
    """Under real MPI the deadlock never ends: the wall-time limit ends it."""
    pytest.importorskip("mpi4py.MPI")
    run = run_module(suite, "test_fake", "real:2", tmp_path / "work", timeout=8)
    got = {t.rsplit(".", 1)[1]: o.outcome for t, o in run.outcomes.items()}
    assert got == {"test_a_pass": "pass", "test_b_fail_on_one_rank": "fail",
                   "test_c_deadlock": "hang", "test_d_pass_after": "pass"}
    assert "wall time" in run.aborts[0]


SETUP_FAILS = textwrap.dedent("""
    import unittest
    from mpi4py import MPI

    class A(unittest.TestCase):
        @classmethod
        def setUpClass(cls):
            raise AttributeError("no such call")

        def test_never_runs(self):
            pass

    class B(unittest.TestCase):
        def test_after_a_broken_class(self):
            MPI.COMM_WORLD.Barrier()
""")


def test_class_setup_failure_does_not_hide_later_tests(tmp_path):
    """A class whose ``setUpClass`` raises runs none of its tests: they take its error,
    and the tests of the other classes still count (they were lost as a 'hang')."""
    tdir = tmp_path / "test"
    tdir.mkdir()
    (tdir / "test_setup.py").write_text(SETUP_FAILS)
    run = run_module(tdir, "test_setup", "bsim:2", tmp_path / "work", timeout=60)
    never = run.outcomes["test_setup.A.test_never_runs"]
    assert never.outcome == "error" and "no such call" in never.why
    assert run.passing() == {"test_setup.B.test_after_a_broken_class"}
    assert run.restarts == 0


LOCAL_ONLY = textwrap.dedent("""
    import time
    import unittest

    def busy(seconds):
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass

    class L(unittest.TestCase):
        def test_1(self): busy(4.0)
        def test_2(self): busy(4.0)
        def test_3(self): busy(4.0)
""")


def test_limit_is_on_silence_not_on_the_attempt(tmp_path):
    """Tests that never communicate run rank after rank under bsim: rank 1 starts only
    after rank 0's 12 s.  With a 10 s limit on silence (start-up included: generous on a
    loaded machine) the attempt runs to its end (24 s of steady progress); a limit on
    the attempt's length ended it before rank 1 wrote a line and settled one test per
    restart."""
    tdir = tmp_path / "test"
    tdir.mkdir()
    (tdir / "test_local.py").write_text(LOCAL_ONLY)
    run = run_module(tdir, "test_local", "bsim:2", tmp_path / "work", timeout=10)
    assert run.restarts == 0 and run.aborts == []
    assert {o.outcome for o in run.outcomes.values()} == {"pass"} and len(run.outcomes) == 3
