"""Writing a benchmark's results: the command and machine it ran on, and the JSON record
and Markdown table, each written only when its path was given (parent folders created)."""

from __future__ import annotations

import json
import platform
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def command_line(script: str, argv: Sequence[str] | None) -> str:
    """How the benchmark was run, e.g. 'python benchmarks/corrections.py --md x.md'."""
    return f"python benchmarks/{script} " + shlex.join(argv or sys.argv[1:])


def machine() -> str:
    """The machine in one line: architecture, OS and Python version."""
    return f"{platform.machine()} {platform.system()}, Python {platform.python_version()}"


def publish(res: dict[str, Any], md: str, out: Path | None, md_path: Path | None) -> None:
    """Print the Markdown `md` of results `res`, then write both where asked."""
    print(md)
    write_json(out, res)
    write_text(md_path, md)


def write_json(path: Path | None, data: Any, *, indent: int = 2, newline: bool = True) -> None:
    """`data` as UTF-8 JSON at `path` (non-ASCII kept as is); nothing when `path` is None."""
    if path is None:
        return
    text = json.dumps(data, indent=indent, ensure_ascii=False) + ("\n" if newline else "")
    write_text(path, text)


def write_text(path: Path | None, text: str) -> None:
    """`text` (a Markdown table) as UTF-8 at `path`; nothing when `path` is None."""
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
