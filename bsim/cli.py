"""The ``bsim`` command line.

    bsim run TARGET [-n N] [--network SPEC] [--protocol P] [--param k=v]...
                    [--json FILE] [--csv FILE] [--quiet] [-- PROGRAM ARGS...]
    bsim list {skeletons,networks,protocols}

TARGET is a registered skeleton (``bsim list skeletons``) or a Python file
whose top-level code runs once per virtual rank.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["main", "build_parser"]

DEFAULT_NETWORK = "hockney:latency=4e-05,bandwidth=1e8"   # seed 004, PRIMEQUEST receive model


def _param(text: str) -> tuple[str, str]:
    key, eq, value = text.partition("=")
    if not eq or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value.strip()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``bsim`` command."""
    p = argparse.ArgumentParser(prog="bsim", description="Predict MPI application performance "
                                "by simulating skeletons (BSIM method).")
    from . import __version__
    p.add_argument("--version", action="version", version=f"bsim {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="simulate a skeleton or an mpi4py program")
    run.add_argument("target", help="skeleton name or path to a Python file")
    run.add_argument("-n", "--ranks", type=int, default=None,
                     help="virtual ranks (default: the skeleton's own count)")
    run.add_argument("--network", default=DEFAULT_NETWORK,
                     help=f"network model spec (default: {DEFAULT_NETWORK})")
    run.add_argument("--protocol", default="bsim", help="bsim (seed rules) or loggp")
    run.add_argument("--param", action="append", type=_param, default=[], metavar="K=V",
                     help="skeleton parameter (repeatable)")
    run.add_argument("--json", metavar="FILE", help="write the result as JSON")
    run.add_argument("--csv", metavar="FILE", help="write per-rank rows as CSV")
    run.add_argument("--quiet", action="store_true", help="do not print the summary")

    ls = sub.add_parser("list", help="list skeletons, networks or protocols")
    ls.add_argument("what", choices=["skeletons", "networks", "protocols"])
    return p


def _cmd_run(ns: argparse.Namespace) -> int:
    from .program import load_target
    from .simulate import simulate
    target = load_target(ns.target, dict(ns.param), ns.program_args)
    ranks = ns.ranks if ns.ranks is not None else target.ranks
    if ranks is None:
        raise SystemExit(f"bsim run: {ns.target} needs -n RANKS")
    if target.ranks is not None and ns.ranks is not None and ns.ranks != target.ranks:
        raise SystemExit(f"bsim run: {target.name} with these parameters runs on "
                         f"{target.ranks} ranks, not -n {ns.ranks}")
    result = simulate(target.main, ranks, network=ns.network, protocol=ns.protocol,
                      kwargs=target.params, name=target.name, params=target.params)
    if not ns.quiet:
        sys.stdout.write(result.summary())
    if ns.json:
        result.to_json(ns.json)
    if ns.csv:
        result.to_csv(ns.csv)
    return 0


def _cmd_list(ns: argparse.Namespace) -> int:
    if ns.what == "networks":
        from netmodels import describe_networks
        print(describe_networks())
    elif ns.what == "protocols":
        from .protocols import PROTOCOLS
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
    from .errors import BsimError
    try:
        if ns.command == "run":
            return _cmd_run(ns)
        return _cmd_list(ns)
    except (BsimError, ValueError, KeyError, FileNotFoundError) as exc:
        msg: Any = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"bsim: error: {msg}", file=sys.stderr)
        return 2
