"""The memory layer's modules: one job each (under 500 lines), no private name imported from
another module, no import cycle among them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "langmem_plus"
LAYER = [
    "memory", "_memory_async", "_memory_core", "_memory_checks", "_memory_lookup",
    "_memory_results", "_memory_scopes", "_memory_transfer", "_memory_turns", "_memory_writes",
    "_engine", "_postturn", "_processor_set", "_worker", "middleware", "nodes", "context",
    "conversation_log", "current_view", "episodes", "messages", "symbol_recall", "working",
    "costs", "lifecycle",
]  # fmt: skip


def _imports(name: str) -> list[tuple[str, str]]:
    """(module, imported name) of every `from langmem_plus... import ...` in a module."""
    tree = ast.parse((PKG / f"{name}.py").read_text(encoding="utf-8"))
    return [
        (node.module, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("langmem_plus")
        for alias in node.names
    ]


@pytest.mark.parametrize("name", LAYER)
def test_module_is_under_500_lines(name: str) -> None:
    assert len((PKG / f"{name}.py").read_text(encoding="utf-8").splitlines()) < 500


@pytest.mark.parametrize("name", LAYER)
def test_no_private_name_is_imported(name: str) -> None:
    private = [f"{m}.{n}" for m, n in _imports(name) if n.startswith("_")]
    assert private == []


def test_no_import_cycle_in_the_layer() -> None:
    graph = {
        name: {m.removeprefix("langmem_plus.") for m, _ in _imports(name)} & set(LAYER)
        for name in LAYER
    }

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in graph[start]:
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    assert [name for name in LAYER if reaches(name, name, {name})] == []
