"""The API reference (docs/reference.md, mkdocstrings) shows the public methods people call.

mkdocstrings renders a class's own members, not inherited ones, and `filters: ["!^_"]` drops
private names: a method is in the reference when the documented module's class defines it
with a docstring. The slow test builds the site (`mkdocs build --strict`) and looks for it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from langmem_plus.memory import Memory
from langmem_plus.store.hybrid import HybridStore

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "docs" / "reference.md"

WANTED = {
    HybridStore: [
        "get", "put", "delete", "search", "asearch", "list_namespaces", "batch", "abatch",
        "mark_used", "count", "sweep_ttl", "asweep_ttl", "start_ttl_sweeper", "reindex",
    ],
    Memory: [
        "add", "search", "get", "get_all", "update", "delete", "delete_all", "history",
        "reset", "from_config", "export", "import_", "import_logs",
    ],
}  # fmt: skip


def _targets() -> list[str]:
    return re.findall(r"^::: ([\w.]+)", REFERENCE.read_text(encoding="utf-8"), re.M)


def test_the_reference_documents_the_modules_of_the_public_classes() -> None:
    targets = _targets()
    assert "langmem_plus.store.hybrid" in targets
    assert "langmem_plus.memory" in targets


@pytest.mark.parametrize("cls", list(WANTED), ids=lambda c: c.__name__)
def test_public_methods_are_own_members_with_docstrings(cls: type) -> None:
    """Own (not inherited: mkdocstrings would leave it out) and documented."""
    for name in WANTED[cls]:
        member = cls.__dict__.get(name)
        assert member is not None, f"{cls.__name__}.{name} is inherited: not in the reference"
        func = getattr(member, "__func__", member)
        assert (func.__doc__ or "").strip(), f"{cls.__name__}.{name} has no docstring"


@pytest.mark.slow
def test_the_built_reference_shows_them(tmp_path: Path) -> None:
    if shutil.which("mkdocs") is None:
        pytest.skip("mkdocs is not installed (dev extra)")
    site = tmp_path / "site"
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    html = (site / "reference" / "index.html").read_text(encoding="utf-8")
    for name in WANTED[HybridStore]:
        assert f'id="langmem_plus.store.hybrid.HybridStore.{name}"' in html, name
    for name in WANTED[Memory]:
        assert f'id="langmem_plus.memory.Memory.{name}"' in html, name
