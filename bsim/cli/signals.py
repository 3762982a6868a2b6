"""The signals that end the ``bsim`` command, acted on as Ctrl-C is.

``SIGTERM`` (what ``timeout``, Slurm, PBS and ``kill`` send) and ``SIGHUP`` (a closed
terminal or ssh session) raise :class:`Terminated`, a ``KeyboardInterrupt``: the
simulation stops between two events or in the rank that runs, every rank is torn down,
temporary files are removed, and the command ends with one line on standard error
(``bsim: terminated by SIGTERM at simulated t=... s, nothing written``) and the
shell's status for the signal, 128 + its number (143, 129; Ctrl-C: 130).  A signal
that the environment ignores (``nohup`` ignores ``SIGHUP``) stays ignored.  What each
leaves on disk is in ``docs/errors.md`` ("Signals").
"""

from __future__ import annotations

import os
import signal
from types import FrameType

__all__ = ["Terminated", "install", "exit_status", "signal_name", "HANDLED"]

# signal name -> what the one-line report says the command was
HANDLED = {"SIGTERM": "terminated", "SIGHUP": "hung up"}


class Terminated(KeyboardInterrupt):
    """The command got *signum* (``SIGTERM``, ``SIGHUP``): stop as for Ctrl-C."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal_name(signum))
        self.signum = signum


def signal_name(signum: int) -> str:
    """``SIGTERM`` for 15, ...; ``signal N`` for a number without a name."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


_INSTALLED_IN: list[int] = []   # the process that installed the handlers


def _raise(signum: int, frame: FrameType | None) -> None:
    if os.getpid() not in _INSTALLED_IN:
        # a child forked with the handler (a sweep's worker, which its pool ends with
        # SIGTERM): the signal's default action, as if never installed
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    # raised here, in bsim's own frame: never taken for the program's own
    # `raise KeyboardInterrupt` (bsim.engine.failures.program_interrupt)
    raise Terminated(signum)


def install() -> None:
    """Act on ``SIGTERM`` and ``SIGHUP`` as on Ctrl-C in this process (main thread only;
    a signal the environment ignores, or one with a handler of the embedding program's,
    is left alone)."""
    for name in HANDLED:
        signum = getattr(signal, name, None)
        if signum is None:   # pragma: no cover - not POSIX
            continue
        try:
            if signal.getsignal(signum) == signal.SIG_DFL:
                signal.signal(signum, _raise)
                _INSTALLED_IN.append(os.getpid())
        except ValueError:   # not the main thread (bsim.cli.main called from a thread)
            return


def exit_status(exc: BaseException) -> int:
    """128 + the signal's number: 130 for Ctrl-C, 143 for ``SIGTERM``, 129 for ``SIGHUP``."""
    return 128 + int(getattr(exc, "signum", signal.SIGINT))


def what_happened(exc: BaseException) -> str:
    """``interrupted`` (Ctrl-C), ``terminated by SIGTERM``, ``hung up (SIGHUP)``."""
    signum = getattr(exc, "signum", None)
    if signum is None:
        return "interrupted"
    name = signal_name(signum)
    return f"terminated by {name}" if name != "SIGHUP" else "hung up (SIGHUP)"
