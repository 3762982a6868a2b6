"""The ``bsim`` command line: one module per subcommand, assembled here.

    bsim run TARGET ...             bsim.cli.run
    bsim list WHAT                  bsim.cli.listing
    bsim sweep TARGET ...           bsim.cli.sweep
    bsim plot FILE -o FILE.png      bsim.cli.plot
    bsim compare A.json B.json      bsim.cli.compare
    bsim calibrate | fit ...        bsim.cli.calibrate

Each module's ``add_parser(subparsers)`` registers its subcommand and sets
``handler``; :func:`main` parses, calls the handler and turns a user error
into one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .. import __version__
from ..errors import BsimError
from . import calibrate, compare, listing, plot, run, sweep

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``bsim`` command."""
    p = argparse.ArgumentParser(prog="bsim", description="Predict MPI application performance "
                                "by simulating skeletons (BSIM method).")
    p.add_argument("--version", action="version", version=f"bsim {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    for module in (run, listing, sweep, plot, compare):
        module.add_parser(sub)
    calibrate.add_parsers(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``bsim`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    program_args: list[str] = []
    if "--" in argv:   # everything after -- goes to the simulated program's sys.argv
        cut = argv.index("--")
        argv, program_args = argv[:cut], argv[cut + 1:]
    ns = build_parser().parse_args(argv)
    ns.program_args = program_args
    try:
        return int(ns.handler(ns))
    except (BsimError, ValueError, KeyError, FileNotFoundError) as exc:
        msg: Any = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        if not run.HOST["rank"]:   # in a distributed run every host raises the same error
            print(f"bsim: error: {msg}", file=sys.stderr)
        return 2
