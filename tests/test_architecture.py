"""The import rules of langmem_plus, checked on the source: no import cycles, no private name
imported from another module, and the layers only import downwards.

The layers (LAYERS) are the folders docs/architecture.md draws. The graph is built with `ast`
from every module, so imports under ``if TYPE_CHECKING:`` and lazy imports inside functions
count like any other (a cycle hidden behind either is still a cycle).
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE_DIR = Path(__file__).resolve().parents[1] / "langmem_plus"

# The layers, bottom up: a module imports only from its own layer or one below it. A layer is a
# folder (`agent`, `store.ranking`) or a module (`errors`, `store.hybrid`); inside `store` and
# `processors` each subfolder and module is a layer of its own. `""` is the package's face.
LAYERS = (
    "errors", "clock", "threads", "text", "config", "embeddings", "model",
    # the store, bottom up: the SQLite truth, the two indexes, the seams every backend
    # implements, the ranking over them, the backends, the store's face
    "store.db", "store.tuning", "store.growbuffer", "store.filters", "store.conversation", "store.texts",
    "store.value_checks", "store.keyword", "store.vector", "store.seams", "store.plan",
    "store.ranking", "store.sqlite", "store.milvus", "store.validate", "store.conventions",
    "store.batching", "store.hybrid", "store",
    # the processors: word lists, schemas and prompts, the one model call, the rules, each job
    "processors.lexicon", "processors.schemas", "processors.prompts", "processors.model",
    "processors.facts", "processors.summarizer", "processors.analysis", "processors.reviewer",
    "processors.rewriters",
    "processors.processor_set", "processors",
    # the memory layer: episodes and facts, the facade, the agent side
    "episodic", "memory", "agent",
    # the interfaces
    "testing", "server", "cli", "mcp_server", "",
)  # fmt: skip
SPLIT = ("store", "processors")  # packages whose subfolders and modules are layers of their own

Violation = tuple[str, str, str]  # (rule, importing module, what it imports)


@dataclass(frozen=True)
class Import:
    """One imported thing: `target` is a module of the package, `name` the attribute taken
    from it (None for a plain module import)."""

    importer: str
    target: str
    name: str | None
    line: int


def module_names(package_dir: Path) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    root = package_dir.parent
    return {
        ".".join(p.relative_to(root).with_suffix("").parts).removesuffix(".__init__"): p
        for p in sorted(package_dir.rglob("*.py"))
    }


def _resolve(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module a `from ... import` names (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    parts = module.split(".") if is_package else module.split(".")[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join([*parts, *([node.module] if node.module else [])])


def _imports_in(
    tree: ast.AST, module: str, is_package: bool
) -> Iterator[tuple[str, str | None, int]]:
    """(module imported, attribute taken or None, line) for every import anywhere in `tree`,
    including ``importlib.import_module("...")`` with a literal name."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node, module, is_package)
            for alias in node.names:
                yield base, alias.name, node.lineno
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, (ast.Name, ast.Attribute))
            and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr)
            == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.args[0].value, None, node.lineno


def import_graph(package_dir: Path) -> list[Import]:
    """Every import of a module of the package by a module of the package."""
    modules = module_names(package_dir)
    found: list[Import] = []
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for base, name, line in _imports_in(tree, module, path.name == "__init__.py"):
            if name is not None and f"{base}.{name}" in modules:  # `from pkg import submodule`
                base, name = f"{base}.{name}", None
            if base in modules:
                found.append(Import(module, base, name, line))
    return found


def _edges(imports: Iterable[Import]) -> dict[str, set[str]]:
    """Module → modules it imports, leaving out imports of its own enclosing packages (importing
    a submodule runs its packages first anyway, so such an edge is no cycle of its own)."""
    graph: dict[str, set[str]] = {}
    for imp in imports:
        graph.setdefault(imp.target, set())
        if imp.target != imp.importer and not imp.importer.startswith(imp.target + "."):
            graph.setdefault(imp.importer, set()).add(imp.target)
    return graph


def cycles(imports: Iterable[Import]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    graph = _edges(imports)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def cycle_violations(imports: list[Import]) -> set[Violation]:
    """Each import between two modules of one cycle (removing any of them shrinks the cycle)."""
    found: set[Violation] = set()
    for component in cycles(imports):
        for imp in imports:
            inside = imp.importer in component and imp.target in component
            if inside and not imp.importer.startswith(imp.target + "."):
                found.add(("cycle", imp.importer, imp.target))
    return found


def private_violations(imports: list[Import]) -> set[Violation]:
    """A private name taken from another module, or a private module imported from outside
    the package that holds it."""
    found: set[Violation] = set()
    for imp in imports:
        if imp.name is not None and _is_private(imp.name) and imp.target != imp.importer:
            found.add(("private-name", imp.importer, f"{imp.target}.{imp.name}"))
        parts = imp.target.split(".")
        for depth, part in enumerate(parts):
            owner = ".".join(parts[:depth])
            if _is_private(part) and owner and not _within(imp.importer, owner):
                found.add(("private-module", imp.importer, ".".join(parts[: depth + 1])))
    return found


def layer_of(module: str, package: str = "langmem_plus") -> str:
    """The layer a module belongs to (see LAYERS)."""
    parts = module.split(".")[1:]
    if not parts:
        return ""
    if parts[0] in SPLIT and len(parts) > 1:
        return f"{parts[0]}.{parts[1]}"
    return parts[0]


def layer_violations(imports: list[Import], package: str = "langmem_plus") -> set[Violation]:
    """Every import of a module from a layer above the importer's (the package's own
    enclosing packages aside: importing a subpackage runs them anyway), and every module in a
    layer LAYERS does not name."""
    rank = {name: i for i, name in enumerate(LAYERS)}
    found: set[Violation] = set()
    for imp in imports:
        if imp.importer.startswith(imp.target + "."):
            continue
        if imp.target == package and imp.name == "__version__":
            continue
        mine, theirs = layer_of(imp.importer, package), layer_of(imp.target, package)
        for layer, module in ((mine, imp.importer), (theirs, imp.target)):
            if layer not in rank:
                found.add(("layer:unknown", module, layer))
        if mine in rank and theirs in rank and rank[theirs] > rank[mine]:
            found.add((f"layer:{mine}", imp.importer, imp.target))
    return found


def violations(package_dir: Path) -> set[Violation]:
    """Every broken import rule of the package at `package_dir`."""
    imports = import_graph(package_dir)
    package = package_dir.name
    return (
        cycle_violations(imports) | private_violations(imports) | layer_violations(imports, package)
    )


# ---------------------------------------------------------------------------- the rules
def test_no_import_rule_violations() -> None:
    new = sorted(violations(PACKAGE_DIR))
    assert not new, "import rules broken (see tests/test_architecture.py):\n" + "\n".join(
        map(str, new)
    )


def test_the_graph_sees_the_package() -> None:
    imports = import_graph(PACKAGE_DIR)
    pairs = {(i.importer, i.target) for i in imports}
    assert ("langmem_plus.store.hybrid", "langmem_plus.store.db.database") in pairs
    assert len({i.importer for i in imports}) > 50


# ---------------------------------------------------------------------------- the checker
def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    pkg = tmp_path / "pkg"
    for name, text in files.items():
        path = pkg / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return pkg


def test_checker_finds_a_cycle_behind_type_checking_and_a_lazy_import(tmp_path: Path) -> None:
    pkg = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": """
                from typing import TYPE_CHECKING
                if TYPE_CHECKING:
                    from pkg.b import B
            """,
            "b.py": """
                def f():
                    from . import c
            """,
            "c.py": "import pkg.a\n",
            "d.py": "from pkg.a import *\n",
        },
    )
    found = violations(pkg)
    assert {v for v in found if v[0] == "cycle"} == {
        ("cycle", "pkg.a", "pkg.b"),
        ("cycle", "pkg.b", "pkg.c"),
        ("cycle", "pkg.c", "pkg.a"),
    }


def test_checker_finds_private_names_and_private_modules(tmp_path: Path) -> None:
    pkg = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "_hidden = 1\n",
            "b.py": "from .a import _hidden\n",
            "sub/__init__.py": "",
            "sub/_impl.py": "x = 1\n",
            "sub/ok.py": "from pkg.sub._impl import x\n",
            "c.py": "from pkg.sub._impl import x\nfrom pkg.sub import ok\n",
        },
    )
    assert {v for v in violations(pkg) if not v[0].startswith("layer")} == {
        ("private-name", "pkg.b", "pkg.a._hidden"),
        ("private-module", "pkg.c", "pkg.sub._impl"),
    }


def test_checker_finds_layer_breaks(tmp_path: Path) -> None:
    pkg = _package(
        tmp_path,
        {
            "__init__.py": "",
            "errors.py": "",
            "memory/__init__.py": "",
            "store/__init__.py": "",
            "store/seams.py": "x = 1\n",
            "store/hybrid.py": "from pkg.errors import E\nimport pkg.memory\n",
            "store/ranking/__init__.py": "from pkg.store.hybrid import H\n",
            "text/__init__.py": "from pkg.errors import E\nfrom pkg import store\n",
            "processors/__init__.py": "from pkg.store import hybrid\n",
            "nowhere.py": "from pkg.store.seams import x\n",
        },
    )
    assert violations(pkg) == {
        ("layer:store.hybrid", "pkg.store.hybrid", "pkg.memory"),
        ("layer:store.ranking", "pkg.store.ranking", "pkg.store.hybrid"),
        ("layer:text", "pkg.text", "pkg.store"),
        ("layer:unknown", "pkg.nowhere", "nowhere"),
    }


def test_no_function_above_complexity_25() -> None:
    """radon's cyclomatic complexity (it counts boolean operators, ruff's C901 does not) of
    every function and method of the package stays at 25 or less."""
    radon = pytest.importorskip("radon.complexity")
    over = []
    for name, path in module_names(PACKAGE_DIR).items():
        for block in radon.cc_visit(path.read_text(encoding="utf-8")):
            functions = list(getattr(block, "methods", [block]))  # a class: its methods
            while functions:
                fn = functions.pop()
                functions.extend(getattr(fn, "closures", []))
                if fn.complexity > 25:
                    over.append(f"{name}.{fn.name}: {fn.complexity}")
    assert not over, over
