"""``bsim record``: run an unmodified MPI program with the recording library preloaded.

The library (:mod:`.build`) is loaded with ``LD_PRELOAD`` into every rank the launcher
starts (MPICH's Hydra and Open MPI pass the environment to local ranks), writes raw
per-rank files into a temporary directory (``BSIM_TRACE_DIR``), and :mod:`.rawlog` reads
them.  The trace is written as OTF2 (``*.otf2``: :mod:`.otf2io`, the ``otf2`` package)
or bsim's JSON (any other name); the raw files are kept with *keep_raw*.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from .build import build_library, find_mpicc
from .model import Trace
from .rawlog import read_raw

__all__ = ["record", "write_trace"]


def write_trace(trace: Trace, out: str | Path) -> Path:
    """Write *trace* to *out*: OTF2 when it ends in ``.otf2``, else JSON."""
    path = Path(out)
    if path.suffix == ".otf2":
        from .otf2io import write_otf2
        return write_otf2(trace, path)
    trace.to_json(path)
    return path


def record(command: list[str], out: str | Path, mpicc: str | None = None,
           keep_raw: str | Path | None = None, timeout: float | None = None,
           compute_clock: str = "wall") -> Trace:
    """Run *command* (``["mpiexec", "-n", "4", "./app", ...]``) recording its MPI calls;
    write the trace to *out* and return it.

    The real run's wall time (the command's, measured here, and the ranks' own from
    ``MPI_Init`` to ``MPI_Finalize``) goes into ``trace.measured``.  *compute_clock*
    ``"cpu"``: compute between calls is the thread's CPU seconds, not wall seconds (the
    library reads ``CLOCK_THREAD_CPUTIME_ID`` at each call's enter and leave).  Raises
    :class:`RuntimeError` when the command fails (its exit status and last output).
    """
    if not command:
        raise ValueError("bsim record: no command (usage: bsim record -o T.otf2 -- "
                         "mpiexec -n N ./app ARGS)")
    wrapper = find_mpicc(command, mpicc)
    lib = build_library(wrapper)
    with tempfile.TemporaryDirectory(prefix="bsim-record-") as raw:
        env = dict(os.environ)
        env["BSIM_TRACE_DIR"] = raw
        if compute_clock not in ("wall", "cpu"):
            raise ValueError(f"bsim record: compute clock {compute_clock!r}: wall or cpu")
        env["BSIM_RECORD_CPU"] = "1" if compute_clock == "cpu" else "0"
        env["LD_PRELOAD"] = " ".join(x for x in (str(lib), env.get("LD_PRELOAD", "")) if x)
        t0 = time.perf_counter()
        run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
        wall = time.perf_counter() - t0
        if run.returncode != 0:
            raise RuntimeError(f"bsim record: {' '.join(command)} exited with status "
                               f"{run.returncode}: {(run.stderr or run.stdout).strip()[-800:]}")
        trace = read_raw(raw)
        if keep_raw is not None:
            shutil.copytree(raw, keep_raw, dirs_exist_ok=True)
    trace.measured.update({"command": command, "command_wall": wall, "mpicc": wrapper,
                           "library": str(lib), "stdout": run.stdout[-4000:]})
    write_trace(trace, out)
    return trace
