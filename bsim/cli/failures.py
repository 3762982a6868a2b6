"""How the ``bsim`` command ends when something goes wrong: one clear line, the right status.

A user-side failure prints one line on stderr that says what was wrong, with no
traceback (``--debug`` or ``BSIM_DEBUG=1`` shows the full traceback instead):

=============================================  ======================================  ======
failure                                        what the user sees                      status
=============================================  ======================================  ======
bad option, spec, parameter, program error     ``bsim: error: <message>``              2
more ranks than memory allows (checked first)  the estimate and the limit              2
an output path that cannot be written          ``bsim: error: --json X: is a ...``     2
a syntax error in the program file             Python's own message (file, line, ^)    2
a missing optional package                     which extra to install                  2
Ctrl-C                                         ``bsim: interrupted ..., nothing         130
                                               written``
``SIGTERM``, ``SIGHUP`` (:mod:`.signals`)      ``bsim: terminated by SIGTERM ...``      143, 129
an output file that cannot be written after    ``bsim: error: --json X: cannot write    2
the run (full disk, file-size limit)           the file (...); no output file was
                                               changed`` (the summary printed before)
``raise KeyboardInterrupt`` in a rank          ``bsim: error: rank R raised            2
                                               KeyboardInterrupt (at file:line) ...``
a closed pipe (``bsim run ... | head``)        nothing                                 0
=============================================  ======================================  ======

Checks that protect a long run (:func:`check_outputs`) run before it starts.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback

from ..engine.failures import program_interrupt
from ..engine.host_memory import TRY
from ..errors import BsimError
from ..outputs.files import OutputPathError, check_writable
from .signals import exit_status, what_happened

__all__ = ["check_outputs", "report", "user_message", "debug_enabled", "EXTRAS", "EXIT_USAGE",
           "EXIT_INTERRUPTED"]

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130   # 128 + SIGINT, as shells report it

# optional package -> the extra of bsim that installs it
EXTRAS = {"scipy": "fit", "matplotlib": "plot", "mpi4py": "mpi"}


def debug_enabled(ns: argparse.Namespace | None = None) -> bool:
    """True with ``--debug`` or ``BSIM_DEBUG=1``: show full tracebacks."""
    return bool(getattr(ns, "debug", False)) or os.environ.get("BSIM_DEBUG", "") not in ("", "0")


def check_outputs(*outputs: tuple[str, str | None]) -> None:
    """Check, before the run, that every output file can be written.

    Each of *outputs* is ``(option, path)``: the option that named the file
    (``"--json"``) and its path (None: not asked for).  Raises
    :class:`OutputPathError` naming the option and the path.
    """
    for option, path in outputs:
        if path:
            try:
                check_writable(path)
            except OutputPathError as exc:
                raise OutputPathError(f"{option} {exc}") from None


def _missing_package(exc: ImportError) -> str | None:
    name = (exc.name or "").split(".")[0]
    if name in EXTRAS:
        return (f"this needs the optional package {name}: pip install 'bsim[{EXTRAS[name]}]' "
                f"(or pip install {name})")
    return None


def user_message(exc: BaseException) -> str | None:
    """The one-line message of a user-side failure *exc* (without ``bsim: error:``), else None.

    User-side: bsim's own errors, ``ValueError``, ``KeyError``, ``OSError``,
    ``MemoryError`` and a missing optional package; anything else is a bug.
    """
    if isinstance(exc, ImportError) and _missing_package(exc):
        return _missing_package(exc)
    if not isinstance(exc, (BsimError, ValueError, KeyError, OSError, MemoryError)):
        return None
    if isinstance(exc, KeyError) and exc.args:
        return str(exc.args[0])
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        return f"{exc.filename}: {exc.strerror}"
    if str(exc):
        return str(exc)
    if isinstance(exc, MemoryError):   # never "bsim: error:" alone
        return f"out of memory (MemoryError); {TRY}"
    return f"{type(exc).__name__} (with no message)"


def report(exc: BaseException, ns: argparse.Namespace | None = None, quiet: bool = False) -> int:
    """Print the one-line report of *exc* (unless *quiet*) and return the exit status.

    Re-raises *exc* when it is not a user-side failure, or when debugging is on.
    """
    if debug_enabled(ns) and not isinstance(exc, BrokenPipeError):
        raise exc
    if isinstance(exc, BrokenPipeError):
        # the reader went away (| head): stop quietly, and keep Python from complaining
        # again when it flushes stdout at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    interrupt = program_interrupt(exc)
    if interrupt is not None:   # raised by the program in a rank: its error, not a Ctrl-C
        message = f"bsim: error: {interrupt}"
        status = EXIT_USAGE
    elif isinstance(exc, KeyboardInterrupt):
        when = getattr(exc, "sim_time", None)
        at = f" at simulated t={when!r} s" if when is not None else ""
        written = getattr(exc, "written", None) or "nothing written"
        message = f"bsim: {what_happened(exc)}{at}, {written}"
        status = exit_status(exc)
    elif isinstance(exc, SyntaxError):
        message = "".join(traceback.format_exception_only(exc)).rstrip()   # Python's own
        status = EXIT_USAGE
    elif user_message(exc) is not None:
        message = f"bsim: error: {user_message(exc)}"
        status = EXIT_USAGE
    else:
        raise exc
    if not quiet:
        print(message, file=sys.stderr)
    return status
