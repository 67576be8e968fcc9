"""The rule processors, text helpers and store checks keep their structure: no module imports
a private (underscore) name from another module, and none grows past 500 lines."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "langmem_plus"
OTHER_OWNER = {"_dates.py", "timeparse.py"}  # the time parser's own refactor checks those
MODULES = sorted(
    path
    for path in [
        *(PACKAGE / "processors").glob("*.py"),
        *(PACKAGE / "text").glob("*.py"),
        PACKAGE / "store" / "validate.py",
        PACKAGE / "store" / "value_checks.py",
    ]
    if path.name not in OTHER_OWNER
)


def private_imports(source: str) -> list[str]:
    """The `_name`s a module imports with `from x import _name` (dunders excepted)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{node.module}.{alias.name}")
    return found


def test_private_imports_are_found() -> None:
    assert private_imports("from a._b import _c, d, __version__\nimport e") == ["a._b._c"]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_no_private_name_imported(path: Path) -> None:
    assert private_imports(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_module_under_500_lines(path: Path) -> None:
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 500
