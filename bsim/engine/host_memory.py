"""How much memory this host process may still use, and what running out of it says.

A run of N virtual ranks needs about ``N * KIB_PER_RANK`` KiB (each rank's greenlet,
frames, clock and mailbox; 7.3-8.9 KiB measured by ``benchmarks/engine_speed.py``,
``docs/benchmarks.md``, plus the program's own frames).  Before the run that estimate
is compared with the least of what the process may use:

* free memory, Linux's ``MemAvailable`` (``/proc/meminfo``);
* the address-space limit (``ulimit -v``, ``RLIMIT_AS``) less the address space in use
  (``VmSize``), and the data-segment limit (``RLIMIT_DATA``) less ``VmData``;
* the memory limit of the process's control group (a container, a Slurm job): cgroup v2
  ``memory.max`` less ``memory.current``, cgroup v1 ``memory.limit_in_bytes`` less
  ``memory.usage_in_bytes``, for its group and each group above it.

A ``MemoryError`` that happens anyway (the check off, an estimate too low for the
program) is not any one rank's fault: :func:`out_of_memory` turns it into one line
saying how far the run got (how many ranks were created, or the simulated time), the
estimate and what to try.
"""

from __future__ import annotations

import functools
import os
import resource
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar, cast

from ..errors import BsimError

__all__ = ["KIB_PER_RANK", "available_memory", "check_rank_memory", "out_of_memory",
           "reports_out_of_memory", "OutOfMemoryError", "create_ranks", "start_ranks"]

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

KIB_PER_RANK = 12
CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_CGROUP = Path("/proc/self/cgroup")
_UNLIMITED_V1 = 1 << 60   # cgroup v1 writes "no limit" as a number near 2**63
TRY = ("try fewer ranks, more host processes (mpiexec -n K, docs/distributed.md) or "
       "--shared-modules")


class OutOfMemoryError(BsimError, MemoryError):
    """The host process ran out of memory during a run (one line, naming no rank)."""


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _status_bytes(field: str) -> int:
    """``VmSize``/``VmData`` of this process in bytes (0 when unknown)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _meminfo() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _groups(root: Path, path: str) -> list[Path]:
    """The folders of a control group and of each group above it, found under *root*
    (inside a container the group's own folder is *root* itself)."""
    parts = [p for p in path.strip("/").split("/") if p]
    found = [root.joinpath(*parts[:i]) for i in range(len(parts), -1, -1)]
    return [f for f in found if f.is_dir()]


def _cgroup_room() -> int | None:
    """Bytes the control group(s) of this process may still use, or None (no limit)."""
    try:
        lines = PROC_CGROUP.read_text().splitlines()
    except OSError:
        return None
    room: int | None = None
    for line in lines:
        hierarchy, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if hierarchy == "0" and controllers == "":
            files, root = ("memory.max", "memory.current"), CGROUP_ROOT
        elif "memory" in controllers.split(","):
            files, root = ("memory.limit_in_bytes", "memory.usage_in_bytes"), \
                CGROUP_ROOT / "memory"
        else:
            continue
        for folder in _groups(root, path):
            limit = _read_int(folder / files[0])
            if limit is None or limit >= _UNLIMITED_V1:
                continue
            left = max(0, limit - (_read_int(folder / files[1]) or 0))
            room = left if room is None else min(room, left)
    return room


def available_memory() -> tuple[int, str] | None:
    """The least memory this process may still use, in bytes, with what sets it; None
    when nothing is known (module docstring)."""
    found: list[tuple[int, str]] = []
    free = _meminfo()
    if free is not None:
        found.append((free, "free memory (MemAvailable)"))
    for name, field, what in (("RLIMIT_AS", "VmSize", "the address-space limit (ulimit -v)"),
                              ("RLIMIT_DATA", "VmData", "the data-size limit (ulimit -d)")):
        soft = resource.getrlimit(getattr(resource, name))[0]
        if soft != resource.RLIM_INFINITY and soft >= 0:
            found.append((max(0, soft - _status_bytes(field)), f"left under {what}"))
    group = _cgroup_room()
    if group is not None:
        found.append((group, "left under the control group's memory limit (cgroup)"))
    return min(found) if found else None


def check_rank_memory(ranks: int) -> None:
    """Refuse *ranks* virtual ranks when their estimated memory exceeds what is available.

    Raises :class:`OutOfMemoryError` (a ``MemoryError``) with the estimate and the limit; pass
    ``check_memory=False`` to :func:`bsim.simulate` (``bsim run --no-memory-check``)
    to try anyway.
    """
    room = available_memory()
    need = ranks * KIB_PER_RANK * 1024
    if room is not None and need > room[0]:
        raise OutOfMemoryError(f"{ranks:,} virtual ranks need about {need / 2**30:,.1f} GiB "
                          f"({KIB_PER_RANK} KiB each) but {room[0] / 2**30:,.1f} GiB is "
                          f"{room[1]}; use fewer ranks or more host processes "
                          f"(docs/distributed.md), or check_memory=False (bsim run "
                          f"--no-memory-check) to try anyway")


def create_ranks(rank_class: Callable[[int, Any], T], engine: Any, n: int) -> list[T]:
    """The engine's *n* virtual ranks, ``rank_class(r, engine)``.  Made here, in a module
    that always runs as Python (the engine's may be compiled, and a compiled frame shows
    no locals): a ``MemoryError`` on the way says how many were made (:func:`_how_far`)."""
    return [rank_class(r, engine) for r in range(n)]


def start_ranks(ranks: list[Any], greenlet_class: Callable[..., Any], program: Any,
                main: Any) -> None:
    """Give each of *ranks* its greenlet running *program* and wake it at t = 0 (as
    :func:`create_ranks`, here for :func:`_how_far`)."""
    for vr in ranks:
        greenlet_class(vr, program, main)
        vr.wake(0.0)


def _how_far(tb: TracebackType | None) -> str:
    """``after N ranks were created`` or ``at simulated t=... s``, from the frames of
    the traceback *tb* (the engine's, or :func:`create_ranks` and :func:`start_ranks`)."""
    created, now = None, None
    while tb is not None:
        frame = tb.tb_frame
        local = frame.f_locals
        if frame.f_code.co_filename.endswith(os.path.join("engine", "host_memory.py")):
            if frame.f_code.co_name == "<listcomp>" and "r" in local:
                created = local["r"]
            elif frame.f_code.co_name == "start_ranks" and "vr" in local:
                created = getattr(local["vr"], "rank", None)
        for name in ("engine", "self"):
            value = getattr(local.get(name), "_now", None)
            if isinstance(value, float) and hasattr(local.get(name), "ranks"):
                now = value if now is None else max(now, value)
        clock = getattr(local.get("vr"), "clock", None)   # a rank's clock runs ahead
        if isinstance(clock, float) and hasattr(local.get("vr"), "greenlet"):
            now = clock if now is None else max(now, clock)
        tb = tb.tb_next
    if created is not None:
        return f"after {created:,} ranks were created"
    return f"at simulated t={now!r} s" if now is not None else "before the run started"


def out_of_memory(exc: MemoryError, ranks: int) -> OutOfMemoryError:
    """The one-line error of *exc*, a ``MemoryError`` in a run of *ranks* ranks: how far
    the run got, the estimate, what to try."""
    room = available_memory()
    limit = (f"; {room[0] / 2**30:,.1f} GiB is {room[1]} now" if room is not None else "")
    return OutOfMemoryError(
        f"out of memory {_how_far(exc.__traceback__)} of a {ranks:,}-rank run, "
        f"estimate {KIB_PER_RANK} KiB per rank ({ranks * KIB_PER_RANK / 2**20:,.1f} GiB "
        f"in all){limit}; {TRY}")


def reports_out_of_memory(simulate: F) -> F:
    """Decorate ``simulate(main, ranks, ...)``: a ``MemoryError`` from it becomes
    :func:`out_of_memory`'s :class:`OutOfMemoryError`."""
    @functools.wraps(simulate)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return simulate(*args, **kwargs)
        except MemoryError as exc:
            if isinstance(exc, OutOfMemoryError):   # (the check before the run)
                raise
            raise out_of_memory(exc, _ranks(args, kwargs)) from exc
    return cast(F, wrapper)


def _ranks(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    value = args[1] if len(args) > 1 else kwargs.get("ranks", 0)
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0
