"""What the command line prints: aligned tables (by display width, so Chinese lines up),
key-value lines, JSON with ``--json``, one-line errors, exit codes and a progress bar; and
the one file it writes for the user (`write_private`, ``export -o``)."""

from __future__ import annotations

import argparse
import json
import os
import secrets
import stat
import sys
import unicodedata
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from langmem_plus.errors import ValidationError

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
    "write_private",
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


def write_private(path: str | Path, text: str) -> None:
    """Write `text` (UTF-8) to `path` readable by its owner only (0600), never through a link.

    An export holds every memory of a user: it is written to a new temp file beside `path`
    (created exclusively, 0600, not through a link) and renamed over it, so neither the
    umask nor a symbolic link planted at `path` decides who can read it or where it goes.
    A link or anything but a regular file at `path` is refused (`ValidationError`).
    """
    target = Path(path)
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise ValidationError(f"cannot write {target}: {exc.strerror or exc}") from None
    if info is not None and stat.S_ISLNK(info.st_mode):
        raise ValidationError(
            f"{target} is a symbolic link; refusing to write through it (give the real path)"
        )
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise ValidationError(f"{target} exists and is not a regular file")
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(tmp, flags, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
    except OSError as exc:
        raise ValidationError(f"cannot write {target}: {exc.strerror or exc}") from None
