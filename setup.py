"""Build bsim; compile the fluid contention layer with Cython where a C compiler is present.

The modules in ``bsim.engine.compiled.COMPILED`` are plain Python and stay the
reference.  When Cython and a C compiler are available (``pip install`` fetches Cython
into its build environment), each is also compiled, unchanged, to an extension module of
the same name, which Python imports in preference to the ``.py`` file: contention-aware
runs (``--contention fluid``) spend about 28% less host time (``docs/benchmarks.md``,
ninth sitting) and give the same results bit for bit (``tests/test_compiled_modules.py``).
Without a compiler the build goes on and bsim runs the pure modules (the extensions are
optional); the environment variable ``BSIM_PURE_PYTHON=1`` makes a run use the ``.py``
files even when the extensions are built (``bsim/engine/compiled.py``);
``BSIM_NO_COMPILE=1`` at install time skips the compilation.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
from pathlib import Path

from setuptools import Extension, setup


def compiled_sources() -> list[str]:
    """The source files of ``bsim.engine.compiled.COMPILED`` (read, not imported: the
    build environment has none of bsim's dependencies)."""
    tree = ast.parse(Path(__file__).with_name("bsim").joinpath("engine", "compiled.py")
                     .read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "COMPILED":
            return [name.replace(".", "/") + ".py" for name in ast.literal_eval(node.value)]
    raise RuntimeError("bsim/engine/compiled.py defines no COMPILED")


def extensions() -> list[Extension]:
    """The compiled twins of ``COMPILED`` (none without Cython or with BSIM_NO_COMPILE)."""
    if os.environ.get("BSIM_NO_COMPILE"):
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        return []
    sources = compiled_sources()
    exts = cythonize([Extension(path[:-3].replace("/", "."), [path]) for path in sources],
                     build_dir="build/cython", quiet=True,
                     compiler_directives={"language_level": "3"})
    for ext in exts:
        ext.optional = True   # no C compiler: build on, the .py modules run
    record_sources(sources)
    return exts


def record_sources(sources: list[str]) -> None:
    """Write the digest of each source compiled beside it (``SOURCES_FILE`` of
    ``bsim/engine/compiled.py``), so that bsim runs an edited ``.py`` as Python instead
    of its stale extension."""
    digests: dict[str, dict[str, str]] = {}
    for path in sources:
        name = path[:-3].replace("/", ".")
        folder = os.path.dirname(path)
        digests.setdefault(folder, {})[name] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    for folder, table in digests.items():
        Path(folder, "compiled_sources.json").write_text(json.dumps(table, indent=1) + "\n")


setup(ext_modules=extensions())
