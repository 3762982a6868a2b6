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
host process 0 prints and writes the outputs.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from . import options

__all__ = ["add_parser", "command", "HOST"]

HOST = {"rank": 0}   # this process's rank among mpiexec's host processes


def add_parser(subparsers: Any) -> None:
    """Register ``run`` on the ``bsim`` subparsers."""
    run = subparsers.add_parser("run", help="simulate a skeleton or an mpi4py program")
    run.add_argument("target", help="skeleton name or path to a Python file")
    run.add_argument("-n", "--ranks", type=int, default=None,
                     help="virtual ranks (default: the skeleton's own count)")
    options.add_model_options(run)
    run.add_argument("--compute", choices=["ignore", "measure"], default="ignore",
                     help="measure: charge host time between MPI calls as calc (unmodified "
                          "programs)")
    run.add_argument("--compute-scale", type=float, default=1.0, metavar="X",
                     help="multiply measured host compute by X (target/host speed ratio)")
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


def command(ns: argparse.Namespace) -> int:
    """Run the simulation *ns* describes; print the summary and write the outputs."""
    from ..engine.distributed import host_processes
    from ..simulate import simulate
    from .failures import check_outputs
    from .targets import load_target
    # before the run, so that its result is not lost at the end
    stdout_files = [opt for opt, path in (("--json", ns.json), ("--csv", ns.csv)) if path == "-"]
    if len(stdout_files) > 1:
        raise ValueError("only one of --json and --csv can be '-' (standard output)")
    check_outputs(("--json", None if ns.json == "-" else ns.json),
                  ("--csv", None if ns.csv == "-" else ns.csv), ("--trace", ns.trace))
    hosts = host_processes()   # under mpiexec -n K > 1: a distributed run
    if hosts is not None:
        HOST["rank"] = hosts.Get_rank()
        if HOST["rank"]:
            ns.quiet = True    # host process 0 prints and writes the outputs
    target = load_target(ns.target, dict(ns.param), ns.program_args, ns.machine, ns.ranks,
                         quiet=bool(ns.quiet))
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
    network = options.wrap_network(ns, network)                 # network noise
    result = simulate(target.main, ranks, network=network, protocol=ns.protocol,
                      kwargs=target.kwargs, name=target.name, params=target.params,
                      machine=ns.machine, kernel_model=target.kernel_model,
                      flops=target.flops,
                      contention=ns.contention, collectives=options.collectives(ns),
                      filesystem=ns.filesystem,
                      compute=ns.compute, compute_scale=ns.compute_scale,
                      hosts=hosts, partition=ns.partition or target.partition or "block",
                      max_sim_time=ns.max_sim_time,
                      max_events=ns.max_events, check_memory=not ns.no_memory_check,
                      private_modules=not ns.shared_modules, **extra)
    options.finish_run_options(ns, result)
    if HOST["rank"]:
        return 0
    if not ns.quiet:   # on stderr when a result file goes to standard output
        (sys.stderr if stdout_files else sys.stdout).write(result.summary())
    if ns.json == "-":
        sys.stdout.write(result.json_text())
    elif ns.json:
        result.to_json(ns.json)
    if ns.csv == "-":
        sys.stdout.write(result.csv_text())
    elif ns.csv:
        result.to_csv(ns.csv)
    return 0
