"""The ``bsim`` command's host processes under ``mpiexec -n K``: which one speaks.

Every host process of a distributed run (``docs/distributed.md``) parses the same
command line and, mostly, fails alike; host process 0 says so, once, while every
process exits with the same status:

* :func:`first_process`: False in a process of an MPI job that is not its rank 0,
  from ``COMM_WORLD`` once MPI is initialised, else from the launcher's environment
  (argument errors, calibration errors: before MPI is initialised);
* :func:`report`: the end of a distributed ``bsim run`` that failed.  A Ctrl-C is
  one line, ``bsim: interrupted at simulated t=... s (host process H's clock),
  nothing written`` (status 130): host process 0 prints it when it got the
  interrupt or learnt that another one did, and tells the others so; a host
  process that got a SIGINT of its own, and hears nothing from host process 0
  within :data:`NOTICE_WAIT` seconds, prints it itself.  The process then ends at
  once (``os._exit(130)``; ``MPI_Finalize`` would wait for a host process still at a
  window exchange, up to ``BSIM_HOST_TIMEOUT``), and the launcher ends the others.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import time
from typing import Any

__all__ = ["first_process", "engine_time", "report", "RANK_VARIABLES", "NOTICE_WAIT"]

# the launchers' rank of this process: MPICH's Hydra and Intel MPI, PMIx (Open MPI 5),
# Open MPI, MVAPICH, Slurm's srun
RANK_VARIABLES = ("PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK", "MV2_COMM_WORLD_RANK",
                  "SLURM_PROCID")

NOTICE_TAG = 0x5B53    # host process 0 -> the others: "the interrupt is reported"
NOTICE_WAIT = 2.0      # seconds a host process waits for that notice before it speaks
# the failure another host process reports when a Ctrl-C stopped its window
_REMOTE_CTRL_C = re.compile(r"^host process (\d+) failed: (?:KeyboardInterrupt|Terminated)\b")


def first_process() -> bool:
    """False only in a process of an MPI job that is not its rank 0 (``COMM_WORLD``'s rank
    once mpi4py has initialized MPI, else the launcher's variable)."""
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is not None and getattr(mpi, "Is_initialized", None) is not None:
        try:
            if mpi.Is_initialized() and not mpi.Is_finalized():
                return int(mpi.COMM_WORLD.Get_rank()) == 0
        except Exception:   # noqa: BLE001 - a broken MPI must not hide the error line
            pass
    for name in RANK_VARIABLES:
        value = os.environ.get(name, "").strip()
        if value.isdigit():
            return int(value) == 0
    return True


def engine_time(exc: BaseException) -> float | None:
    """The simulated time of the engine *exc* went through (its ``sim_time``, else the
    current time of the deepest engine in its traceback: a distributed run's window loop
    or exchange), None when it was raised outside a simulation."""
    when = getattr(exc, "sim_time", None)
    if when is not None:
        return float(when)
    tb = exc.__traceback__
    while tb is not None:
        engine = tb.tb_frame.f_locals.get("engine")
        now = getattr(engine, "_now", None)
        if isinstance(now, (int, float)) and not isinstance(now, bool):
            when = float(now)
        tb = tb.tb_next
    return when


def _ctrl_c(exc: BaseException) -> tuple[bool, int | None]:
    """``(True, host)`` for a Ctrl-C: this process's own (*host* None) or the one another
    host process reported (*host* its rank); ``(False, None)`` for anything else."""
    from ..engine.failures import program_interrupt
    from ..errors import SimulationError
    if isinstance(exc, KeyboardInterrupt):
        return program_interrupt(exc) is None, None
    match = _REMOTE_CTRL_C.match(str(exc)) if isinstance(exc, SimulationError) else None
    return (True, int(match.group(1))) if match else (False, None)


def _told(comm: Any) -> bool:
    """Whether host process 0 says, within :data:`NOTICE_WAIT` s, that it reports it."""
    deadline = time.monotonic() + NOTICE_WAIT
    while time.monotonic() < deadline:
        try:
            if comm.iprobe(source=0, tag=NOTICE_TAG):
                return True
        except Exception:   # noqa: BLE001 - MPI is going down: speak
            return False
        time.sleep(0.01)
    return False


def _tell_the_others(comm: Any, hosts: int) -> None:
    for h in range(1, hosts):
        try:
            comm.isend(b"", dest=h, tag=NOTICE_TAG)
        except Exception:   # noqa: BLE001 - a host that is gone needs no notice
            pass


def report(exc: BaseException, ns: argparse.Namespace, host: dict[str, Any]) -> int:
    """The end of a distributed run that failed with *exc* on host process
    ``host["rank"]`` of ``host["size"]`` (communicator ``host["comm"]``): one line from
    one host process, the same exit status on all (:mod:`bsim.cli.failures`)."""
    from .failures import debug_enabled
    from .signals import exit_status, what_happened
    from .failures import report as report_once
    me = int(host["rank"])
    ctrl_c, remote = _ctrl_c(exc)
    if not ctrl_c or debug_enabled(ns):
        return report_once(exc, ns, quiet=bool(me))
    when = engine_time(exc)
    who = f" (Ctrl-C on host process {remote})" if remote is not None else ""
    started = bool((getattr(ns, "run_state", None) or {}).get("started"))
    at = (f" at simulated t={when!r} s (host process {me}'s clock)" if when is not None
          else " (simulated time unknown: not in the simulation)" if started
          else " before the simulation started")
    line = f"bsim: {what_happened(exc)}{who}{at}, nothing written"
    comm = host.get("comm")
    if me == 0:
        print(line, file=sys.stderr, flush=True)
        if comm is not None:
            _tell_the_others(comm, int(host["size"]))
    elif comm is None or not _told(comm):
        print(line, file=sys.stderr, flush=True)
    if comm is not None:   # end the job now: MPI_Finalize would wait for the host
        for stream in (sys.stdout, sys.stderr):   # processes still at a window exchange
            with contextlib.suppress(ValueError, OSError):
                stream.flush()
        os._exit(exit_status(exc))   # (the launcher then ends the others)
    return exit_status(exc)
