"""Build bsim; compile its hot modules with Cython where a C compiler is present.

The modules in ``bsim.engine.compiled.COMPILED`` are plain Python and stay the reference.
When Cython and a C compiler are available (``pip install`` fetches Cython into its build
environment), each is also compiled to an extension module of the same name, which Python
imports in preference to the ``.py`` file; the ``.pxd`` beside a module gives its classes
and locals C types (Cython's pure-Python mode).  Two groups: the fluid contention layer
(contention-aware runs spend about 28% less host time, ``docs/benchmarks.md``, ninth
sitting) and the typed hot path of every run (``docs/benchmarks.md``, "The typed hot
path"); both give the same results bit for bit (``tests/test_compiled_modules.py``,
``tests/test_typed_hot_path.py``).  Without a
compiler the build goes on and bsim runs the pure modules (the extensions are optional);
the environment variable ``BSIM_PURE_PYTHON=1`` makes a run use the ``.py`` files even
when the extensions are built (``bsim/engine/compiled.py``); ``BSIM_NO_COMPILE=1`` at
install time skips the compilation.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from types import ModuleType

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


def compiled_spec() -> ModuleType:
    """``bsim/engine/compiled.py`` loaded alone (the standard library is all it imports;
    the build environment has none of bsim's dependencies, so bsim is not imported)."""
    path = Path(__file__).with_name("bsim").joinpath("engine", "compiled.py")
    spec = importlib.util.spec_from_file_location("_bsim_compiled", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


COMPILED_SPEC = compiled_spec()


def extensions() -> list[Extension]:
    """The compiled twins of ``COMPILED`` (none without Cython or with BSIM_NO_COMPILE)."""
    if os.environ.get("BSIM_NO_COMPILE"):
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        return []
    exts = cythonize([Extension(name, [name.replace(".", "/") + ".py"])
                      for name in COMPILED_SPEC.COMPILED],
                     build_dir="build/cython", quiet=True,
                     compiler_directives={"language_level": "3"})
    for ext in exts:
        ext.optional = True   # no C compiler: build on, the .py modules run
    return exts


class BuildExtRecordingSources(build_ext):
    """``build_ext`` that records, beside the extensions, the digest of the source of
    each one it built (``SOURCES_FILE`` of ``bsim/engine/compiled.py``), so that bsim
    runs an edited ``.py`` as Python instead of its stale extension.  Only extensions
    that compiled are recorded: after a failed rebuild an old extension keeps the old
    digest, and the edited source runs."""

    def run(self) -> None:
        self.recorded: list[Extension] = []
        super().run()
        folders = [self.build_lib]
        if self.inplace or getattr(self, "editable_mode", False):
            folders.append(".")
        for base in folders:
            _record(base, self.recorded)

    def build_extension(self, ext: Extension) -> None:
        super().build_extension(ext)   # raises when it fails (optional: reported, skipped)
        self.recorded.append(ext)


def _record(base: str, built: list[Extension]) -> None:
    """Add the digests of *built*'s sources to the records under *base*."""
    for ext in built:
        module_dir = Path(base, *ext.name.split(".")[:-1])
        if not module_dir.is_dir():
            continue
        record = module_dir / COMPILED_SPEC.SOURCES_FILE
        try:
            table = json.loads(record.read_text())
        except (OSError, ValueError):
            table = {}
        source = ext.name.replace(".", "/") + ".py"
        table[ext.name] = COMPILED_SPEC.source_digest(source)
        record.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")


setup(ext_modules=extensions(), cmdclass={"build_ext": BuildExtRecordingSources})
