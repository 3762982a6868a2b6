"""Targets of ``bsim run``: a registered skeleton name or a Python file.

A file's top-level code runs once per virtual rank, as ``mpiexec -n N python
FILE`` would run it: each rank executes the compiled module in a fresh
namespace with ``__name__ == "__main__"``.  Inside the simulation
``from mpi4py import MPI`` resolves to ``bsim.MPI`` (see
:func:`bsim.simulate.mpi4py_shim`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Target", "load_target"]


@dataclass
class Target:
    """What to run: a callable, its keyword parameters, and its natural rank count."""

    name: str
    main: Callable[..., Any]
    params: dict[str, Any]
    ranks: int | None


def _file_program(path: Path, argv: list[str]) -> Callable[[], None]:
    source = path.read_text(encoding="utf-8")
    code = compile(source, str(path), "exec")
    folder = str(path.parent)

    def run_file() -> None:
        namespace = {"__name__": "__main__", "__file__": str(path), "__builtins__": __builtins__}
        saved_argv = sys.argv
        sys.argv = [str(path), *argv]
        try:
            exec(code, namespace)
        finally:
            sys.argv = saved_argv

    if folder not in sys.path:
        sys.path.insert(0, folder)
    return run_file


def load_target(target: str, params: dict[str, Any], argv: list[str] | None = None) -> Target:
    """Resolve *target* (skeleton name or ``.py`` path) with *params* (``--param k=v``)."""
    path = Path(target)
    if target.endswith(".py") or os.sep in target or path.is_file():
        if not path.is_file():
            raise FileNotFoundError(f"no such program file: {target}")
        if params:
            raise ValueError(f"--param applies to registered skeletons; {target} is a file "
                             f"(pass arguments after --)")
        return Target(path.name, _file_program(path.resolve(), argv or []), {}, None)
    from skeletons import registry
    skel = registry.get(target)
    resolved = skel.resolve(params)
    ranks = skel.ranks(resolved) if skel.ranks is not None else None
    return Target(skel.name, skel.main, resolved, ranks)
