"""The output files of one run, replaced together or not at all.

Every output of a run (``bsim run``'s ``--json``, ``--csv`` and ``--trace``; a sweep's
``PREFIX.csv`` and ``PREFIX.json``) is first written in full to a temporary sibling of
its file (``.NAME.XXXX.tmp``, flushed and synced); only when every one is written are
they renamed over their files, one after the other, with ``SIGINT``, ``SIGTERM`` and
``SIGHUP`` held back so that no signal strikes between two renames (one that arrives
then is acted on just after the last).  A write that fails -- a full disk
(``ENOSPC``), a file-size limit (``EFBIG``), a quota, a signal -- removes every
temporary and leaves every file as it was: :class:`OutputWriteError` names the option
and the path.

An output that is not a regular file (standard output, a device such as ``/dev/null``,
a FIFO, a socket, a descriptor path such as ``/dev/fd/3``) cannot be replaced: it is
written directly, after the renames (:func:`bsim.outputs.files.atomic_write_bytes`).
"""

from __future__ import annotations

import os
import signal
import stat
import tempfile
from pathlib import Path
from typing import Any

from .files import _fd_number, _stat, _umask, atomic_write_bytes

__all__ = ["OutputSet", "OutputWriteError", "HELD_SIGNALS"]

# the signals the bsim command handles as an interrupt (bsim/cli/signals.py)
HELD_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                     if hasattr(signal, name))


class OutputWriteError(OSError):
    """An output file could not be written after the run; the files from before are intact.

    ``option`` and ``path`` name the output, ``cause`` is the system's error
    (``ENOSPC``: no space left on device; ``EFBIG``: file too large).
    """

    def __init__(self, option: str, path: str, cause: OSError) -> None:
        why = cause.strerror or str(cause) or type(cause).__name__
        super().__init__(f"{option} {path}: cannot write the file ({why}); no output file "
                         f"was changed")
        self.option, self.path, self.cause = option, path, cause

    def __str__(self) -> str:
        return str(self.args[0])


def _regular_target(path: str) -> Path | None:
    """The regular file that *path* replaces (a link's target), or None when *path* is
    written directly (a descriptor path, an existing device, FIFO or socket)."""
    if _fd_number(path) is not None:
        return None
    st = _stat(path)
    if st is not None and not stat.S_ISREG(st.st_mode):
        return None
    return Path(os.path.realpath(path))


def _write_temporary(target: Path, data: bytes) -> str:
    """Write *data* to a new temporary file beside *target*; return its path (removed
    again when the write fails or is interrupted)."""
    folder = target.parent
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            view = memoryview(data)
            while view:     # in pieces: a signal is acted on between two of them
                fh.write(view[:1 << 22])
                view = view[1 << 22:]
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())   # mkstemp makes 0600; give the usual permissions
    except BaseException:
        _unlink(tmp)
        raise
    return tmp


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


class OutputSet:
    """The files one run writes, committed together (module docstring).

    ``add(option, path, data)`` for each, then :meth:`commit`; ``written`` is True once
    every file is in place.
    """

    def __init__(self) -> None:
        self.items: list[tuple[str, str, bytes]] = []
        self.written = False

    def add(self, option: str, path: str | os.PathLike[str], data: bytes | str) -> None:
        """Add the output *option* (``"--json"``) to write to *path*."""
        raw = data.encode("utf-8") if isinstance(data, str) else data
        self.items.append((option, os.fspath(path), raw))

    def paths(self) -> list[str]:
        """The paths, in the order they were added."""
        return [path for _, path, _ in self.items]

    def commit(self) -> None:
        """Write every temporary, then rename them all; then write the direct outputs.

        Raises :class:`OutputWriteError` (every file as it was) when a file cannot be
        written, and a ``KeyboardInterrupt`` that arrives while the temporaries are
        written removes them as well.
        """
        staged: list[tuple[str, Path]] = []
        direct: list[tuple[str, str, bytes]] = []
        try:
            for option, path, data in self.items:
                target = _regular_target(path)
                if target is None:
                    direct.append((option, path, data))
                    continue
                try:
                    staged.append((_write_temporary(target, data), target))
                except OSError as exc:
                    raise OutputWriteError(option, path, exc) from None
            held = _hold_signals()
            try:
                while staged:
                    tmp, target = staged[0]
                    os.replace(tmp, target)
                    staged.pop(0)
                self.written = not direct   # (before a held signal is acted on)
            finally:
                _release_signals(held)
        finally:
            for tmp, _ in staged:
                _unlink(tmp)
        for option, path, data in direct:
            try:
                atomic_write_bytes(path, data)
            except BrokenPipeError:
                raise
            except OSError as exc:
                raise OutputWriteError(option, path, exc) from None
        self.written = True


def _hold_signals() -> tuple[dict[int, Any], list[int]] | None:
    """Record, instead of acting on, the interrupt signals (main thread only; None
    elsewhere): the handlers before and the list the signals that come are kept in.
    (A handler of Python's own, not the thread's signal mask: a signal delivered to
    another thread would still interrupt the main thread at once.)"""
    saved: dict[int, Any] = {}
    pending: list[int] = []
    try:
        for signum in HELD_SIGNALS:
            handler = signal.getsignal(signum)
            if handler not in (signal.SIG_IGN, None):
                saved[signum] = signal.signal(signum, lambda n, _f: pending.append(n))
    except ValueError:   # not the main thread: signals go to the main thread anyway
        for signum, handler in saved.items():
            signal.signal(signum, handler)
        return None
    return saved, pending


def _release_signals(held: tuple[dict[int, Any], list[int]] | None) -> None:
    """Put the handlers back and act on the first signal that came meanwhile."""
    if held is None:
        return
    saved, pending = held
    for signum, handler in saved.items():
        signal.signal(signum, handler)
    if pending:
        handler = saved[pending[0]]
        if callable(handler):
            handler(pending[0], None)     # raises KeyboardInterrupt or Terminated
        elif handler == signal.SIG_DFL:
            os.kill(os.getpid(), pending[0])
