"""The ``bsim`` command line.

    bsim run TARGET [-n N] [--machine NAME|FILE.toml] [--network SPEC] [--protocol P]
                    [--contention {none,fluid}] [--collectives SPEC] [--collective OP=SPEC]...
                    [--compute {ignore,measure}] [--compute-scale X] [--param k=v]...
                    [--json FILE] [--csv FILE] [--trace FILE] [--noise SPEC] [--quiet]
                    [-- PROGRAM ARGS...]
    bsim list {skeletons,networks,protocols,machines}
    bsim sweep | plot | compare ...      (bsim/cli/output_commands.py)

TARGET is a registered skeleton (``bsim list skeletons``) or a Python file
whose top-level code runs once per virtual rank.  The network is ``--network``
if given, else the ``[network]`` table of ``--machine`` (a preset of
``bsim list machines`` or a TOML file, see ``docs/machines.md``), else
DEFAULT_NETWORK.  ``--contention fluid`` makes messages in flight share link
bandwidth (topology models and ``twolevel``, see ``docs/networks.md``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["main", "build_parser"]

DEFAULT_NETWORK = "hockney:latency=4e-05,bandwidth=1e8"   # BSIM paper: PRIMEQUEST receive


def _param(text: str) -> tuple[str, str]:
    key, eq, value = text.partition("=")
    if not eq or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value.strip()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``bsim`` command."""
    p = argparse.ArgumentParser(prog="bsim", description="Predict MPI application performance "
                                "by simulating skeletons (BSIM method).")
    from .. import __version__
    p.add_argument("--version", action="version", version=f"bsim {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="simulate a skeleton or an mpi4py program")
    run.add_argument("target", help="skeleton name or path to a Python file")
    run.add_argument("-n", "--ranks", type=int, default=None,
                     help="virtual ranks (default: the skeleton's own count)")
    run.add_argument("--machine", metavar="NAME|FILE.toml",
                     help="machine preset whose [network] to use (bsim list machines)")
    run.add_argument("--network", default=None,
                     help=f"network model spec; overrides --machine (default: {DEFAULT_NETWORK})")
    run.add_argument("--protocol", default="bsim", help="bsim (seed rules) or loggp")
    run.add_argument("--contention", choices=["none", "fluid"], default="none",
                     help="fluid: messages in flight share link bandwidth max-min fairly "
                          "(topology models, twolevel)")
    run.add_argument("--collectives", default=None, metavar="SPEC",
                     help="collective cost source: analytic (default), clog:c=..,d=.., "
                          "table:path=FILE, algorithmic[:op=alg] (docs/collectives.md)")
    run.add_argument("--collective", action="append", type=_param, default=[],
                     metavar="OP=SPEC", help="cost source for one operation (repeatable)")
    run.add_argument("--compute", choices=["ignore", "measure"], default="ignore",
                     help="measure: charge host time between MPI calls as calc (unmodified "
                          "programs)")
    run.add_argument("--compute-scale", type=float, default=1.0, metavar="X",
                     help="multiply measured host compute by X (target/host speed ratio)")
    run.add_argument("--param", action="append", type=_param, default=[], metavar="K=V",
                     help="skeleton parameter (repeatable)")
    run.add_argument("--partition", choices=["block", "node"], default="block",
                     help="under mpiexec -n K: how virtual ranks are spread over the K "
                          "host processes (contiguous blocks, or whole simulated nodes)")
    run.add_argument("--json", metavar="FILE", help="write the result as JSON")
    run.add_argument("--csv", metavar="FILE", help="write per-rank rows as CSV")
    run.add_argument("--quiet", action="store_true", help="do not print the summary")

    from . import output_commands as cli_extra
    cli_extra.run_options(run)

    ls = sub.add_parser("list", help="list skeletons, networks or protocols")
    ls.add_argument("what", choices=["skeletons", "networks", "protocols", "machines"])
    cli_extra.add_parsers(sub)
    _add_calibration(sub)
    return p


def _add_calibration(sub: Any) -> None:
    """``bsim calibrate`` and ``bsim fit`` (bsim/calibration), when present."""
    try:
        from .calibrate import add_parsers
    except ImportError:
        return
    add_parsers(sub)


def _collectives(ns: argparse.Namespace) -> str | dict[str, str] | None:
    """``--collectives`` (else the ``--machine`` preset's ``[collectives]``), plus
    ``--collective OP=SPEC`` overrides, for simulate()."""
    default = ns.collectives
    if default is None and ns.machine is not None:
        from bsim.machines import collective_spec
        default = collective_spec(ns.machine)
    if not ns.collective:
        return default
    specs = {"default": default or "analytic"}
    specs.update(dict(ns.collective))
    return specs


_HOST = {"rank": 0}   # this process's rank among mpiexec's host processes


def _cmd_run(ns: argparse.Namespace) -> int:
    from ..engine.distributed import host_processes
    from ..simulate import simulate
    from .targets import load_target
    hosts = host_processes()   # under mpiexec -n K > 1: a distributed run
    if hosts is not None:
        _HOST["rank"] = hosts.Get_rank()
        if _HOST["rank"]:
            ns.quiet = True    # host process 0 prints and writes the outputs
    target = load_target(ns.target, dict(ns.param), ns.program_args, ns.machine)
    ranks = ns.ranks if ns.ranks is not None else target.ranks
    if ranks is None:
        raise SystemExit(f"bsim run: {ns.target} needs -n RANKS")
    if target.ranks is not None and ns.ranks is not None and ns.ranks != target.ranks:
        raise SystemExit(f"bsim run: {target.name} with these parameters runs on "
                         f"{target.ranks} ranks, not -n {ns.ranks}")
    from . import output_commands as cli_extra
    extra = cli_extra.apply_run_options(ns)            # trace, noise, progress bar
    network = target.network_for(_network_spec(ns))   # a skeleton's layout sets the mapping
    network = cli_extra.wrap_network(ns, network)       # network noise
    result = simulate(target.main, ranks, network=network, protocol=ns.protocol,
                      kwargs=target.params, name=target.name, params=target.params,
                      contention=ns.contention, collectives=_collectives(ns),
                      compute=ns.compute, compute_scale=ns.compute_scale,
                      hosts=hosts, partition=ns.partition, **extra)
    cli_extra.finish_run_options(ns, result)
    if _HOST["rank"]:
        return 0
    if not ns.quiet:
        sys.stdout.write(result.summary())
    if ns.json:
        result.to_json(ns.json)
    if ns.csv:
        result.to_csv(ns.csv)
    return 0


def _network_spec(ns: argparse.Namespace) -> str:
    """``--network`` if given, else the ``--machine`` preset's network, else the default."""
    if ns.network is not None:
        return str(ns.network)
    if ns.machine is not None:
        from bsim.machines import network_spec
        return network_spec(ns.machine)
    return DEFAULT_NETWORK


def _cmd_list(ns: argparse.Namespace) -> int:
    if ns.what == "machines":
        from bsim.machines import list_machines, load_machine, network_spec
        for name in list_machines():
            m = load_machine(name)
            print(f"{m.name}: {m.description}")
            print(f"    {'source':<14} {m.source}")
            print(f"    {'network':<14} {network_spec(m)}")
    elif ns.what == "networks":
        from netmodels import describe_networks
        print(describe_networks())
    elif ns.what == "protocols":
        from ..engine.protocols import PROTOCOLS
        for name, cls in PROTOCOLS.items():
            print(f"{name}: {(cls.__doc__ or '').strip().splitlines()[0]}")
            for k, v in cls.parameters.items():
                print(f"    {k:<14} {v}")
    else:
        from skeletons import registry
        for name in registry.names():
            print(registry.get(name).describe())
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``bsim`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    program_args: list[str] = []
    if "--" in argv:   # everything after -- goes to the simulated program's sys.argv
        cut = argv.index("--")
        argv, program_args = argv[:cut], argv[cut + 1:]
    ns = build_parser().parse_args(argv)
    ns.program_args = program_args
    from ..errors import BsimError
    try:
        if ns.command == "run":
            return _cmd_run(ns)
        if ns.command == "list":
            return _cmd_list(ns)
        from . import output_commands as cli_extra
        rc = cli_extra.run(ns)
        if rc is not None:
            return rc
        from .calibrate import run as run_calibration
        return run_calibration(ns)
    except (BsimError, ValueError, KeyError, FileNotFoundError) as exc:
        msg: Any = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        if not _HOST["rank"]:   # in a distributed run every host raises the same error
            print(f"bsim: error: {msg}", file=sys.stderr)
        return 2
