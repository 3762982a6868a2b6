"""The engine's modules that run compiled, and the switch that runs them as Python.

``setup.py`` compiles the modules named in :data:`COMPILED` with Cython, unchanged, when
the install has a C compiler: the fluid contention layer, whose loops over flows and
links dominate contention-aware runs.  Python imports an extension module in preference
to the ``.py`` file of the same name; the ``.py`` files stay the reference and the
fallback, and both give the same results bit for bit (``tests/test_compiled_modules.py``).

``BSIM_PURE_PYTHON=1`` in the environment makes a process import the ``.py`` files even
when the extensions are built (to profile them, or to compare the two); it must be set
before bsim is imported.  A ``.py`` file edited after its extension was built is run as
Python too, with a warning: the extension holds the old code.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType

__all__ = ["COMPILED", "compiled_modules", "honour_pure_python"]

# setup.py reads this tuple (as text) to know what to compile
COMPILED = ("bsim.engine.fabric", "bsim.engine.fabric_routes", "bsim.engine.fabric_solver")


def compiled_modules() -> list[str]:
    """The names of :data:`COMPILED` that this process runs compiled (imported ones only)."""
    return [name for name in COMPILED
            if isinstance(getattr(sys.modules.get(name), "__loader__", None),
                          importlib.machinery.ExtensionFileLoader)]


class _CompiledFinder(importlib.abc.MetaPathFinder):
    """Finds a :data:`COMPILED` module as its ``.py`` file when it must run as Python:
    under ``BSIM_PURE_PYTHON=1``, or when the ``.py`` changed after the extension was
    built (a developer's edit: the stale extension would run the old code).  Otherwise
    it leaves the module to Python's own finder, which prefers the extension."""

    def __init__(self, pure: bool) -> None:
        self.pure = pure
        self.stale: list[str] = []

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in COMPILED or not path:
            return None
        leaf = fullname.rpartition(".")[2]
        for folder in path:
            source = os.path.join(folder, leaf + ".py")
            if not os.path.exists(source):
                continue
            if not self.pure:
                built = [os.path.join(folder, leaf + suffix)
                         for suffix in importlib.machinery.EXTENSION_SUFFIXES]
                built = [ext for ext in built if os.path.exists(ext)]
                if not built or os.stat(built[0]).st_mtime >= os.stat(source).st_mtime:
                    return None   # Python's own finder: the extension, or the .py
                self.stale.append(source)
                warnings.warn(f"bsim: {source} changed after it was compiled; running it as "
                              "Python (reinstall to compile it again: pip install -e .)",
                              RuntimeWarning, stacklevel=2)
            return importlib.util.spec_from_file_location(fullname, source)
        return None


def honour_pure_python() -> None:
    """Import :data:`COMPILED` from their ``.py`` files under ``BSIM_PURE_PYTHON=1`` or
    when an extension is older than its source; from the extensions otherwise."""
    if not any(isinstance(f, _CompiledFinder) for f in sys.meta_path):
        pure = os.environ.get("BSIM_PURE_PYTHON", "") not in ("", "0")
        sys.meta_path.insert(0, _CompiledFinder(pure))
