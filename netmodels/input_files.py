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

The block is a :class:`~contextvars.ContextVar`: every virtual rank's greenlet starts
in a copy of the context that created it (``bsim.engine.rank.RankGreenlet``), so a
file a rank reads (a skeleton's kernel table) is noted in the run's block too.  A
loader that reads a file once for every rank of a run keeps what it built with
:func:`per_run`, not in a process-wide cache: the next run in the process (a sweep's
next point, a test) reads the file again, so it is noted again and an edit is seen.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TypeVar, cast

__all__ = ["note_input", "recording_inputs", "records_inputs", "fingerprint", "per_run"]


class _Recording:
    """What a block collects: the files noted, and what :func:`per_run` built."""

    __slots__ = ("files", "built")

    def __init__(self) -> None:
        self.files: dict[str, str] = {}
        self.built: dict[Any, Any] = {}


_current: ContextVar[_Recording | None] = ContextVar("bsim_input_files", default=None)
F = TypeVar("F", bound=Callable[..., Any])


def fingerprint(content: bytes | str) -> str:
    """``sha256:`` and the first 16 hex digits of the SHA-256 of *content* (UTF-8)."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    return "sha256:" + hashlib.sha256(data).hexdigest()[:16]


def note_input(kind: str, path: str | Path, content: bytes | str,
               name: str | None = None) -> None:
    """Record that the run read *content* from *path* as its *kind* (``"mapping"``, ...),
    under the file's name, or under *name* when given (a module's path relative to the
    program's folder: ``pkg/util.py``)."""
    recording = _current.get()
    if recording is not None:   # by name: one file given as a relative and an absolute path
        recording.files[f"{kind} {Path(path).name if name is None else name}"] = \
            fingerprint(content)


def per_run(key: Any, build: Callable[[], Any]) -> Any:
    """``build()`` once per :func:`recording_inputs` block (one run), shared by the
    ranks: what a loader builds from a file it reads for every rank (and notes).  Outside
    a block (under real ``mpiexec``, one rank per process) ``build()`` is called each time.
    *key* names what is built and from what (``("milc kernels", machine)``)."""
    recording = _current.get()
    if recording is None:
        return build()
    try:
        return recording.built[key]
    except KeyError:
        value = recording.built[key] = build()
        return value


@contextmanager
def recording_inputs() -> Iterator[dict[str, str]]:
    """Collect the files noted inside the block; an inner block adds to the outer's."""
    recording = _current.get()
    if recording is not None:
        yield recording.files
        return
    recording = _Recording()
    token = _current.set(recording)
    try:
        yield recording.files
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
