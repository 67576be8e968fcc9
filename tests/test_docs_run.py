"""The docs run: every ```python block and every shell block of `langmem-plus` commands in
README.md and docs/**/*.md is executed, offline, so a snippet that drifts from the API fails CI.

A page's blocks run in order in one temporary directory (Python blocks share one namespace,
shell blocks one database), the way a reader follows the page. Shell lines run in-process
through `langmem_plus.cli.main` with keyword-only recall (LANGMEM_PLUS_EMBEDDINGS=none); the
small shell subset they may use is `# comments`, `\\` continuations, `> FILE`, and
`NAME=$(langmem-plus ... --json | jq -r .path)` with `"$NAME"` later. A block that cannot run
offline (a real API key, a server) carries a visible `<!-- not-run: reason -->` line just before
its fence; `test_not_run_blocks_are_listed` names them all. Sockets are off (pytest-socket).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

from langmem_plus import cli

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
FENCE = re.compile(r"^```(\w*)\s*$")
NOT_RUN = re.compile(r"^<!--\s*not-run:\s*(.+?)\s*-->\s*$")
SHELL_LANGS = {"bash", "sh", "shell", "console"}
CAPTURE = re.compile(r"^(\w+)=\$\((.*)\)$")

# files the pages refer to, created in each page's temporary directory
LOG = "user: 我喜欢川菜\nassistant: 记住了，你喜欢川菜。\nuser: processPayment 有并发问题\n"
FIXTURES = {
    ".devbooks/conversation-logs/session-1.txt": LOG,
}


@dataclass(frozen=True)
class Block:
    """One fenced block of a page: where it starts, its language, its text, why it is skipped."""

    page: Path
    line: int
    lang: str
    code: str
    not_run: str | None

    @property
    def where(self) -> str:
        page = self.page.relative_to(ROOT) if self.page.is_relative_to(ROOT) else self.page.name
        return f"{page}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The runnable kinds of fenced block in `page`: python, and shell starting `langmem-plus`."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, lang = i, m.group(1).lower()
        i += 1
        body: list[str] = []
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        i += 1  # the closing fence
        code = "\n".join(body) + "\n"
        first = next((ln for ln in body if ln.strip() and not ln.startswith("#")), "")
        if not (lang == "python" or (lang in SHELL_LANGS and first.startswith("langmem-plus"))):
            continue
        prev = start - 1
        while prev >= 0 and not lines[prev].strip():
            prev -= 1
        marker = NOT_RUN.match(lines[prev]) if prev >= 0 else None
        found.append(Block(page, start + 1, lang, code, marker.group(1) if marker else None))
    return found


ALL = [b for page in PAGES for b in blocks(page)]
RUN_PAGES = sorted({b.page for b in ALL if b.not_run is None})


def _jq(data: object, path: str) -> str:
    """The `jq -r` subset the pages use: `.key`, `[index]` and `.key[index]` steps."""
    for key, index in re.findall(r"\.(\w+)|\[(\d+)\]", path):
        data = data[key] if key else data[int(index)]  # type: ignore[index]
    return data if isinstance(data, str) else json.dumps(data)


def _cli(argv: list[str], block: Block) -> str:
    """Run one `langmem-plus` command in-process; fail with the block's place on a non-zero exit."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(argv)
    assert code == 0, (
        f"{block.where}: `langmem-plus {shlex.join(argv)}` -> {code}: {err.getvalue()}"
    )
    return out.getvalue()


def run_shell(block: Block, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run a shell block's `langmem-plus` lines (see the module docstring for the subset)."""
    for line in block.code.replace("\\\n", " ").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        capture = None
        m = CAPTURE.match(line.split(" #")[0].strip())
        if m:
            capture, line = m.group(1), m.group(2)
        cmd, _, jq = line.partition("|")
        argv = [os.path.expandvars(a) for a in shlex.split(cmd, comments=True)]
        target = None
        if ">" in argv:
            at = argv.index(">")
            target, argv = argv[at + 1], argv[:at]
        assert argv[0] == "langmem-plus", f"{block.where}: only langmem-plus lines run: {line}"
        out = _cli(argv[1:], block)
        if target:
            Path(target).write_text(out, encoding="utf-8")
        if capture:
            jq_args = shlex.split(jq, comments=True)
            assert jq_args[:2] == ["jq", "-r"], f"{block.where}: capture with `| jq -r PATH`"
            monkeypatch.setenv(capture, _jq(json.loads(out), jq_args[2]))


@pytest.mark.parametrize("page", RUN_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_blocks_run(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every block of the page that is not marked not-run executes without error, in order."""
    monkeypatch.chdir(tmp_path)
    for name, text in FIXTURES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.setenv("LANGMEM_PLUS_EMBEDDINGS", "none")
    monkeypatch.setenv("LANGMEM_PLUS_DB", str(tmp_path / "cli.db"))
    monkeypatch.delenv("LANGMEM_PLUS_USER", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    namespace: dict[str, object] = {"__name__": "__docs__"}
    ran = 0
    for block in blocks(page):
        if block.not_run is not None:
            continue
        if block.lang == "python":
            exec(compile(block.code, block.where, "exec"), namespace)
        else:
            run_shell(block, monkeypatch)
        ran += 1
    assert ran > 0
    capsys.readouterr()


def test_not_run_blocks_are_listed() -> None:
    """Skipped blocks are few, each with a reason; this is the list a reviewer checks."""
    skipped = {b.where: b.not_run for b in ALL if b.not_run is not None}
    print("\n".join(f"not run: {where}: {why}" for where, why in skipped.items()))
    assert all(why and why.strip() for why in skipped.values())
    assert len(skipped) <= 4, skipped
    assert len(ALL) - len(skipped) >= 10  # the extractor still finds the pages' blocks


def test_extractor_finds_and_marks_blocks(tmp_path: Path) -> None:
    """The extractor picks python and `langmem-plus` shell blocks, and reads the marker."""
    page = tmp_path / "p.md"
    page.write_text(
        "```python\nx = 1\n```\n\n```bash\npip install x\n```\n\n"
        "<!-- not-run: needs a server -->\n\n```bash\n# a note\nlangmem-plus serve\n```\n"
        "```json\n{}\n```\n",
        encoding="utf-8",
    )
    found = blocks(page)
    assert [(b.lang, b.line, b.not_run) for b in found] == [
        ("python", 1, None),
        ("bash", 11, "needs a server"),
    ]
    assert found[0].code == "x = 1\n"
    assert _jq({"ids": ["a", "b"], "k": {"v": 3}}, ".ids[1]") == "b"
    assert _jq({"ids": ["a", "b"], "k": {"v": 3}}, ".k.v") == "3"


def test_shell_subset_runs_and_fails_loudly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Captures, `$NAME`, `>` and continuations work; a failing command fails the block."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LANGMEM_PLUS_EMBEDDINGS", "none")
    monkeypatch.setenv("LANGMEM_PLUS_DB", str(tmp_path / "cli.db"))
    code = (
        "langmem-plus init\n"
        "ID=$(langmem-plus add --no-infer 'Deploys go out on Fridays' --json | jq -r '.ids[0]')\n"
        'langmem-plus get "$ID" \\\n    --history   # a comment\n'
        "langmem-plus export --format json > backup.json\n"
    )
    run_shell(Block(tmp_path / "p.md", 1, "bash", code, None), monkeypatch)
    assert len(os.environ["ID"]) == 32
    assert "Deploys go out on Fridays" in (tmp_path / "backup.json").read_text(encoding="utf-8")
    with pytest.raises(AssertionError, match=r"p\.md:7"):
        run_shell(
            Block(tmp_path / "p.md", 7, "bash", "langmem-plus get nosuch\n", None), monkeypatch
        )
    capsys.readouterr()
