"""SimGrid's own trace replay, for checking ``bsim replay`` of time-independent traces.

:func:`record_ti` runs one of ``c/*.c`` under ``smpirun -trace-ti`` on a
:class:`~.smpi.Platform` and returns the trace's index file; :func:`replay_smpi` replays a
trace with SimGrid's ``smpireplaymain`` (``smpirun -replay``) on the same platform and
returns its simulated time (read from the replay's ``Simulation time`` line, printed at
full precision through the log layout ``%.12r``).  Both use :data:`~.smpi.SMPI_CONFIG`'s
physics; the replay simulates the compute lines (``smpi/simulate-computation`` stays on:
``compute F`` runs ``F`` flops at the host's 1 Gflop/s).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from .smpi import SMPI_CONFIG, Platform, _binary

__all__ = ["record_ti", "replay_smpi", "REPLAY_MAIN"]

REPLAY_MAIN = "/usr/lib/x86_64-linux-gnu/simgrid/smpireplaymain"
_PHYSICS = tuple(c for c in SMPI_CONFIG if "simulate-computation" not in c and "--log" not in c)


def _files(platform: Platform, nranks: int, where: Path) -> tuple[Path, Path]:
    plat = where / "platform.xml"
    plat.write_text(platform.xml())
    hosts = where / "hosts"
    hosts.write_text("".join(f"node-{r % platform.nodes}\n" for r in range(nranks)))
    return plat, hosts


def record_ti(program: str, platform: Platform, nranks: int, nbytes: int, iters: int,
              compute: float, where: Path, cfg: tuple[str, ...] = (),
              extra: tuple[str, ...] = ()) -> Path:
    """Trace ``c/PROGRAM.c`` with ``smpirun -trace-ti`` into *where*; the index file."""
    plat, hosts = _files(platform, nranks, where)
    index = where / "trace.ti"
    out = subprocess.run(["smpirun", "-np", str(nranks), "-platform", str(plat), "-hostfile",
                          str(hosts), "-trace-ti", f"--cfg=tracing/filename:{index.name}",
                          *SMPI_CONFIG, *(f"--cfg={c}" for c in cfg), str(_binary(program)),
                          str(nbytes), str(iters), repr(compute), *extra],
                         capture_output=True, text=True, timeout=600, cwd=where)
    if out.returncode != 0 or not index.exists():
        raise RuntimeError(f"smpirun -trace-ti {program} failed ({out.returncode}): "
                           f"{out.stderr.strip()[-500:]}")
    return index


def replay_smpi(index: Path, platform: Platform, nranks: int,
                cfg: tuple[str, ...] = ()) -> float:
    """SimGrid's replay of the trace *index* on *platform*: its simulated seconds."""
    where = index.parent
    plat, hosts = _files(platform, nranks, where)
    out = subprocess.run(["smpirun", "-np", str(nranks), "-platform", str(plat), "-hostfile",
                          str(hosts), "-replay", str(index), *_PHYSICS,
                          *(f"--cfg={c}" for c in cfg), "--log=root.thres:critical",
                          "--log=smpi_replay.thres:info", "--log=smpi_replay.fmt:%.12r:%m%n",
                          REPLAY_MAIN], capture_output=True, text=True, timeout=600, cwd=where)
    found = re.search(r"^(\S+):Simulation time", out.stdout + out.stderr, re.M)
    if out.returncode != 0 or found is None:
        raise RuntimeError(f"smpirun -replay {index} failed ({out.returncode}): "
                           f"{(out.stderr or out.stdout).strip()[-500:]}")
    return float(found.group(1))
