"""What the command line prints: aligned tables (by display width, so Chinese lines up),
key-value lines, JSON with ``--json``, one-line errors, exit codes and a progress bar."""

from __future__ import annotations

import argparse
import json
import os
import sys
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any, TextIO

__all__ = [
    "EXIT_ERROR",
    "EXIT_NOT_FOUND",
    "EXIT_OK",
    "EXIT_PROBLEMS",
    "EXIT_USAGE",
    "Progress",
    "display_width",
    "emit",
    "fail",
    "kv",
    "table",
]

EXIT_OK, EXIT_NOT_FOUND, EXIT_USAGE, EXIT_ERROR = 0, 1, 2, 3
EXIT_PROBLEMS = 1  # `check`: the database has problems


def display_width(text: str) -> int:
    """Terminal columns `text` takes: wide and full-width characters (CJK) count 2,
    combining marks and zero-width characters 0."""
    width = 0
    for ch in text:
        if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - display_width(text))


def _clip(text: str, width: int) -> str:
    """`text` cut to at most `width` columns, with an ellipsis when cut."""
    if display_width(text) <= width:
        return text
    out, used = [], 0
    for ch in text:
        w = display_width(ch)
        if used + w > width - 1:
            break
        out.append(ch)
        used += w
    return "".join(out) + "…"


class Progress:
    """A tiny progress bar on stderr, drawn only when stderr is a terminal (or forced)."""

    def __init__(self, label: str, stream: TextIO | None = None, force: bool | None = None):
        self.label = label
        self.stream = stream or sys.stderr
        env = os.environ.get("LANGMEM_PLUS_PROGRESS")
        self.enabled = force if force is not None else (
            env == "1" or (env != "0" and self.stream.isatty())
        )  # fmt: skip
        self._drawn = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        width = 30
        filled = int(width * done / total)
        bar = "#" * filled + "." * (width - filled)
        self.stream.write(f"\r{self.label} [{bar}] {done}/{total}")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()


def table(rows: Sequence[dict[str, Any]], columns: Sequence[str], width: int = 60) -> str:
    """Plain aligned text table; long cells are shortened with an ellipsis."""
    if not rows:
        return "(none)"

    def cell(v: Any) -> str:
        s = (
            ""
            if v is None
            else (json.dumps(v, ensure_ascii=False) if isinstance(v, (list, dict)) else str(v))
        )
        return _clip(s.replace("\n", " "), width)

    body = [[cell(r.get(c)) for c in columns] for r in rows]
    widths = [
        max(display_width(c), *(display_width(b[i]) for b in body)) for i, c in enumerate(columns)
    ]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(_pad(c, w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return "\n".join([line(columns), line(["-" * w for w in widths]), *map(line, body)])


def kv(data: dict[str, Any]) -> str:
    """`key: value` lines (lists and dicts as JSON)."""
    return "\n".join(
        f"{k}: {json.dumps(v, ensure_ascii=False) if isinstance(v, (list, dict)) else v}"
        for k, v in data.items()
    )


def emit(args: argparse.Namespace, data: Any, human: Callable[[], str] | None = None) -> None:
    """Print `data` as JSON (``--json``, or when there is no human form), else `human()`."""
    if args.json or human is None:
        print(json.dumps(data, ensure_ascii=False, indent=None if args.json else 2, default=str))
    else:
        print(human())


def fail(json_out: bool, code: int, kind: str, message: str) -> int:
    """Report an error on stderr (one line; a JSON object with --json) and return `code`."""
    message = message.splitlines()[0] if message else kind
    if json_out:
        print(
            json.dumps(
                {"error": {"type": kind, "message": message, "exit_code": code}},
                ensure_ascii=False,
            ),
            file=sys.stderr,
        )
    else:
        print(f"error: {message}", file=sys.stderr)
    return code
