"""``bsim run TARGET``: simulate a registered skeleton or an mpi4py program file.

    bsim run TARGET [-n N] [--machine NAME|FILE.toml] [--network SPEC] [--protocol P]
                    [--contention none|fluid[:OPTS]] [--collectives SPEC]
                    [--collective OP=SPEC]... [--filesystem SPEC]
                    [--compute {ignore,measure}] [--compute-scale X] [--param k=v]...
                    [--json FILE] [--csv FILE] [--trace FILE] [--noise SPEC] [--quiet]
                    [-- PROGRAM ARGS...]

TARGET is a registered skeleton (``bsim list skeletons``) or a Python file
whose top-level code runs once per virtual rank; a file's ``--param k=v`` become
``--k=v`` on its command line, before the PROGRAM ARGS.  Under ``mpiexec -n K`` the
virtual ranks are spread over the K host processes (``docs/distributed.md``);
host process 0 prints and writes the outputs.  While ``--json -`` or ``--csv -``
sends a result to standard output, what the program prints goes to standard error.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
import warnings
from collections.abc import Iterator
from typing import Any, cast

from netmodels.input_files import recording_inputs

from . import options

__all__ = ["add_parser", "command", "HOST", "SIGNAL_TRACE_SECONDS"]

# after Ctrl-C, SIGTERM or SIGHUP the partial trace is written only if that takes no
# longer than this (the teardown before it takes the rest of the second)
SIGNAL_TRACE_SECONDS = 0.5

# this process's rank among mpiexec's host processes, their number, their communicator
HOST: dict[str, Any] = {"rank": 0, "size": 1, "comm": None}


def add_parser(subparsers: Any) -> None:
    """Register ``run`` on the ``bsim`` subparsers."""
    run = subparsers.add_parser("run", help="simulate a skeleton or an mpi4py program")
    run.add_argument("target", nargs="?", default=None,
                     help="skeleton name or path to a Python file (with -m: the module's "
                          "first argument, e.g. the script of -m mpi4py.futures)")
    run.add_argument("-m", dest="module", metavar="MODULE", default=None,
                     help="run a Python module on every rank, as python -m MODULE: "
                          "bsim run -m mpi4py.futures prog.py -n 4")
    run.add_argument("-n", "--ranks", type=int, default=None,
                     help="virtual ranks (default: the skeleton's own count)")
    options.add_model_options(run)
    run.add_argument("--compute", choices=["ignore", "measure"], default="ignore",
                     help="measure: charge host time between MPI calls as calc (unmodified "
                          "programs)")
    run.add_argument("--compute-scale", type=float, default=None, metavar="X",
                     help="with --compute measure: multiply measured host compute by X > 0 "
                          "(target/host speed ratio; default 1)")
    run.add_argument("--param", action="append", type=options.param_pair, default=[],
                     metavar="K=V",
                     help="skeleton parameter; a file program gets --K=V (repeatable)")
    run.add_argument("--partition", type=options.partition_spec, default=None,
                     metavar="{block,cyclic[:block=B],node}",
                     help="under mpiexec -n K: how virtual ranks are spread over the K "
                          "host processes (contiguous blocks; blocks of B ranks dealt in "
                          "turn, for pipelines; or whole simulated nodes); default: the "
                          "skeleton's choice (cyclic for sweep3d), else block")
    run.add_argument("--max-sim-time", type=float, default=None, metavar="SECONDS",
                     help="stop with an error when simulated time passes SECONDS")
    run.add_argument("--max-events", type=int, default=None, metavar="N",
                     help="stop with an error after N events")
    run.add_argument("--shared-modules", action="store_true",
                     help="let every rank share the modules the program imports from its "
                          "own files (default: each rank its own copy, as separate "
                          "processes; sharing saves memory on very large runs)")
    run.add_argument("--no-memory-check", action="store_true",
                     help="run even when the rank count's estimated memory exceeds what is "
                          "available")
    run.add_argument("--json", metavar="FILE", help="write the result as JSON ('-': stdout)")
    run.add_argument("--csv", metavar="FILE", help="write per-rank rows as CSV ('-': stdout)")
    run.add_argument("--quiet", action="store_true", help="do not print the summary")
    options.add_timeline_options(run)
    run.set_defaults(handler=command)


def _rank_params(name: str) -> str:
    """The parameters that decide a registered skeleton's rank count, for messages."""
    from skeletons import registry
    keys = [k for k in registry.get(name).params
            if k in ("px", "py", "pz", "pt", "p", "q", "pb", "pf", "nprocs")]
    return " --param ".join(f"{k}=..." for k in keys) or "..."


def _check_outputs(ns: argparse.Namespace) -> bool:
    """Check the output options before the run; True when one writes to standard output.

    Refuses two results on standard output, an empty path, two options naming
    the same file and a path that cannot be written, in one line each.
    """
    from ..outputs.files import check_distinct
    from .failures import check_outputs
    named = (("--json", ns.json), ("--csv", ns.csv), ("--trace", ns.trace))
    to_stdout = [opt for opt, path in named[:2] if path == "-"]
    if len(to_stdout) > 1:
        raise ValueError("only one of --json and --csv can be '-' (standard output)")
    check_distinct(named)
    check_outputs(*((opt, None if path == "-" else path) for opt, path in named))
    return bool(to_stdout)


def _compute_scale(ns: argparse.Namespace) -> float:
    """``--compute-scale`` (default 1): a finite number > 0, with ``--compute measure``."""
    if ns.compute_scale is None:
        return 1.0
    if not 0 < ns.compute_scale < float("inf"):
        raise ValueError(f"--compute-scale must be a number > 0 (the target/host speed "
                         f"ratio), got {ns.compute_scale!r}")
    if ns.compute != "measure":
        raise ValueError(f"--compute-scale {ns.compute_scale:g} needs --compute measure "
                         f"(it scales host-measured compute; add_time is not scaled)")
    return float(ns.compute_scale)


@contextlib.contextmanager
def _stdout_to_stderr(active: bool) -> Iterator[None]:
    """While *active*, send what the program prints to standard error.

    Used while a result file goes to standard output, so that it carries only
    that file: ``sys.stdout`` becomes ``sys.stderr``, and when standard output is
    this process's descriptor 1, descriptor 1 is pointed at descriptor 2 too
    (what C code, subprocesses and saved references to ``sys.stdout`` write).
    """
    if not active:
        yield
        return
    original = sys.stdout
    original.flush()
    saved = None
    try:
        if original.fileno() == 1 and sys.stderr.fileno() == 2:
            saved = os.dup(1)
            os.dup2(2, 1)
    except (AttributeError, ValueError, OSError):   # no descriptor (captured, replaced)
        saved = None
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        for stream in (original, sys.stderr):
            with contextlib.suppress(ValueError, OSError):
                stream.flush()
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)


def command(ns: argparse.Namespace) -> int:
    """Run the simulation *ns* describes; print the summary and write the outputs."""
    from ..outputs.result import compute_spec
    to_stdout = _check_outputs(ns)    # before the run, so that its result is not lost
    scale = _compute_scale(ns)
    try:
        with _stdout_to_stderr(to_stdout):
            result = _simulate(ns, scale)
    except BaseException as exc:      # a failed or interrupted run keeps its trace
        _keep_partial_trace(ns, exc)
        raise
    from ..outputs.output_set import OutputSet
    outputs = OutputSet()
    options.finish_run_options(ns, result, outputs)   # the trace: after stdout is back
    result.compute = compute_spec(ns.compute, scale)
    if HOST["rank"]:
        return 0
    # the result is shown before any file is written: a file that cannot be written
    # (a full disk, a file-size limit) loses nothing that was printed
    if not ns.quiet:   # on stderr when a result file goes to standard output
        (sys.stderr if to_stdout else sys.stdout).write(result.summary(warnings=False))
    for line in result.warning_lines():   # what the program left undone: even --quiet
        print(f"bsim: warning: {line}", file=sys.stderr)
    if ns.json == "-":
        sys.stdout.write(result.json_text())
    elif ns.json:
        outputs.add("--json", ns.json, result.json_text())
    if ns.csv == "-":
        sys.stdout.write(result.csv_text())
    elif ns.csv:
        outputs.add("--csv", ns.csv, result.csv_text())
    sys.stdout.flush()
    _commit(ns, outputs, result, to_stdout)
    options.trace_written(ns)
    return 0


def _commit(ns: argparse.Namespace, outputs: Any, result: Any, to_stdout: bool) -> None:
    """Write the run's output files together (:mod:`bsim.outputs.output_set`).

    When one cannot be written, none is changed; the JSON result then goes to standard
    output (unless standard output already carries a result) so that it is not lost,
    and the error names the option and the path.  An interrupt after the files are in
    place says they were written."""
    from ..outputs.output_set import OutputWriteError
    try:
        outputs.commit()
    except OutputWriteError as exc:
        if ns.json and ns.json != "-" and not to_stdout:
            sys.stdout.write(result.json_text())
            sys.stdout.flush()
            exc.args = (f"{exc.args[0]}; the JSON result is on standard output above",)
        raise
    except KeyboardInterrupt as exc:
        if outputs.written:
            cast(Any, exc).written = f"the outputs were written ({', '.join(outputs.paths())})"
        raise


def _keep_partial_trace(ns: argparse.Namespace, exc: BaseException) -> None:
    """After a run that failed with *exc* (or was interrupted): erase the progress line and
    write what ``--trace`` recorded up to then, atomically, marked incomplete in the file
    (``otherData.incomplete``), with one line on stderr saying where it is.  For Ctrl-C
    that line is the interrupt's own (``bsim: interrupted at simulated t=... s, the
    partial trace ... is in FILE``); for an error it comes before the error's line, which
    the caller prints unchanged, as its exit status."""
    from ..engine.failures import program_interrupt
    from ..errors import SimulationError
    from ..outputs.trace import TraceDeadline
    from .failures import user_message
    from .signals import what_happened
    state = getattr(ns, "run_state", None) or {}
    if state.get("progress") is not None:
        state["progress"].close()
    tracer = state.get("tracer")
    if tracer is None or not state.get("started") or HOST["size"] > 1:
        return   # (a distributed run refuses --trace: its own error says so)
    ctrl_c = isinstance(exc, KeyboardInterrupt) and program_interrupt(exc) is None
    what = "interrupted" if ctrl_c else "failed"
    if not tracer.recorded:   # said when the engine ran (not for a check before it)
        if not (isinstance(exc, SimulationError) or hasattr(exc, "sim_time")):
            return
        print(f"bsim: the run {what} before anything was traced: no trace written to "
              f"{ns.trace}", file=sys.stderr)
        return
    said = "interrupted (Ctrl-C)" if not hasattr(exc, "signum") else what_happened(exc)
    error = said if ctrl_c else \
        (user_message(exc) or f"{type(exc).__name__}: {exc}").splitlines()[0]
    tracer.mark_incomplete(error, getattr(exc, "sim_time", None))
    if ctrl_c:   # a signal: the command ends within a second
        tracer.deadline = time.monotonic() + SIGNAL_TRACE_SECONDS
    try:
        path = tracer.write(ns.trace)
    except TraceDeadline:
        line = (f"the partial trace ({len(tracer.spans):,} spans, {len(tracer.messages):,} "
                f"messages) was not written: more than can be written within a second of "
                f"the signal (record less: --trace-ranks, --trace-window, "
                f"--trace-max-events); {ns.trace} is unchanged")
        if ctrl_c:
            cast(Any, exc).written = line
        else:
            print(f"bsim: {line}", file=sys.stderr)
        return
    except OSError as err:
        print(f"bsim: --trace {ns.trace}: the partial trace could not be written: "
              f"{err.strerror or err}", file=sys.stderr)
        return
    line = (f"the partial trace up to t={tracer.last_time():g} s is in {path} "
            f"({len(tracer.spans):,} spans, {len(tracer.messages):,} messages)")
    if ctrl_c:
        cast(Any, exc).written = line   # failures.report says it, not "nothing written"
    else:
        print(f"bsim: the run failed; {line}", file=sys.stderr)


def _simulate(ns: argparse.Namespace, scale: float) -> Any:
    """Load the target and simulate it as *ns* says; return the Result."""
    from ..engine.distributed import host_processes
    hosts = host_processes()   # under mpiexec -n K > 1: a distributed run
    if hosts is not None:
        HOST.update(rank=hosts.Get_rank(), size=hosts.Get_size(), comm=hosts)
        if HOST["rank"]:
            ns.quiet = True    # host process 0 prints and writes the outputs
            # and warns of what every host finds alike in the machine file: flagged fits,
            # a variant fitted at another rank count (main() restores the filters after)
            from ..machines.flags import CalibrationFlagWarning
            from ..machines.layout import FittedAtOtherCountWarning
            warnings.filterwarnings("ignore", category=CalibrationFlagWarning)
            warnings.filterwarnings("ignore", category=FittedAtOtherCountWarning)
    with recording_inputs():   # the program and machine files, then simulate()'s
        if hosts is None:
            return _load_and_simulate(ns, hosts, scale)
        from ..engine.host_checks import fail_together, start_of_run
        start_of_run(hosts)
        try:   # a target one host process cannot load: the others hear of it at once
            return _load_and_simulate(ns, hosts, scale)
        except BaseException as exc:
            fail_together(hosts, exc)
            raise


def _load_and_simulate(ns: argparse.Namespace, hosts: Any, scale: float) -> Any:
    from ..simulate import simulate
    from .targets import load_target
    target = load_target(ns.target, options.param_dict(ns.param), ns.program_args, ns.machine,
                         ns.ranks, quiet=bool(ns.quiet), module=ns.module)
    ranks = ns.ranks if ns.ranks is not None else target.ranks
    if ranks is None:
        raise ValueError(f"bsim run: {ns.target} needs -n RANKS")
    if target.ranks is not None and ns.ranks is not None and ns.ranks != target.ranks:
        raise ValueError(f"bsim run: {target.name} with these parameters runs on "
                         f"{target.ranks} ranks, not -n {ns.ranks}: set the parameters that "
                         f"decide its rank count (bsim list skeletons), e.g. --param "
                         f"{_rank_params(target.name)}")
    extra = options.apply_run_options(ns)                       # trace, noise, progress bar
    network = target.network_for(options.network_spec(ns))     # a skeleton's layout: mapping
    if ns.network is None and ns.machine is not None:
        from ..machines import load_machine
        from ..machines.flags import note_network_flags
        # the machine's network is used: its calibration flags are warned of and recorded
        note_network_flags(load_machine(ns.machine))
    ns.run_state["started"] = True                              # a failure keeps the trace
    result = simulate(target.main, ranks, network=network, protocol=ns.protocol,
                      kwargs=target.kwargs, name=target.name, params=target.recorded,
                      machine=ns.machine, kernel_model=target.kernel_model,
                      flops=target.flops,
                      contention=ns.contention, level=ns.level,
                      collectives=options.collectives(ns),
                      filesystem=ns.filesystem,
                      compute=ns.compute, compute_scale=scale,
                      hosts=hosts, partition=ns.partition or target.partition or "block",
                      max_sim_time=ns.max_sim_time,
                      max_events=ns.max_events, check_memory=not ns.no_memory_check,
                      private_modules=not ns.shared_modules, **extra)
    return result
