"""The files a run read, by content: what a result records so that two runs from
different files are told apart.

A model or loader that reads a file the prediction depends on (an explicit mapping, a
collective cost table, a machine file, the program itself) calls :func:`note_input`
with what it read; while a :func:`recording_inputs` block is open (``bsim.simulate``
opens one, ``bsim run`` one around loading its target too) each file is kept as
``"KIND NAME" -> "sha256:<16 hex digits>"`` of its bytes (the file's name, not its path: a
path as typed differs between runs of one file), and ``Result.inputs`` holds them
(``docs/outputs.md``).  A path alone would record two runs from edited copies of one
file as equal (``bsim compare`` said "no difference" for two different layouts).
Outside a block, noting does nothing.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TypeVar, cast

__all__ = ["note_input", "recording_inputs", "records_inputs", "fingerprint"]

_current: ContextVar[dict[str, str] | None] = ContextVar("bsim_input_files", default=None)
F = TypeVar("F", bound=Callable[..., Any])


def fingerprint(content: bytes | str) -> str:
    """``sha256:`` and the first 16 hex digits of the SHA-256 of *content* (UTF-8)."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    return "sha256:" + hashlib.sha256(data).hexdigest()[:16]


def note_input(kind: str, path: str | Path, content: bytes | str) -> None:
    """Record that the run read *content* from *path* as its *kind* (``"mapping"``, ...)."""
    files = _current.get()
    if files is not None:   # by name: one file given as a relative and an absolute path
        files[f"{kind} {Path(path).name}"] = fingerprint(content)


@contextmanager
def recording_inputs() -> Iterator[dict[str, str]]:
    """Collect the files noted inside the block; an inner block adds to the outer's."""
    files = _current.get()
    if files is not None:
        yield files
        return
    files = {}
    token = _current.set(files)
    try:
        yield files
    finally:
        _current.reset(token)


def records_inputs(run: F) -> F:
    """Decorate a function returning a result: its ``inputs`` become the files noted
    while it ran (with those of an enclosing :func:`recording_inputs` block)."""
    @functools.wraps(run)
    def recorded(*args: Any, **kwargs: Any) -> Any:
        with recording_inputs() as files:
            result = run(*args, **kwargs)
            result.inputs = dict(sorted(files.items()))
        return result
    return cast(F, recorded)
