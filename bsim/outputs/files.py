"""Atomic file output: write a temporary file in the target's folder, then rename.

A reader never sees a half-written result, and an interrupted run leaves the
previous file intact.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write_text", "check_writable", "OutputPathError"]


class OutputPathError(ValueError):
    """An output file cannot be written where the user asked (checked before a run)."""


def check_writable(path: str | os.PathLike[str]) -> Path:
    """Raise :class:`OutputPathError` unless :func:`atomic_write_text` can write *path*.

    Checked before a long run so that its result is not lost at the end: *path*
    must not be a directory, and its nearest existing ancestor must be a
    directory (missing folders are created) in which this process can create a
    file: a probe file is created there and removed, which also catches
    read-only and special file systems that permission bits do not show.
    """
    target = Path(path)
    if target.is_dir():
        raise OutputPathError(f"{path}: is a directory")
    folder = target.parent if str(target.parent) else Path(".")
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        raise OutputPathError(f"{path}: {folder} is a file, not a directory")
    try:
        fd, probe = tempfile.mkstemp(prefix=".bsim-probe.", dir=folder)
    except OSError as exc:
        raise OutputPathError(f"{path}: cannot create files in {folder} "
                              f"({exc.strerror or exc})") from None
    os.close(fd)
    os.unlink(probe)
    return target


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write *text* to *path* atomically (``os.replace`` of a temporary sibling)."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
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
    return target
