"""Each virtual rank its own copy of the program's own modules, as separate processes have.

All virtual ranks share one interpreter, so without care a module imported by
the program holds one set of globals for every rank: one rank's setting is read
by another.  SMPI privatizes C globals per rank for the same reason.  Here a
module is *private* when it is first imported while a rank runs (not before the
simulation) from a file of the program's own -- not the standard library, not
an installed package (``sys.prefix``, ``site-packages``), not bsim, netmodels or
the bundled skeletons.  Each rank that imports it executes it afresh and keeps
its copy; the engine installs the running rank's copies in ``sys.modules``
before switching into it (``Engine.run_until``), so ``import`` and pickle find
that rank's module.

Cost: one length check of ``sys.modules`` per switch while no private module
exists; once one does, a dictionary update per private module per switch, and
per rank the memory of its copies (the module's globals, functions and
classes: a few KiB to a few hundred KiB per rank for typical modules;
measured in ``docs/architecture.md``).  Opt out with ``simulate(...,
private_modules=False)`` / ``bsim run --shared-modules`` for very large runs;
modules imported before the simulation starts are shared in any case.

The program's main file is a private module too, ``__main__``: a file program
(``bsim run FILE``, :mod:`bsim.cli.targets`) runs in a fresh main module per
rank, registered with :meth:`PrivateModules.set_main`, so a class or function
it defines pickles by reference (``__main__.Particle``) on the sender and
unpickles as the receiver's own, as under ``mpiexec``.  With shared modules
(``programs=False``) only ``__main__`` (and ``__worker__``, mpi4py.futures'
copy of it in a worker) is still swapped per rank.  mpi4py's pure-Python modules that a
rank imports during the run (``mpi4py.futures``, ``mpi4py.util``) are private in either
case: their globals are per-process state (``mpi4py.futures``' shared pool).  The run's
own ``__main__`` (bsim's, or the script that called :func:`bsim.simulate`) is
back in ``sys.modules`` at each switch to a rank without one and after the run.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
import sysconfig
import types
from typing import Any

from .engine_state import ModuleWatch

__all__ = ["PrivateModules"]

_WORKER = "__worker__"   # mpi4py.futures' copy of the main module in a worker: per rank


def _mpi4py_python(name: str) -> bool:
    """mpi4py's pure-Python modules (``mpi4py.futures``, ``mpi4py.util.pkl5``, ...) as a
    run loads them on bsim's MPI: per rank, as each process has its own (their globals
    hold per-process state: mpi4py.futures' shared pool, its executors' registry)."""
    return name.startswith("mpi4py.") and name not in ("mpi4py.MPI", "mpi4py.rc")


def _shared_roots() -> tuple[str, ...]:
    """Directories whose modules are never private (stdlib, installs, bsim's own)."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.add(path)
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # bsim/
    top = os.path.dirname(here)
    roots.update({here, os.path.join(top, "netmodels"), os.path.join(top, "skeletons")})
    return tuple(os.path.join(os.path.realpath(r), "") for r in roots if r)


class _CompiledOnce(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports a private module a rank has not imported yet from the code object the
    first rank compiled: each rank executes the module, none compiles it again."""

    def __init__(self) -> None:
        self.code: dict[str, tuple[types.CodeType, importlib.machinery.ModuleSpec]] = {}

    def remember(self, name: str, module: types.ModuleType) -> None:
        spec = getattr(module, "__spec__", None)
        loader = getattr(spec, "loader", None)
        if spec is None or name in self.code or not hasattr(loader, "get_code"):
            return
        try:
            code = loader.get_code(name)   # type: ignore[union-attr]
        except (ImportError, OSError, SyntaxError):
            return
        if code is not None:
            self.code[name] = (code, spec)

    def find_spec(self, name: str, path: Any = None, target: Any = None
                  ) -> importlib.machinery.ModuleSpec | None:
        known = self.code.get(name)
        if known is None:
            return None
        first = known[1]
        spec = importlib.machinery.ModuleSpec(
            name, self, origin=first.origin,
            is_package=first.submodule_search_locations is not None)
        if first.submodule_search_locations is not None:
            spec.submodule_search_locations = list(first.submodule_search_locations)
        spec.has_location = first.has_location
        spec.cached = first.cached
        return spec

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None   # the default module object

    def exec_module(self, module: types.ModuleType) -> None:
        exec(self.code[module.__name__][0], module.__dict__)


class PrivateModules(ModuleWatch):
    """Per-rank copies of the program's own modules, swapped in at each switch (the
    fields the event loop checks at a switch are :class:`ModuleWatch`'s)."""

    def __init__(self, programs: bool = True) -> None:
        self.programs = programs   # False: only ``__main__`` is private (--shared-modules)
        # everything imported before the run; mpi4py's Python modules never (the run's
        # mpi4py shim takes a real mpi4py.futures out, and a rank imports its own)
        self.shared: set[str] = {n for n in sys.modules if not _mpi4py_python(n)}
        self.names: set[str] = set()               # private module names seen so far
        self.by_rank: dict[int, dict[str, types.ModuleType]] = {}
        self.count = len(sys.modules)   # with main_now: leave() when either changes
        self.main_now = sys.modules.get("__main__")   # (runpy replaces __main__ in a rank)
        self._roots = _shared_roots()
        self._compiled = _CompiledOnce()
        self._synced = False
        # ranks whose sys.argv is not the run's (spawned ranks: bsim/engine/spawning.py)
        self.argv: dict[int, list[str]] = {}
        self.main_argv: list[str] = sys.argv
        self.swapping = False   # whether enter() has anything to do at a switch
        self.main: types.ModuleType | None = sys.modules.get("__main__")   # the run's

    @property
    def active(self) -> bool:
        """Whether any private module exists (then every switch swaps them)."""
        return bool(self.names)

    def is_private(self, module: Any) -> bool:
        """A module of the program's own files (see the module docstring)."""
        path = getattr(module, "__file__", None)
        if not self.programs:
            return False
        if not isinstance(path, str) or not path:
            return False
        return not os.path.realpath(path).startswith(self._roots)

    def sync(self) -> None:
        """At the first call (the run starts, the mpi4py shim is in place): count every
        module now in ``sys.modules`` as shared and take its size as the reference for
        detecting imports.  Later calls (each window of a distributed run) do nothing."""
        if self._synced:
            return
        self._synced = True
        self.shared.update(name for name in sys.modules
                           if name not in self.names and not _mpi4py_python(name))
        self.count = len(sys.modules)
        self.main_now = sys.modules.get("__main__")
        self.main = sys.modules.get("__main__")

    def set_main(self, rank: int, module: types.ModuleType) -> None:
        """Make *module* *rank*'s ``__main__`` (installed at each of its switches); the
        caller has installed it in ``sys.modules`` for the rest of the current turn."""
        self.by_rank.setdefault(rank, {})["__main__"] = module
        self.names.add("__main__")
        self.swapping = True

    def set_argv(self, rank: int, argv: list[str]) -> None:
        """Give *rank* its own ``sys.argv`` (installed at each of its switches)."""
        if not self.argv:
            self.main_argv = sys.argv
        self.argv[rank] = argv
        self.swapping = True

    def enter(self, rank: int) -> None:
        """Install *rank*'s copies (and remove the private modules it has not imported),
        and its ``sys.argv`` when some rank has its own."""
        modules = sys.modules
        mine = self.by_rank.get(rank, {})
        for name in self.names:
            module = mine.get(name)
            if module is None:
                if name == "__main__" and self.main is not None:   # a rank that did not
                    modules[name] = self.main                       # replace it: the run's
                else:
                    modules.pop(name, None)
            else:
                modules[name] = module
        self.count = len(modules)
        self.main_now = modules.get("__main__")
        if self.argv:
            sys.argv = self.argv.get(rank, self.main_argv)

    def leave(self, rank: int) -> None:
        """Record what *rank* imported during its turn (called when ``sys.modules`` grew)."""
        modules = sys.modules
        mine = self.by_rank.setdefault(rank, {})
        main = modules.get("__main__")
        if main is not self.main and main is not None and mine.get("__main__") is not main:
            mine["__main__"] = main   # the rank replaced __main__ (mpi4py.futures' workers)
            self.names.add("__main__")
            self.swapping = True
        for name, module in list(modules.items()):
            if name in self.shared or mine.get(name) is module:
                continue
            if module is not None and (name == _WORKER or _mpi4py_python(name)
                                       or self.is_private(module)):
                mine[name] = module
                if name not in self.names:
                    self.names.add(name)
                    self.swapping = True
                    self._compiled.remember(name, module)
                    if self._compiled not in sys.meta_path:
                        sys.meta_path.insert(0, self._compiled)
            else:
                self.shared.add(name)
        if not mine:
            del self.by_rank[rank]
        self.count = len(modules)
        self.main_now = modules.get("__main__")

    def close(self) -> None:
        """Remove every private module from ``sys.modules`` (they belong to this run)."""
        for name in self.names:
            sys.modules.pop(name, None)
        if "__main__" in self.names and self.main is not None:
            sys.modules["__main__"] = self.main
        if self.argv:
            sys.argv = self.main_argv
        if self._compiled in sys.meta_path:
            sys.meta_path.remove(self._compiled)
        self.count = len(sys.modules)
        self.main_now = sys.modules.get("__main__")
