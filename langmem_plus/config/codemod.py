"""Rewrite flat `MemoryConfig` names to their nested paths, in Python and Markdown files.

    python -m langmem_plus.config.codemod [--check] PATH...

Rewrites reads and assignments `<x>config.<flat>` / `<x>cfg.<flat>` (`self.config`,
`store.config`, `old_cfg`...) to `<x>config.<section>.<field>`, and calls
`MemoryConfig(<flat>=v, ...)` to `MemoryConfig(<section>={"<field>": v}, ...)`. The mapping
is `FLAT_FIELDS`, the one the config itself uses. What it cannot rewrite safely (`**kwargs`
into MemoryConfig, a removed field, a flat name in a string such as `getattr(cfg, "...")`) is
listed for a person to finish; the deprecation warnings catch anything left at run time.
Run `ruff format` afterwards: rewritten calls are put on one line. A file containing the
comment `config-codemod: skip` is left alone (tests of the flat names themselves).
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from langmem_plus.config.model import FLAT_FIELDS, REMOVED_FIELDS

__all__ = ["Result", "main", "rewrite_markdown", "rewrite_python"]

_CONFIG_NAME = re.compile(r"(?:^|_)(?:config|cfg)$", re.IGNORECASE)
_SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", "site", "build", "dist"}
_OLD_NAMES = "|".join(map(re.escape, sorted({*FLAT_FIELDS, *REMOVED_FIELDS})))
_STRING_USE = re.compile(r"""["'](""" + _OLD_NAMES + r""")["']""")
_FLAT_NAMES = "|".join(map(re.escape, sorted(FLAT_FIELDS, key=len, reverse=True)))
_MD_ATTR = re.compile(
    r"\b((?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Za-z_]*(?:config|cfg))\.(" + _FLAT_NAMES + r")\b",
    re.IGNORECASE,
)
_MD_CALL = re.compile(r"MemoryConfig\([^()\n]*\)")
_PACKAGE_DIR = Path(__file__).resolve().parent
_SKIP_MARK = "config-codemod: " + "skip"


@dataclass
class Result:
    """A file's rewritten text and the uses left for a person (line: what)."""

    text: str
    changes: int = 0
    manual: list[str] = field(default_factory=list)


@dataclass
class _Edit:
    start: int
    end: int
    text: str


def _is_config_expr(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return bool(_CONFIG_NAME.search(node.id))
    if isinstance(node, ast.Attribute):
        return bool(_CONFIG_NAME.search(node.attr))
    return isinstance(node, ast.Call) and _is_memory_config(node.func)  # MemoryConfig().x


def _is_memory_config(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id == "MemoryConfig"
    return isinstance(func, ast.Attribute) and func.attr == "MemoryConfig"


class _Offsets:
    """(line, column) of `ast` -> offset in the text (ast columns count UTF-8 bytes)."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def __call__(self, lineno: int, col: int) -> int:
        line = self.lines[lineno - 1] if lineno - 1 < len(self.lines) else ""
        return self.starts[lineno - 1] + len(line.encode("utf-8")[:col].decode("utf-8"))


def _call_edit(node: ast.Call, source: str, pos: _Offsets) -> tuple[_Edit | None, list[str]]:
    manual: list[str] = []
    flat = [k for k in node.keywords if k.arg in FLAT_FIELDS]
    for k in node.keywords:
        if k.arg is None:
            manual.append(
                f"{node.lineno}: MemoryConfig(**...): flat keys in it only warn at run time"
            )
        elif k.arg in REMOVED_FIELDS:
            manual.append(f"{node.lineno}: MemoryConfig({k.arg}=...) was removed; drop it")
    if not flat:
        return None, manual
    present = {k.arg for k in node.keywords if k.arg is not None}
    groups: dict[str, list[str]] = {}
    for k in flat:
        target = FLAT_FIELDS[str(k.arg)]
        if target.section in present:
            manual.append(f"{node.lineno}: {k.arg} beside {target.section}=...; merge by hand")
            return None, manual
        value = ast.get_source_segment(source, k.value) or ""
        groups.setdefault(target.section, []).append(f'"{target.field}": {value}')
    parts = [ast.get_source_segment(source, a) or "" for a in node.args]
    for k in node.keywords:
        if k.arg in FLAT_FIELDS:
            continue
        value = ast.get_source_segment(source, k.value) or ""
        parts.append(f"**{value}" if k.arg is None else f"{k.arg}={value}")
    parts += [f"{section}={{{', '.join(items)}}}" for section, items in groups.items()]
    func = ast.get_source_segment(source, node.func) or "MemoryConfig"
    start = pos(node.lineno, node.col_offset)
    end = pos(node.end_lineno or node.lineno, node.end_col_offset or 0)
    return _Edit(start, end, f"{func}({', '.join(parts)})"), manual


def _attr_edit(node: ast.Attribute, pos: _Offsets) -> _Edit:
    target = FLAT_FIELDS[node.attr]
    end = pos(node.end_lineno or node.lineno, node.end_col_offset or 0)
    return _Edit(end - len(node.attr), end, target.path)


def _edits(tree: ast.AST, source: str) -> tuple[list[_Edit], list[str]]:
    pos = _Offsets(source)
    edits: list[_Edit] = []
    manual: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _is_memory_config(node.func):
            edit, notes = _call_edit(node, source, pos)
            manual += notes
            if edit is not None:
                edits.append(edit)
        elif isinstance(node, ast.Attribute) and _is_config_expr(node.value):
            if node.attr in FLAT_FIELDS:
                edits.append(_attr_edit(node, pos))
            elif node.attr in REMOVED_FIELDS:
                manual.append(f"{node.lineno}: .{node.attr} was removed; drop this use")
    return edits, manual


def _apply(text: str, edits: Iterable[_Edit]) -> tuple[str, int]:
    """Apply non-overlapping edits, outermost first (an inner edit inside a rewritten call is
    already part of that call's new text only if it was taken from the source: redo it)."""
    chosen: list[_Edit] = []
    for e in sorted(edits, key=lambda e: (e.start, -e.end)):
        if chosen and e.start < chosen[-1].end:
            continue  # inside a rewritten call; a second pass rewrites it
        chosen.append(e)
    for e in reversed(chosen):
        text = text[: e.start] + e.text + text[e.end :]
    return text, len(chosen)


def rewrite_python(source: str) -> Result:
    """`source` with every flat config use it can rewrite rewritten."""
    result = Result(source)
    for _ in range(5):  # nested edits (a flat read inside a rewritten call) need another pass
        try:
            tree = ast.parse(result.text)
        except SyntaxError as exc:
            result.manual.append(f"{exc.lineno}: not Python ({exc.msg}); left as is")
            return result
        edits, manual = _edits(tree, result.text)
        if not edits:
            result.manual = manual
            break
        result.text, n = _apply(result.text, edits)
        result.changes += n
    for lineno, line in enumerate(result.text.splitlines(), 1):
        for m in _STRING_USE.finditer(line):
            if "getattr" in line or "setattr" in line or "model_copy" in line:
                result.manual.append(f"{lineno}: flat name {m.group(1)!r} in a string")
    result.manual.sort(key=lambda note: int(note.split(":", 1)[0]))
    return result


def rewrite_markdown(text: str) -> Result:
    """`text` with `MemoryConfig(...)` calls and `config.<flat>` reads rewritten."""
    result = Result(text)

    def call(m: re.Match[str]) -> str:
        new = rewrite_python(m.group(0))
        if new.manual or new.changes == 0:
            return m.group(0)
        result.changes += new.changes
        return new.text

    def attr(m: re.Match[str]) -> str:
        result.changes += 1
        return f"{m.group(1)}.{FLAT_FIELDS[m.group(2)].path}"

    result.text = _MD_ATTR.sub(attr, _MD_CALL.sub(call, text))
    return result


def _files(paths: Sequence[str]) -> Iterator[Path]:
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            yield path
            continue
        for f in sorted(path.rglob("*")):
            if f.suffix in (".py", ".md") and not _SKIP_DIRS & set(f.parts):
                yield f


def main(argv: Sequence[str] | None = None) -> int:
    """Rewrite the given files and folders; 1 with `--check` when something would change."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("paths", nargs="+", help="files or folders (*.py, *.md)")
    parser.add_argument("--check", action="store_true", help="report only, write nothing")
    args = parser.parse_args(argv)
    changed = 0
    for path in _files(args.paths):
        if path.resolve().parent == _PACKAGE_DIR:
            continue  # the config package defines the flat names; it is not a user of them
        text = path.read_text(encoding="utf-8")
        if _SKIP_MARK in text:
            continue  # a file that tests the flat names themselves
        result = rewrite_python(text) if path.suffix == ".py" else rewrite_markdown(text)
        for note in result.manual:
            print(f"{path}:{note}", file=sys.stderr)
        if result.text != text:
            changed += 1
            print(f"{path}: {result.changes} rewritten")
            if not args.check:
                path.write_text(result.text, encoding="utf-8")
    print(f"{changed} file(s) {'to change' if args.check else 'changed'}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    raise SystemExit(main())
