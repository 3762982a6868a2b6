"""Build the PMPI recording library (``c/bsim_record.c`` and its Fortran bindings,
``c/bsim_record_f.c``) for the MPI a program uses.

The library must be compiled against the same MPI as the program it traces (MPICH and
Open MPI differ in handles and ABI), so it is built with that MPI's own compiler wrapper:
the ``mpicc`` beside the launcher the command starts with (``.venv/bin/mpiexec`` ->
``.venv/bin/mpicc``, the ``mpich`` wheel's; ``/usr/bin/mpiexec`` -> ``/usr/bin/mpicc``,
Debian's), else ``mpicc`` on the ``PATH``, or the one named.  The shared object is cached
in ``$BSIM_CACHE/record`` (default ``~/.cache/bsim/record``) under a hash of the sources,
the wrapper's path and its compile line, so a change of MPI builds anew.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

__all__ = ["SOURCE", "SOURCES", "find_mpicc", "build_library", "cache_dir"]

SOURCE = Path(__file__).with_name("c") / "bsim_record.c"
SOURCES = (SOURCE, SOURCE.with_name("bsim_record_f.c"))
_LAUNCHERS = ("mpiexec", "mpirun", "mpiexec.hydra", "mpirun.openmpi", "mpiexec.openmpi",
              "mpirun.mpich", "mpiexec.mpich", "orterun")


def cache_dir() -> Path:
    """Where built libraries are kept."""
    return Path(os.environ.get("BSIM_CACHE", Path.home() / ".cache" / "bsim")) / "record"


def find_mpicc(command: list[str], mpicc: str | None = None) -> str:
    """The compiler wrapper of the MPI that *command* launches (see the module's text).

    Raises :class:`FileNotFoundError` naming what was looked for when there is none.
    """
    if mpicc:
        found = shutil.which(mpicc)
        if found is None:
            raise FileNotFoundError(f"bsim record: --mpicc {mpicc}: not found")
        return found
    if command and Path(command[0]).name in _LAUNCHERS:
        launcher = shutil.which(command[0])
        if launcher is not None:
            for name in ("mpicc", "mpicc.openmpi", "mpicc.mpich"):
                beside = Path(launcher).parent / name
                if beside.exists():
                    return str(beside)
    found = shutil.which("mpicc")
    if found is None:
        raise FileNotFoundError("bsim record: no mpicc beside the launcher nor on the PATH: "
                                "install the MPI's development files (the mpich wheel has "
                                "one; Debian: libmpich-dev or libopenmpi-dev) or pass --mpicc")
    return found


def _compile_line(mpicc: str) -> str:
    """What the wrapper runs (MPICH: ``-show``; Open MPI: ``-showme``)."""
    for flag in ("-show", "-showme"):
        out = subprocess.run([mpicc, flag], capture_output=True, text=True)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    return ""


def build_library(mpicc: str) -> Path:
    """The recording library built with *mpicc* (cached; built on first use).

    Raises :class:`RuntimeError` with the compiler's message when the build fails.
    """
    digest = hashlib.sha256(b"".join(s.read_bytes() for s in SOURCES)
                            + os.path.realpath(mpicc).encode()
                            + _compile_line(mpicc).encode()).hexdigest()[:16]
    lib = cache_dir() / f"libbsim_record-{digest}.so"
    if lib.exists():
        return lib
    lib.parent.mkdir(parents=True, exist_ok=True)
    tmp = lib.with_suffix(f".{os.getpid()}.tmp")
    out = subprocess.run([mpicc, "-O2", "-shared", "-fPIC", *map(str, SOURCES), "-o", str(tmp)],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"bsim record: building {SOURCE.name} with {mpicc} failed: "
                           f"{out.stderr.strip()[-800:]}")
    tmp.replace(lib)
    return lib
