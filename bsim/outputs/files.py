"""Output files: written atomically when they are regular files, directly otherwise.

A regular file (or a new one) is written to a temporary file in its folder,
then renamed over it: a reader never sees a half-written result, and an
interrupted run leaves the previous file intact.  A symbolic link is followed:
its target is replaced that way and the link stays a link.  Anything else that
already exists (a device such as ``/dev/null``, a FIFO, a Unix socket, or a
descriptor named ``/dev/stdout``, ``/dev/fd/N``, as from the shell's ``>(...)``)
is written directly, never replaced by a regular file.
"""

from __future__ import annotations

import os
import re
import socket
import stat
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

__all__ = ["atomic_write_text", "atomic_write_bytes", "check_writable", "check_distinct",
           "OutputPathError"]

# /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: a descriptor this process holds
_FD_PATH = re.compile(r"^/(?:dev/fd|proc/self/fd)/(\d+)$")
_STD_PATHS = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}


class OutputPathError(ValueError):
    """An output file cannot be written where the user asked (checked before a run)."""


# -- where an output goes ------------------------------------------------------------------
def _fd_number(path: str) -> int | None:
    """The descriptor that *path* names (``/dev/stdout`` -> 1, ``/dev/fd/63`` -> 63), or None."""
    if path in _STD_PATHS:
        return _STD_PATHS[path]
    match = _FD_PATH.match(path)
    return int(match.group(1)) if match else None


def _stat(path: str) -> os.stat_result | None:
    """``os.stat`` of *path* following links; None when nothing is there.

    Raises :class:`OutputPathError` for other failures (a link loop, a
    component that is not a folder, no permission to look).
    """
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None   # reported by check_writable as "is a file, not a directory"
    except OSError as exc:
        raise OutputPathError(f"{path}: {exc.strerror or exc}") from None


def _is_special(st: os.stat_result | None) -> bool:
    """True for an existing file that is neither regular nor a directory."""
    return st is not None and not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode))


# -- checks before a run ---------------------------------------------------------------------
def check_writable(path: str | os.PathLike[str]) -> Path:
    """Raise :class:`OutputPathError` unless :func:`atomic_write_text` can write *path*.

    Checked before a long run so that its result is not lost at the end.  A
    descriptor path (``/dev/fd/N``) must be open for writing; an existing
    device, FIFO or socket must be writable by this process.  Otherwise (a
    regular file, maybe through a symbolic link, or a new one) *path* must not
    be a directory, and the nearest existing ancestor of where it resolves must
    be a directory (missing folders are created) in which this process can
    create a file: a probe file is created there and removed, which also
    catches read-only and special file systems that permission bits do not show.
    """
    text = os.fspath(path)
    target = Path(text)
    if not text:
        raise OutputPathError("empty path")
    fd = _fd_number(text)
    if fd is not None:
        _check_fd(text, fd)
        return target
    st = _stat(text)
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise OutputPathError(f"{text}: is a directory")
    if _is_special(st):
        if not os.access(text, os.W_OK):
            raise OutputPathError(f"{text}: permission denied")
        return target
    real = Path(os.path.realpath(text))
    folder = real.parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        raise OutputPathError(f"{text}: {folder} is a file, not a directory")
    try:
        probe_fd, probe = tempfile.mkstemp(prefix=".bsim-probe.", dir=folder)
    except OSError as exc:
        raise OutputPathError(f"{text}: cannot create files in {folder} "
                              f"({exc.strerror or exc})") from None
    os.close(probe_fd)
    os.unlink(probe)
    return target


def _check_fd(path: str, fd: int) -> None:
    """Raise :class:`OutputPathError` unless descriptor *fd* is open for writing."""
    try:
        import fcntl
    except ImportError:   # pragma: no cover - not a POSIX system: nothing to check
        return
    try:
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    except OSError:
        raise OutputPathError(f"{path}: file descriptor {fd} is not open") from None
    if flags & os.O_ACCMODE not in (os.O_WRONLY, os.O_RDWR):
        raise OutputPathError(f"{path}: file descriptor {fd} is not open for writing")


def _identity(path: str) -> tuple[object, ...]:
    """What makes two output paths the same file: where they resolve, or device and inode."""
    fd = 1 if path == "-" else _fd_number(path)
    try:
        st = os.fstat(fd) if fd is not None else os.stat(path)
    except OSError:   # not there yet: where it would be created
        return ("path", os.path.realpath(path))
    return ("file", st.st_dev, st.st_ino)


def check_distinct(outputs: Iterable[tuple[str, str | None]]) -> None:
    """Refuse an empty path, and two outputs that would write the same file.

    Each of *outputs* is ``(option, path)`` (path None: not asked for; ``"-"``:
    standard output).  Paths are the same when they resolve to the same place
    (``same.out``, ``./same.out``, a symbolic link to it) or to the same existing
    file; a character device such as ``/dev/null`` can take several outputs.
    Raises :class:`OutputPathError` naming both options.
    """
    seen: dict[tuple[object, ...], tuple[str, str]] = {}
    for option, path in outputs:
        if path is None:
            continue
        if not path:
            raise OutputPathError(f"{option}: empty path (give a file name, or '-' for "
                                  f"standard output)")
        key = _identity(path)
        if key[0] == "file" and _is_char_device(path):
            continue
        if key in seen:
            first, first_path = seen[key]
            raise OutputPathError(f"{first} {first_path} and {option} {path} name the same "
                                  f"file: give each output its own path")
        seen[key] = (option, path)


def _is_char_device(path: str) -> bool:
    """True when *path* (``-``: standard output) is a character device (/dev/null, a tty)."""
    fd = 1 if path == "-" else _fd_number(path)
    try:
        st = os.fstat(fd) if fd is not None else os.stat(path)
    except OSError:
        return False
    return stat.S_ISCHR(st.st_mode)


# -- writing ---------------------------------------------------------------------------------
def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write *text* (UTF-8) to *path*: atomically if it is a regular file (module docstring)."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write *data* to *path*; return *path* as a :class:`~pathlib.Path`.

    A descriptor path (``/dev/stdout``, ``/dev/fd/N``) is written through that
    descriptor, an existing device, FIFO or socket directly (a FIFO waits for its
    reader), and anything else by ``os.replace`` of a temporary sibling of the
    file that *path* resolves to (so a symbolic link stays a link).
    """
    text = os.fspath(path)
    if not text:
        raise OutputPathError("empty path")
    fd = _fd_number(text)
    if fd is not None:
        _write_fd(fd, data)
        return Path(text)
    st = _stat(text)
    if st is not None and stat.S_ISSOCK(st.st_mode):
        _write_socket(text, data)
    elif _is_special(st):
        out = os.open(text, os.O_WRONLY)
        try:
            _write_fd(out, data)
        finally:
            os.close(out)
    else:
        _replace(Path(os.path.realpath(text)), data)
    return Path(text)


def _write_fd(fd: int, data: bytes) -> None:
    """Write all of *data* to descriptor *fd*, after what Python buffered for stdout/stderr."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, ValueError, OSError):
            pass
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _write_socket(path: str, data: bytes) -> None:
    """Send *data* to the Unix stream socket at *path*."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        try:
            sock.connect(path)
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, path) from None
        sock.sendall(data)


def _replace(target: Path, data: bytes) -> None:
    """Write *data* to a temporary file beside *target*, then rename it over *target*."""
    folder = target.parent
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())   # mkstemp makes 0600; give the usual permissions
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
