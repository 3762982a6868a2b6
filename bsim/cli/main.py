"""The ``bsim`` command line: one module per subcommand, assembled here.

    bsim run TARGET ...             bsim.cli.run
    bsim list WHAT                  bsim.cli.listing
    bsim sweep TARGET ...           bsim.cli.sweep
    bsim plot FILE -o FILE.png      bsim.cli.plot
    bsim compare A.json B.json      bsim.cli.compare
    bsim calibrate | fit ...        bsim.cli.calibrate
    bsim record | replay | skeleton bsim.cli.record, .replay, .skeleton (bsim/traces)

Each module's ``add_parser(subparsers)`` registers its subcommand and sets
``handler``; :func:`main` parses, calls the handler and turns a user-side
failure into one line on stderr and an exit status (:mod:`bsim.cli.failures`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings
from typing import Any, NoReturn

from ..version import __version__
from . import (
    calibrate,
    compare,
    failures,
    hosts,
    listing,
    plot,
    record,
    replay,
    run,
    signals,
    skeleton,
    sweep,
)

__all__ = ["main", "build_parser"]


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage error is printed by host process 0 only under
    ``mpiexec -n K`` (every host process parses the same command line), while every
    process exits with status 2."""

    def error(self, message: str) -> NoReturn:
        if hosts.first_process():
            super().error(message)
        self.exit(failures.EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``bsim`` command."""
    p = _Parser(prog="bsim", description="Predict MPI application performance "
                "by simulating skeletons (BSIM method).")
    p.add_argument("--version", action="version", version=f"bsim {__version__}")
    p.add_argument("--debug", action="store_true",
                   help="show full tracebacks (also BSIM_DEBUG=1)")
    sub = p.add_subparsers(dest="command", required=True)
    for module in (run, listing, sweep, plot, compare, record, replay, skeleton):
        module.add_parser(sub)
    calibrate.add_parsers(sub)
    return p


def _one_line_warning(message: Any, category: Any, filename: str, lineno: int,
                      file: Any = None, line: Any = None) -> None:
    """``bsim: warning: MESSAGE`` on standard error (no source line of bsim's own code)."""
    print(f"bsim: warning: {message}", file=sys.stderr if file is None else file)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``bsim`` console script."""
    signals.install()   # SIGTERM and SIGHUP end a run as Ctrl-C does
    argv_given = argv
    argv = list(sys.argv[1:] if argv is None else argv)
    program_args: list[str] = []
    if "--" in argv:   # everything after -- goes to the simulated program's sys.argv
        cut = argv.index("--")
        argv, program_args = argv[:cut], argv[cut + 1:]
    ns = build_parser().parse_args(argv)
    ns.program_args = program_args
    try:
        with warnings.catch_warnings():   # a warning is one line, as an error is
            warnings.showwarning = _one_line_warning
            status = int(ns.handler(ns))
        sys.stdout.flush()   # a closed pipe shows here, not at interpreter exit
        return status
    except BaseException as exc:   # user-side failures: one line; anything else re-raised
        if isinstance(exc, SystemExit):
            raise
        if run.HOST["size"] > 1:   # a distributed run: one host process reports it
            return hosts.report(exc, ns, run.HOST)
        status = failures.report(exc, ns)
        if argv_given is None and isinstance(exc, KeyboardInterrupt) and status > 128:
            # the bsim command stopped by a signal: end now, without the interpreter's
            # teardown of the run's objects (0.4 s after a traced 1,024-rank run)
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(ValueError, OSError):
                    stream.flush()
            os._exit(status)
        return status
