"""The shape of the house (``docs/architecture.md``): layers without import cycles, small modules.

These are checks on the source tree, not on behaviour: no module-level import
cycle (imports under ``if TYPE_CHECKING:`` do not count; lazy ones inside functions do),
no module much over 500 lines, a dozen modules at most directly in ``bsim/``,
and few ``type: ignore``\\ s.
"""

from __future__ import annotations

import ast
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
