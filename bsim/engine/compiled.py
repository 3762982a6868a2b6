"""The modules that run compiled, and the switch that runs them as Python.

``setup.py`` compiles the modules named in :data:`COMPILED` with Cython when the install
has a C compiler.  Python imports an extension module in preference to the ``.py`` file
of the same name; the ``.py`` files stay the reference and the fallback, and both give the
same results bit for bit (``tests/test_compiled_modules.py``).  Two groups:

* :data:`FLUID`, the fluid contention layer, whose loops over flows and links dominate
  contention-aware runs;
* :data:`TYPED`, the hot path of every run: the engine's state and event loop, virtual
  ranks, requests, messages and matching, the protocols' per-message steps, the flattened
  point-to-point calls and ``Waitall``, and the collectives' rules (an instance's
  arrivals and completion).  Written in Cython's pure-Python mode: a ``.pxd``
  beside each ``.py`` makes its classes extension types with C fields, and
  ``@cython.locals`` (a no-op without Cython, ``bsim/engine/pure_cython.py``) types the
  locals of its hot functions.  The modules above them that a collective call goes through
  (its MPI calls, requests, communicators, placeholder and vector buffers, cost source) are
  compiled as plain Python made into C, about a quarter fewer instructions a collective,
  but for ``Request`` and the placeholder ``Buffer``, extension types (``request.pxd``,
  ``placeholder.pxd``) so that they are made from the free lists of ``RequestState`` and
  ``BufInfo`` (``@cython.freelist``, as ``Message``); the communicators' per-rank
  methods and the contention wait (``settle_in_turn``) have a ``.pxd`` of cimports alone,
  so that ``@cython.locals`` reads the rank as a C type.  The
  compiled modules read each other's C fields, so they run compiled all together or not
  at all.

``BSIM_PURE_PYTHON=1`` in the environment makes a process import the ``.py`` files even
when the extensions are built (to profile them, or to compare the two); it must be set
before bsim is imported.  A source edited after its extension was built is run as Python
too, with a warning: the extension holds the old code (``setup.py`` records the digest of
each source it compiled, the ``.py`` and the ``.pxd`` beside it, in :data:`SOURCES_FILE`;
file times would not do, as a wheel's install gives every file the time it was unpacked).
One stale module of :data:`TYPED`, or one that did not compile, sends the whole group to
Python.
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
from pathlib import Path
from types import ModuleType

__all__ = ["COMPILED", "FLUID", "TYPED", "SOURCES_FILE", "compiled_modules",
           "honour_pure_python", "source_digest"]

# setup.py reads these (it loads this file alone) to know what to compile
FLUID = ("bsim.engine.fabric", "bsim.engine.fabric_routes", "bsim.engine.fabric_solver")
TYPED = ("bsim.mpi.data.buffer_info", "bsim.engine.engine_state", "bsim.engine.request_state",
         "bsim.engine.rank", "bsim.engine.matching", "bsim.engine.protocol_state",
         "bsim.engine.protocols", "bsim.engine.core", "bsim.mpi.requests.multiple_completions",
         "bsim.mpi.p2p.fast_path", "bsim.mpi.p2p.calls", "bsim.engine.collective_rules",
         "bsim.mpi.collectives.calls", "bsim.mpi.collectives.exchanges",
         "bsim.mpi.requests.request", "bsim.mpi.comms.comm_identity", "bsim.mpi.comms.comm",
         "bsim.mpi.data.placeholder", "bsim.mpi.data.buffers", "bsim.engine.collective_costs",
         "bsim.engine.settle_in_turn", "bsim.mpi.data.vector_buffers",
         "bsim.mpi.collectives.block_checks")
COMPILED = FLUID + TYPED
# written by setup.py beside the extensions: {module name: SHA-256 of the source compiled}
SOURCES_FILE = "compiled_sources.json"
_BSIM = Path(__file__).resolve().parents[1]   # the bsim package's folder


def compiled_modules() -> list[str]:
    """The names of :data:`COMPILED` that this process runs compiled (imported ones only)."""
    return [name for name in COMPILED
            if isinstance(getattr(sys.modules.get(name), "__loader__", None),
                          importlib.machinery.ExtensionFileLoader)]


def source_digest(path: str | os.PathLike[str]) -> str:
    """SHA-256 (hex) of a module's source as ``setup.py`` records it at the build: the
    ``.py`` file's bytes, then the ``.pxd`` file's beside it if there is one (its C types
    decide what the compiled code does)."""
    digest = hashlib.sha256(Path(path).read_bytes())
    pxd = Path(path).with_suffix(".pxd")
    if pxd.exists():
        digest.update(b"\0" + pxd.read_bytes())
    return digest.hexdigest()


class _CompiledFinder(importlib.abc.MetaPathFinder):
    """Finds a :data:`COMPILED` module as its ``.py`` file when it must run as Python:
    under ``BSIM_PURE_PYTHON=1``, or when its source is not the one its extension was
    built from (a developer's edit: the stale extension would run the old code), or, for
    :data:`TYPED`, when that holds for any module of the group or one was not built.  The
    build records each source's digest in :data:`SOURCES_FILE` beside the extensions; an
    extension without that record is trusted.  Otherwise the module is left to Python's
    own finder, which prefers the extension.  *root*: the bsim package's folder, where
    the modules of :data:`TYPED` are looked for."""

    def __init__(self, pure: bool, root: str | os.PathLike[str] = _BSIM) -> None:
        self.pure = pure
        self.root = Path(root)
        self.stale: list[str] = []
        self._typed_as_python: bool | None = None   # decided at the first import of TYPED

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
                if fullname in TYPED:
                    if not self.typed_as_python():
                        return None   # Python's own finder: the extension
                elif self._built(fullname, folder) != "stale":
                    return None   # Python's own finder: the extension, or the .py
                else:
                    warnings.warn(f"bsim: {source} changed after it was compiled; running "
                                  "it as Python (reinstall to compile it again: pip install "
                                  "-e .)", RuntimeWarning, stacklevel=2)
            return importlib.util.spec_from_file_location(fullname, source)
        return None

    def typed_as_python(self) -> bool:
        """Whether :data:`TYPED` runs as Python: not built (silently), or built in part or
        from other sources (with a warning naming them)."""
        if self._typed_as_python is None:
            states = {name: self._built(name, str(self.root.joinpath(*name.split(".")[1:-1])))
                      for name in TYPED}
            built = [s for s in states.values() if s != "none"]
            self._typed_as_python = len(built) < len(states) or "stale" in built
            if built and self._typed_as_python:
                odd = [f"{name} ({'not built' if s == 'none' else 'changed since built'})"
                       for name, s in states.items() if s != "current"]
                warnings.warn(f"bsim: the hot path's compiled modules run together, and "
                              f"{', '.join(odd)}: running them all as Python (reinstall to "
                              f"compile them again: pip install -e .)", RuntimeWarning,
                              stacklevel=3)
        return self._typed_as_python

    def _built(self, fullname: str, folder: str) -> str:
        """``"none"`` (no extension in *folder*), ``"current"`` (built from this source, or
        no record says otherwise) or ``"stale"`` (built from another source)."""
        leaf = fullname.rpartition(".")[2]
        if not any(os.path.exists(os.path.join(folder, leaf + suffix))
                   for suffix in importlib.machinery.EXTENSION_SUFFIXES):
            return "none"
        source = os.path.join(folder, leaf + ".py")
        recorded = _recorded(folder).get(fullname)
        if recorded is None or recorded == source_digest(source):
            return "current"
        self.stale.append(source)
        return "stale"


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
