"""mpi4py's own test suite, unmodified, under bsim and under real MPI.

The conformance bar for "unmodified mpi4py programs run" is material nobody
here wrote: the ``test/`` directory of mpi4py's source distribution on PyPI.
This module runs one of its test modules on every rank -- under
:func:`bsim.simulate` (``from mpi4py import MPI`` is bsim's there) or under a
real ``mpiexec`` -- and records each test's outcome per rank, one JSON line
per event, so that a run which stops half-way (a deadlock bsim reports, a
process killed on a wall-time limit) loses nothing: :func:`run_module`
marks the test in progress as hung and starts again after it.

A test *passes* when it succeeds (or fails as expected) on every rank, as
mpi4py's runner judges it.  ``benchmarks/mpi4py_conformance.py`` drives the
whole suite and prints the per-module table of ``docs/mpi_coverage.md``.

Rank program (both worlds)::

    python -m bsim.validation.mpi4py_suite --testdir D --module test_p2p_buf \\
        --log OUT.jsonl [--ranks N (bsim) | under mpiexec (real)] [--skip FILE]
"""

from __future__ import annotations

import argparse
import importlib
import json
import linecache
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import unittest
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Outcome", "ModuleRun", "run_module", "list_modules", "rank_main"]

PASSING = ("pass", "xfail")
_WORST = {"pass": 1, "xfail": 2, "skip": 3, "fail": 4, "error": 5}
_NONE = {"outcome": "pass", "where": "", "why": ""}


@dataclass
class Outcome:
    """One test's result over all ranks that reported it."""

    test: str
    outcome: str
    """``pass``, ``xfail``, ``skip``, ``fail``, ``error``, ``hang`` or ``missing``."""
    where: str = ""
    """First failing line of the test suite's own files: ``file:line: source``."""
    why: str = ""
    """Exception type and the first line of its message."""


@dataclass
class ModuleRun:
    """A test module's outcomes in one world (``bsim:N`` or ``real:N``)."""

    module: str
    world: str
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    restarts: int = 0
    aborts: list[str] = field(default_factory=list)

    def passing(self) -> set[str]:
        return {t for t, o in self.outcomes.items() if o.outcome in PASSING}


def _tests(suite: unittest.TestSuite) -> Iterator[unittest.TestCase]:
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from _tests(item)
        else:
            yield item


def _without(suite: unittest.TestSuite, skip: set[str]) -> unittest.TestSuite:
    kept = unittest.TestSuite()
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            kept.addTest(_without(item, skip))
        elif item.id() not in skip:
            kept.addTest(item)
    return kept


def _where(err: Any, testdir: str) -> tuple[str, str]:
    """(innermost line of the suite's files, ``Type: message``) of an exc_info."""
    etype, value, tb = err
    where = ""
    for frame in traceback.extract_tb(tb):
        if frame.filename.startswith(testdir):
            line = (frame.line or linecache.getline(frame.filename, frame.lineno or 0)).strip()
            where = f"{Path(frame.filename).name}:{frame.lineno}: {line}"
    first = str(value).strip().splitlines()[0] if str(value).strip() else ""
    return where, f"{etype.__name__}: {first}"[:200]


class _Recorder(unittest.TestResult):
    """Writes each test's start and outcome to a JSON-lines log, flushed at once."""

    def __init__(self, log: Any, testdir: str) -> None:
        super().__init__()
        self.log = log
        self.testdir = testdir
        self.bad: set[str] = set()
        self.killed: BaseException | None = None

    def _write(self, **event: Any) -> None:
        self.log.write(json.dumps(event) + "\n")
        self.log.flush()

    def _outcome(self, test: Any, outcome: str, err: Any = None) -> None:
        where, why = _where(err, self.testdir) if err is not None else ("", "")
        self._write(test=test.id(), outcome=outcome, where=where, why=why)

    def startTest(self, test: Any) -> None:
        super().startTest(test)
        self._write(start=test.id())

    def stopTest(self, test: Any) -> None:
        super().stopTest(test)
        if test.id() not in self.bad and self.killed is None:
            self._outcome(test, "pass")

    def addError(self, test: Any, err: Any) -> None:
        if err[0].__name__ == "GreenletExit":   # bsim ends the run (a deadlock): not the test's
            self.killed = err[1]
            self.stop()
            return
        self.bad.add(test.id())
        self._outcome(test, "error", err)

    def addFailure(self, test: Any, err: Any) -> None:
        self.bad.add(test.id())
        self._outcome(test, "fail", err)

    def addSubTest(self, test: Any, subtest: Any, err: Any) -> None:
        if err is not None:
            failed = issubclass(err[0], test.failureException)
            self.bad.add(test.id())
            self._outcome(test, "fail" if failed else "error", err)

    def addSkip(self, test: Any, reason: str) -> None:
        self.bad.add(test.id())
        self._write(test=test.id(), outcome="skip", where="", why=str(reason)[:200])

    def addExpectedFailure(self, test: Any, err: Any) -> None:
        self.bad.add(test.id())
        self._outcome(test, "xfail")

    def addUnexpectedSuccess(self, test: Any) -> None:
        self.bad.add(test.id())
        self._write(test=test.id(), outcome="fail", where="", why="unexpected success")


def rank_main(testdir: str, module: str, log: str, skip: tuple[str, ...] = ()) -> None:
    """Run *module*'s tests on this rank, appending events to ``log.<rank>``."""
    from mpi4py import MPI
    rank = MPI.COMM_WORLD.Get_rank()
    if testdir not in sys.path:
        sys.path.insert(0, testdir)
    with open(f"{log}.{rank}", "a", encoding="utf-8") as out:
        recorder = _Recorder(out, testdir)
        try:
            mod = importlib.import_module(module)
            suite = unittest.defaultTestLoader.loadTestsFromModule(mod)
        except Exception:
            where, why = _where(sys.exc_info(), testdir)
            recorder._write(test=f"{module}.<import>", outcome="error", where=where, why=why)
            return
        suite = _without(suite, set(skip))
        recorder._write(order=[t.id() for t in _tests(suite)])
        suite.run(recorder)
        if recorder.killed is not None:
            raise recorder.killed
        recorder._write(done=True)


def _read(log: Path) -> tuple[list[dict[str, Any]], bool]:
    """A rank's events, and whether it reached the end of the module."""
    events: list[dict[str, Any]] = []
    done = False
    if log.exists():
        for line in log.read_text(encoding="utf-8").splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:   # a line cut by a kill
                continue
            done = done or bool(event.get("done"))
            events.append(event)
    return events, done


def _merge(run: ModuleRun, logs: list[Path], abort: str, finished: bool = False) -> set[str]:
    """Fold one attempt's per-rank logs into *run*; return the test ids now final.

    A test's outcome is its worst over the ranks.  When the attempt ended
    early, the first test (in suite order) that some rank did not finish is
    ``hang``; the tests after it are not final (a rank blocked in the hung test
    kept the others from reaching them) and run again in the next attempt.  When
    every rank *finished*, a test no rank reported is its class set-up's outcome
    (a ``setUpClass`` that raised runs none of the class's tests).
    """
    order: list[str] = []
    results: list[dict[str, dict[str, Any]]] = []
    for log in logs:
        events, _ = _read(log)
        order = next((e["order"] for e in events if "order" in e), order)
        worst: dict[str, dict[str, Any]] = {}
        for e in (e for e in events if "test" in e):
            if _WORST[e["outcome"]] >= _WORST[worst.get(e["test"], _NONE)["outcome"]]:
                worst[e["test"]] = e
        results.append(worst)
    final: set[str] = set()
    for test in [t for r in results for t in r if t not in order]:   # <import>, class set-up
        e = max((r[test] for r in results if test in r), key=lambda e: _WORST[e["outcome"]])
        run.outcomes[test] = Outcome(test, e["outcome"], e["where"], e["why"])
        final.add(test)
    for test in order:
        per_rank = [r[test] for r in results if test in r]
        if not per_rank and finished:   # its class never set up (setUpClass raised)
            setup = _class_setup(test, results)
            run.outcomes[test] = Outcome(test, setup["outcome"] if setup else "missing",
                                         setup["where"] if setup else "",
                                         setup["why"] if setup else "no rank ran it")
            final.add(test)
            continue
        if len(per_rank) == len(results):
            e = max(per_rank, key=lambda e: _WORST[e["outcome"]])
            run.outcomes[test] = Outcome(test, e["outcome"], e["where"], e["why"])
            final.add(test)
        else:
            run.outcomes[test] = Outcome(test, "hang", "", abort[:200] or "did not finish")
            final.add(test)
            break
    return final


def _class_setup(test: str, results: list[dict[str, dict[str, Any]]]
                 ) -> dict[str, Any] | None:
    """The worst ``setUpClass (module.Class)`` record of *test*'s class, if any rank has one."""
    key = f"setUpClass ({test.rsplit('.', 1)[0]})"
    found = [r[key] for r in results if key in r]
    return max(found, key=lambda e: _WORST[e["outcome"]]) if found else None


def run_module(testdir: str | Path, module: str, world: str, workdir: str | Path,
               *, timeout: float = 300.0, max_restarts: int = 40,
               mpiexec: str | None = None) -> ModuleRun:
    """Run one test module in *world* (``bsim:N`` or ``real:N``), restarting after hangs.

    Each attempt is a fresh process (``python -m bsim.validation.mpi4py_suite``,
    under ``mpiexec -n N`` for ``real``).  When an attempt ends without every
    rank reaching the end -- a deadlock bsim reports, a crash, or *timeout*
    seconds of wall time in which no rank's log grew -- the test in progress is
    recorded as ``hang`` and the next attempt skips every test already final.

    The limit is on silence, not on the attempt's length: under bsim the ranks
    of a module whose tests never communicate run one after another (rank 0
    through the whole module before rank 1 starts), so a limit on the whole
    attempt would end it before the last rank began, and each restart would
    settle only one test.
    """
    kind, _, n = world.partition(":")
    ranks = int(n)
    testdir, workdir = str(Path(testdir).resolve()), Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    run = ModuleRun(module, world)
    skip: set[str] = set()
    for attempt in range(max_restarts + 1):
        base = workdir / f"{module}.{kind}{ranks}.{attempt}"
        skipfile = base.with_suffix(".skip")
        skipfile.write_text("\n".join(sorted(skip)), encoding="utf-8")
        cmd = [sys.executable, "-m", "bsim.validation.mpi4py_suite", "--testdir", testdir,
               "--module", module, "--log", str(base), "--skip", str(skipfile)]
        if kind == "real":
            cmd = [mpiexec or _mpiexec(), "-n", str(ranks), *cmd]
        else:
            cmd += ["--ranks", str(ranks)]
        for r in range(ranks):
            Path(f"{base}.{r}").unlink(missing_ok=True)
        logs = [Path(f"{base}.{r}") for r in range(ranks)]
        abort = _attempt(cmd, testdir, timeout, logs)
        done = all(_read(log)[1] for log in logs)
        final = _merge(run, logs, abort if not done else "", finished=done)
        if not done:
            run.aborts.append(abort)
        if done or not (final - skip):
            break
        skip |= final
        run.restarts += 1
    return run


def _mpiexec() -> str:
    """``mpiexec`` beside this Python (the ``mpich`` wheel puts it there), else on PATH."""
    here = Path(sys.executable).with_name("mpiexec")
    return str(here) if here.exists() else (shutil.which("mpiexec") or "mpiexec")


def _attempt(cmd: list[str], cwd: str, timeout: float, logs: list[Path]) -> str:
    """Run one attempt in its own process group; return why it ended early, or ''.

    The attempt is ended when *timeout* seconds of wall time pass in which none
    of *logs* grew (every test start and end is a log line).
    """
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    with tempfile.TemporaryFile() as output:
        proc = subprocess.Popen(cmd, stdout=output, stderr=subprocess.STDOUT, env=env,
                                cwd=cwd, start_new_session=True)
        sizes, quiet_since = _sizes(logs), time.monotonic()
        while proc.poll() is None:
            try:
                proc.wait(timeout=min(1.0, timeout))
            except subprocess.TimeoutExpired:
                pass
            now, grown = time.monotonic(), _sizes(logs)
            if grown != sizes:
                sizes, quiet_since = grown, now
            elif now - quiet_since >= timeout and proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)   # mpiexec's children too
                proc.wait()
                return f"no log line for {timeout:.0f} s of wall time"
        output.seek(0)
        out = output.read()
    tail = out.decode(errors="replace").strip().splitlines()
    for line in reversed(tail):
        if line.startswith("bsim-suite-abort:"):
            return line.removeprefix("bsim-suite-abort:").strip()
    return tail[-1] if tail and proc.returncode else ""


def _sizes(logs: list[Path]) -> tuple[int, ...]:
    """The byte sizes of *logs* (0 for one not yet written)."""
    return tuple(log.stat().st_size if log.exists() else 0 for log in logs)


def list_modules(testdir: str | Path) -> list[str]:
    """The suite's test modules, ``test_*.py`` in name order."""
    return sorted(p.stem for p in Path(testdir).glob("test_*.py"))


def _main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--testdir", required=True)
    ap.add_argument("--module", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--skip", default=None)
    ap.add_argument("--ranks", type=int, default=None,
                    help="simulate this many ranks under bsim; omit under mpiexec")
    a = ap.parse_args(argv)
    skip = tuple(Path(a.skip).read_text(encoding="utf-8").split()) if a.skip else ()
    if a.ranks is None:
        rank_main(a.testdir, a.module, a.log, skip)
        return 0
    import bsim
    try:
        bsim.simulate(rank_main, ranks=a.ranks, args=(a.testdir, a.module, a.log, skip))
    except Exception as exc:   # the rank's own exceptions are the tests'; this ends the run
        first = (str(exc).strip().splitlines() or [""])[0]
        print(f"bsim-suite-abort: {type(exc).__name__}: {first}", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(_main())
