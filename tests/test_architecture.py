"""The shape of the house (``docs/architecture.md``): layers without import cycles, small modules.

These are checks on the source tree, not on behaviour: no import cycle in ``bsim`` (imports
under ``if TYPE_CHECKING:`` do not count, as they never run; lazy ones inside functions do,
as they are a dependency all the same), no module much over 500 lines, a dozen modules at
most directly in ``bsim/``, few ``type: ignore``\\ s, the engine below the MPI surface, and
the surface (``bsim/mpi``) in subpackages by concept, each importing only what its
docstring's "May import:" names.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("bsim", "netmodels", "skeletons")
MAX_LINES = 520          # "about 500"
MAX_TOP_LEVEL = 12       # modules directly in bsim/
MAX_TYPE_IGNORES = 20    # in bsim/


def _modules() -> dict[str, Path]:
    mods = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            mods[".".join(parts)] = path
    return mods


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import of a module but those under ``if TYPE_CHECKING:``.

    Imports inside functions count: a lazy import that only dodges a cycle is
    still a cycle between the two modules' jobs.
    """
    found: list[ast.Import | ast.ImportFrom] = []

    def walk(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found.append(node)
            elif isinstance(node, ast.If) and not _is_type_checking(node):
                walk(node.body)
                walk(node.orelse)
            elif isinstance(node, ast.Try):
                walk(node.body)
                for h in node.handlers:
                    walk(h.body)
            elif isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef,
                                   ast.With, ast.For, ast.While)):
                walk(node.body)
    walk(tree.body)
    return found


def _absolute(node: ast.ImportFrom, package: str) -> str:
    """The dotted name a ``from ... import`` in *package* imports from."""
    if not node.level:
        return node.module or ""
    base = package.split(".")
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def import_graph() -> nx.DiGraph:
    """Module -> module edges of the imports (TYPE_CHECKING ones left out)."""
    mods = _modules()
    g = nx.DiGraph()
    for name, path in mods.items():
        g.add_node(name)
        is_pkg = path.name == "__init__.py"
        package = name if is_pkg else name.rpartition(".")[0]
        for node in _imports(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                mod = _absolute(node, package)
                # "from pkg import sub" imports the submodule when there is one
                targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in mods else mod
                           for a in node.names]
            for t in targets:
                if t in mods and t != name:
                    g.add_edge(name, t)
    return g


def test_no_import_cycles() -> None:
    """No cycle among the modules' imports, lazy ones included."""
    cycles = [sorted(c) for c in nx.strongly_connected_components(import_graph()) if len(c) > 1]
    assert not cycles, f"import cycles: {cycles}"


@pytest.mark.parametrize("name", sorted(_modules()))
def test_module_size(name: str) -> None:
    """No module is much over 500 lines."""
    lines = _modules()[name].read_text().count("\n")
    assert lines <= MAX_LINES, f"{name} has {lines} lines (split it)"


def test_top_level_is_small() -> None:
    """At most a dozen modules directly in bsim/: the rest lives in subpackages."""
    top = sorted(p.name for p in (ROOT / "bsim").glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL, top


def test_few_type_ignores() -> None:
    """``type: ignore`` stays rare in bsim/ (the types describe the code)."""
    count = sum(p.read_text().count("type: ignore") for p in (ROOT / "bsim").rglob("*.py"))
    assert count <= MAX_TYPE_IGNORES, f"{count} type: ignore in bsim/"


def _imported_modules(name: str, path: Path) -> set[str]:
    """Every module *name* (at *path*) imports, under ``if TYPE_CHECKING:`` and inside
    functions included, as absolute dotted names."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            mod = _absolute(node, package)
            found.add(mod)
            found.update(f"{mod}.{a.name}" for a in node.names)
    return found


@pytest.mark.parametrize("name", sorted(n for n in _modules() if n.startswith("bsim.engine")))
def test_the_engine_imports_nothing_of_the_mpi_surface(name: str) -> None:
    """The engine is below ``bsim.mpi``: no engine module imports it, not even for typing
    (what the engine needs of the surface's requests and communicators is
    ``bsim/engine/surface.py``)."""
    above = sorted(m for m in _imported_modules(name, _modules()[name])
                   if m == "bsim.mpi" or m.startswith("bsim.mpi."))
    assert not above, f"{name} imports {above}"


# -- the MPI surface in rooms --------------------------------------------------------------

MPI = ROOT / "bsim" / "mpi"
MPI_GLUE = {"bsim.mpi.coverage", "bsim.mpi.handle_constants"}
"""The modules directly in ``bsim/mpi/``: about the namespace as a whole, above every
subpackage (``bsim/mpi/__init__.py`` says so)."""
BELOW_THE_SURFACE = ("bsim.engine", "bsim.constants", "bsim.errors", "bsim.version")
"""What every ``bsim/mpi`` subpackage may import besides the subpackages it names."""


def _mpi_subpackages() -> list[str]:
    return sorted(p.name for p in MPI.iterdir() if (p / "__init__.py").is_file())


def _declared_imports(sub: str) -> set[str]:
    """The sibling subpackages the docstring of ``bsim/mpi/<sub>/__init__.py`` names after
    "May import:" (its last paragraph)."""
    doc = ast.get_docstring(ast.parse((MPI / sub / "__init__.py").read_text())) or ""
    _, found, rule = doc.partition("May import:")
    assert found, f"bsim/mpi/{sub}/__init__.py: its docstring says nothing after 'May import:'"
    return set(re.findall(r"bsim\.mpi\.(\w+)", rule))


def _run_time_imports(name: str) -> set[str]:
    """The modules of ``bsim`` that module *name* imports when it runs (lazy ones included,
    ``TYPE_CHECKING`` ones left out): its edges in :func:`import_graph`."""
    return set(_GRAPH.successors(name))


_GRAPH = import_graph()


def _subpackage_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 3 and parts[:2] == ["bsim", "mpi"] else None


def test_the_mpi_surface_is_in_subpackages() -> None:
    """``bsim/mpi`` has subpackages, and every module of it lives in one but the glue."""
    subs = _mpi_subpackages()
    assert len(subs) >= 8, subs
    loose = sorted(f"bsim.mpi.{p.stem}" for p in MPI.glob("*.py") if p.name != "__init__.py")
    assert set(loose) == MPI_GLUE, f"modules directly in bsim/mpi/: {loose} (put them in a " \
        f"subpackage: {subs})"
    for path in MPI.rglob("*.py"):
        depth = len(path.relative_to(MPI).parts)
        assert depth <= 2, f"{path.relative_to(ROOT)}: bsim/mpi has one level of subpackages"


@pytest.mark.parametrize("sub", _mpi_subpackages())
def test_each_mpi_subpackage_imports_only_what_it_declares(sub: str) -> None:
    """A subpackage's modules import (at run time) only their own subpackage, the ones its
    docstring declares, and what lies below the surface."""
    allowed = _declared_imports(sub)
    unknown = allowed - set(_mpi_subpackages())
    assert not unknown, f"bsim/mpi/{sub}/__init__.py declares unknown subpackages {unknown}"
    wrong = []
    for name in sorted(_modules()):
        if name != f"bsim.mpi.{sub}" and not name.startswith(f"bsim.mpi.{sub}."):
            continue
        for target in sorted(_run_time_imports(name)):
            other = _subpackage_of(target)
            if other == sub or other in allowed or target.startswith(BELOW_THE_SURFACE):
                continue
            if not target.startswith("bsim."):
                continue   # netmodels, skeletons: checked by the cycle test
            wrong.append(f"{name} imports {target}")
    assert not wrong, f"bsim/mpi/{sub} may import {sorted(allowed)}: " + "; ".join(wrong)


def test_the_mpi_subpackages_are_layers() -> None:
    """The declared imports have no cycle: each subpackage sits above the ones it may
    import, so a reader can take them in order."""
    g = nx.DiGraph()
    for sub in _mpi_subpackages():
        g.add_node(sub)
        g.add_edges_from((sub, other) for other in _declared_imports(sub))
    assert nx.is_directed_acyclic_graph(g), list(nx.simple_cycles(g))


def test_nothing_below_imports_the_mpi_glue() -> None:
    """The glue directly in ``bsim/mpi`` is above every subpackage: none imports it."""
    users = sorted(f"{a} imports {b}" for a, b in _GRAPH.edges
                   if b in MPI_GLUE and _subpackage_of(a) is not None)
    assert not users, users


def test_the_architecture_page_shows_the_layers() -> None:
    """``docs/architecture.md``'s table of the subpackages names each one with the imports
    its docstring declares (the page tells what the code holds)."""
    page = (ROOT / "docs" / "architecture.md").read_text()
    section = page.partition("## The MPI surface in rooms")[2].partition("\n## ")[0]
    rows = dict(re.findall(r"^\| `(\w+)/` \| [^\n]*\| ([^|\n]*) \|$", section, re.MULTILINE))
    shown = {sub: set(re.findall(r"`(\w+)`", rows[sub])) for sub in rows}
    assert shown == {sub: _declared_imports(sub) for sub in _mpi_subpackages()}
