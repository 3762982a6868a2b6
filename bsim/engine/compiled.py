"""The engine's modules that run compiled, and the switch that runs them as Python.

``setup.py`` compiles the modules named in :data:`COMPILED` with Cython, unchanged, when
the install has a C compiler: the fluid contention layer, whose loops over flows and
links dominate contention-aware runs.  Python imports an extension module in preference
to the ``.py`` file of the same name; the ``.py`` files stay the reference and the
fallback, and both give the same results bit for bit (``tests/test_compiled_modules.py``).

``BSIM_PURE_PYTHON=1`` in the environment makes a process import the ``.py`` files even
when the extensions are built (to profile them, or to compare the two); it must be set
before bsim is imported.  A ``.py`` file edited after its extension was built is run as
Python too, with a warning: the extension holds the old code (``setup.py`` records the
digest of each source it compiled in :data:`SOURCES_FILE`; file times would not do, as
a wheel's install gives every file the time it was unpacked).  The digest is of the ``.py``
only: a ``.pxd`` beside it (the fluid layer's C types) changes no result,
and an edit to it takes a reinstall to take effect.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType

__all__ = ["COMPILED", "SOURCES_FILE", "compiled_modules", "honour_pure_python", "source_digest"]

# setup.py reads this tuple (as text) to know what to compile
COMPILED = ("bsim.engine.fabric", "bsim.engine.fabric_routes", "bsim.engine.fabric_solver")
# written by setup.py beside the extensions: {module name: SHA-256 of the source compiled}
SOURCES_FILE = "compiled_sources.json"


def compiled_modules() -> list[str]:
    """The names of :data:`COMPILED` that this process runs compiled (imported ones only)."""
    return [name for name in COMPILED
            if isinstance(getattr(sys.modules.get(name), "__loader__", None),
                          importlib.machinery.ExtensionFileLoader)]


def source_digest(path: str | os.PathLike[str]) -> str:
    """SHA-256 (hex) of a source file's bytes, as ``setup.py`` records it at the build."""
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


class _CompiledFinder(importlib.abc.MetaPathFinder):
    """Finds a :data:`COMPILED` module as its ``.py`` file when it must run as Python:
    under ``BSIM_PURE_PYTHON=1``, or when the ``.py`` is not the source its extension was
    built from (a developer's edit: the stale extension would run the old code).  The
    build records each source's digest in :data:`SOURCES_FILE` beside the extensions; an
    extension without that record is trusted.  Otherwise the module is left to Python's
    own finder, which prefers the extension."""

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
                if not any(os.path.exists(ext) for ext in built):
                    return None   # Python's own finder: the .py
                recorded = _recorded(folder).get(fullname)
                if recorded is None or recorded == source_digest(source):
                    return None   # Python's own finder: the extension
                self.stale.append(source)
                warnings.warn(f"bsim: {source} changed after it was compiled; running it as "
                              "Python (reinstall to compile it again: pip install -e .)",
                              RuntimeWarning, stacklevel=2)
            return importlib.util.spec_from_file_location(fullname, source)
        return None


def _recorded(folder: str) -> dict[str, str]:
    """Module name -> source digest at the build, from *folder*'s :data:`SOURCES_FILE`."""
    try:
        with open(os.path.join(folder, SOURCES_FILE), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def honour_pure_python() -> None:
    """Import :data:`COMPILED` from their ``.py`` files under ``BSIM_PURE_PYTHON=1`` or
    when an extension was built from another source; from the extensions otherwise."""
    if not any(isinstance(f, _CompiledFinder) for f in sys.meta_path):
        pure = os.environ.get("BSIM_PURE_PYTHON", "") not in ("", "0")
        sys.meta_path.insert(0, _CompiledFinder(pure))
