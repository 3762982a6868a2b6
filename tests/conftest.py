"""Shared fixtures: hand-checkable network parameters."""

from __future__ import annotations

from typing import Any

import pytest

LATENCY = 2e-6        # l, seconds
BANDWIDTH = 1e9       # w, bytes/second


@pytest.fixture
def hockney_spec() -> str:
    """Hockney with l = 2 us, w = 1 GB/s: a 1000-byte message costs 3 us."""
    return f"hockney:latency={LATENCY},bandwidth={BANDWIDTH}"


# -- real MPI: skeletons must also run under mpiexec with mpi4py ------------------------
import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MPIEXEC = shutil.which("mpiexec", path=os.path.dirname(sys.executable)) or shutil.which("mpiexec")

needs_mpiexec = pytest.mark.skipif(
    MPIEXEC is None, reason="needs mpiexec and mpi4py (pip install 'bsim[mpi]')")


def run_mpiexec(nprocs: int, code: str, env: dict[str, str] | None = None,
                timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``python -c CODE`` under real ``mpiexec -n NPROCS`` from the repository root."""
    pytest.importorskip("mpi4py")
    assert MPIEXEC is not None
    full_env = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    return subprocess.run([MPIEXEC, "-n", str(nprocs), sys.executable, "-c", code],
                          env=full_env, capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT)


# the head of a program that reports MPI error classes by name: cls(fn, *args) -> "ERR_..."
# (or "no error"), the same under bsim and real mpiexec (tests of the error classes)
ERROR_CLASS_PRELUDE = '''
from mpi4py import MPI

NAMES = {getattr(MPI, n): n for n in dir(MPI) if n.startswith("ERR_")
         and isinstance(getattr(MPI, n), int) and n != "ERR_LASTCODE"}


def cls(fn, *args):
    try:
        fn(*args)
    except MPI.Exception as exc:
        return NAMES.get(exc.Get_error_class(), "?")
    return "no error"

'''


def require_smpi() -> None:
    """At a test module's top: skip the module unless SimGrid SMPI is installed; with
    ``BSIM_REQUIRE_SMPI=1`` (CI) its absence is an error instead."""
    from bsim.validation.smpi import available
    if not available():
        if os.environ.get("BSIM_REQUIRE_SMPI") == "1":
            raise RuntimeError("BSIM_REQUIRE_SMPI=1 but smpicc/smpirun are missing: "
                               "apt-get install libsimgrid-dev")
        pytest.skip("SimGrid SMPI not installed (apt-get install libsimgrid-dev); "
                    "set BSIM_REQUIRE_SMPI=1 to require it", allow_module_level=True)


def real_mpi_returns(nprocs: int, code: str) -> list[Any]:
    """Every rank's ``main()`` of the program *code* under real ``mpiexec -n NPROCS``
    (gathered to rank 0 and printed as JSON), to compare with ``simulate().returns``."""
    driver = ("\nimport json as _json\nfrom mpi4py import MPI as _MPI\n"
              "_out = _MPI.COMM_WORLD.gather(main(), root=0)\n"
              "if _MPI.COMM_WORLD.rank == 0:\n    print(_json.dumps(_out))\n")
    proc = run_mpiexec(nprocs, code + driver)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def simulated_returns(nprocs: int, code: str, as_json: bool = False) -> list[Any]:
    """Every rank's ``main()`` of the program *code* under bsim (``simulate().returns``);
    *as_json*: through JSON, as :func:`real_mpi_returns` gives them (tuples as lists)."""
    import bsim
    namespace: dict[str, Any] = {}
    exec(compile(code, "<program>", "exec"), namespace)
    # the papers' rules: a program that reads completion order (a message "has arrived")
    # sees it as MPICH's in-order eager delivery gives it
    returns = bsim.simulate(namespace["main"], nprocs, protocol="bsim").returns
    return json.loads(json.dumps(returns)) if as_json else returns


# -- recorded input files (tests/test_input_files.py, tests/test_inputs_recorded.py) ------
def file_sha(path: Path) -> str:
    """A file's digest as ``Result.inputs`` records it (``netmodels/input_files.py``),
    computed here independently from its bytes."""
    import hashlib
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def run_cli_json(cwd: Path, out: str, *args: str, timeout: float = 300) -> dict[str, Any]:
    """``bsim run ARGS --quiet --json CWD/OUT`` in a fresh process from *cwd*; its JSON."""
    done = subprocess.run([sys.executable, "-m", "bsim", "run", *args, "--quiet", "--json",
                           str(cwd / out)], capture_output=True, text=True, cwd=cwd,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
                          timeout=timeout)
    assert done.returncode == 0, done.stderr
    return json.loads((cwd / out).read_text())  # type: ignore[no-any-return]


# -- golden traces (tests/test_golden.py) ------------------------------------------------
def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/golden/*.json from the current code (say why in "
                          "the commit)")


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    """True when pytest runs with --update-golden."""
    return bool(request.config.getoption("--update-golden"))


# -- the default run and the slow rest ---------------------------------------------------
# `python -m pytest` (the README's test command) leaves out the tests matched here; they
# run with `python -m pytest -m slow`, and CI runs both. What stays in the default run:
# the core semantics, the golden traces, the papers' checks and the SMPI differential at
# 16 ranks on every platform. What moves: the long-running repeats of what the default run
# already covers (the SMPI differential at 64-1,024 ranks, every pairing of models, every
# collective algorithm against SMPI, the tutorial's whole walk-through, real-mpiexec and
# multi-host runs beyond one K = 2 identity, statistical coverage checks, and single cases
# that simulate for many seconds). Patterns are ``file::test`` with fnmatch wildcards;
# a test of several parametrizations matches by its full id.
SLOW_TESTS = (
    "test_tutorial.py::*",
    "test_combinations.py::*",
    "test_smpi_collectives.py::*",
    "test_smpi.py::test_bsim_agrees_with_smpi_at_256_and_1024_ranks*",
    "test_smpi.py::test_each_allreduce_algorithm_agrees_with_smpi*",
    "test_smpi.py::test_bsim_agrees_with_smpi[[]*64-*",
    "test_distributed.py::test_more_host_processes_than_cores_still_end_a_livelock",
    "test_distributed.py::test_livelocks_and_limits_end_every_host*",
    "test_distributed.py::test_a_host_that_only_waits_or_fails_on_insert_ends_with_the_others*",
    "test_distributed.py::test_k_host_processes_give_the_one_process_result[[]4]",
    "test_distributed.py::test_a_pipeline_skeleton_chooses_the_cyclic_partition",
    "test_distributed.py::test_a_host_that_stops_answering_ends_the_run_within_the_timeout",
    "test_distributed.py::test_the_earliest_failure_wins_though_the_hosts_windows_end_apart",
    "test_distributed.py::test_a_deadlock_across_hosts_says_when_each_rank_blocked",
    "test_smpi_dragonfly.py::*large_dragonflies*",
    "test_smpi_dragonfly.py::*[[]df64*",
    "test_golden.py::test_golden_distributed*",
    "test_wild_corpus.py::*",
    "test_vcollectives_vs_mpich.py::*",
    "test_faults_inputs.py::test_mpich_hangs_on_a_large_send_to_itself",
    "test_faults_memory.py::test_out_of_memory_while_creating_ranks_is_one_line",
    "test_invariants.py::test_contention_and_size_only_ever_add_time*",
    "test_trace.py::test_a_trace_window_after_the_run_is_warned_of",
    "test_input_files.py::test_a_machine_file_and_a_bundled_preset_are_recorded_by_content",
    "test_livelock.py::test_a_poller_waiting_for_a_slow_sender_is_not_a_livelock",
    "test_net_bluewaters.py::test_all_to_all_in_one_supernode_loads_each_li_and_lr_with_32_x_32",
    "test_cli_hosts_and_plots.py::test_a_sigint_to_one_host_process_says_so",
    "test_cli_hosts_and_plots.py::test_ctrl_c_under_mpiexec_gives_the_simulated_time",
    "test_cli_hosts_and_plots.py::test_a_refused_trace_is_one_line_under_mpiexec",
    "test_kernel_fit_statistics.py::test_linear_fit_is_unbiased_and_its_intervals_cover*",
    "test_noise_review.py::test_the_long_run_stolen_fraction_is_rate_times_mean*",
    "test_calibrate.py::test_calibrate_needs_two_processes",
    "test_mpi4py_suite.py::test_real_mpi_wall_limit",
    "test_mpi4py_suite.py::test_limit_is_on_silence_not_on_the_attempt",
    "test_inputs_recorded.py::*",
    "test_docs_examples.py::test_python_example_runs[[]distributed.md-*",
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: left out of the default run; "
                                       "`python -m pytest -m slow` runs them")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    import fnmatch
    for item in items:
        node = f"{item.path.name}::{item.name}"
        if any(fnmatch.fnmatchcase(node, pattern) for pattern in SLOW_TESTS):
            item.add_marker(pytest.mark.slow)
