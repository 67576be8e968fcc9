"""The `langmem-plus` command line, in-process plus real subprocesses."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from langmem_plus.cli import (
    Progress,
    build_parser,
    default_db_path,
    display_width,
    main,
    parse_span,
)
from langmem_plus.errors import ValidationError

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def run(tmp_path, capsys, monkeypatch):
    """Run the CLI in-process on a temp database (keyword-only, fast); returns (code, out, err)."""
    monkeypatch.setenv("LANGMEM_PLUS_DB", str(tmp_path / "m.db"))
    monkeypatch.setenv("LANGMEM_PLUS_EMBEDDINGS", "none")
    monkeypatch.delenv("LANGMEM_PLUS_USER", raising=False)

    def _run(*argv: str) -> tuple[int, str, str]:
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    assert _run("init")[0] == 0  # a database named by LANGMEM_PLUS_DB must exist first
    return _run


def _json(run, *argv: str):
    code, out, err = run(*argv, "--json")
    assert code == 0, err
    return json.loads(out)


def test_store_then_recall_shape(run):
    stored = _json(run, "store", "--conversation", "conv-1", "--role", "user",
                   "--content", "processPayment 函数存在并发问题 in src/order.ts")  # fmt: skip
    assert set(stored) == {"turn_id", "conversation_id", "symbols_extracted", "stored_at"}
    assert stored["conversation_id"] == "conv-1"
    assert "processPayment" in stored["symbols_extracted"]
    assert "src/order.ts" in stored["symbols_extracted"]
    _json(run, "store", "--conversation", "conv-2", "--content", "validateOrder 重构")
    out = _json(run, "recall", "--query", "processPayment 函数的问题", "--limit", "5")
    assert set(out) == {"results", "total_searched", "latency_ms"}
    assert out["total_searched"] == 2
    (hit,) = out["results"]
    assert set(hit) == {"conversation_id", "turn_id", "role", "content", "relevance",
                        "created_at", "is_summary"}  # fmt: skip
    assert hit["turn_id"] == stored["turn_id"] and hit["is_summary"] is False
    assert 0 < hit["relevance"] <= 1


def test_summarize_and_recall_summary(run):
    for i, text in enumerate(["OrderService 支付流程", "processPayment 加互斥锁", "添加重试机制"]):
        role = "user" if i % 2 == 0 else "assistant"
        _json(run, "store", "--conversation", "c", "--role", role, "--content", text)
    out = _json(run, "summarize", "--conversation", "c", "--from-turn", "1", "--to-turn", "3")
    assert set(out) == {"summary_id", "conversation_id", "turns_summarized", "summary",
                        "key_symbols", "key_decisions"}  # fmt: skip
    assert out["turns_summarized"] == [1, 2, 3]
    rec = _json(run, "recall", "-q", "OrderService")
    summary = [r for r in rec["results"] if r["is_summary"]]
    assert summary and set(summary[0]) == {
        "conversation_id", "turn_id", "summary", "relevance", "created_at", "is_summary"
    }  # fmt: skip


def test_cleanup_modes(run):
    old = (datetime.now(timezone.utc) - timedelta(days=60)).isoformat()
    _json(run, "store", "--conversation", "old", "--content", "old talk", "--created-at", old)
    _json(run, "store", "--conversation", "new", "--content", "new talk")
    _json(run, "store", "--conversation", "other", "--content", "other talk")
    out = _json(run, "cleanup", "--older-than", "30d")
    assert out == {"conversations_deleted": 1, "turns_deleted": 1, "summaries_deleted": 0,
                   "session_summaries_deleted": 0, "space_freed_kb": out["space_freed_kb"]}  # fmt: skip
    assert _json(run, "cleanup", "--conversation", "other")["turns_deleted"] == 1
    _json(run, "add", "I prefer tabs", "--no-infer")
    everything = _json(run, "cleanup", "--all", "--user", "default")
    assert everything["turns_deleted"] == 1 and everything["memories_deleted"] == 1
    assert _json(run, "recall", "-q", "talk")["total_searched"] == 0
    assert _json(run, "stats")["items"] == 0


def test_cleanup_reports_the_space_it_freed(run, tmp_path):
    from langmem_plus.memory import Memory

    old = datetime.now(timezone.utc) - timedelta(days=60)
    with Memory(tmp_path / "m.db", embeddings=False) as mem:
        for i in range(200):  # ~400 KB of old turns: many pages the VACUUM gives back
            mem.add_turn("default", f"old-{i}", "user", f"turn {i} " + "x" * 2000, created_at=old)
    out = _json(run, "cleanup", "--older-than", "30d")
    assert out["turns_deleted"] == 200
    assert out["space_freed_kb"] >= 200
    assert _json(run, "cleanup", "--older-than", "30d")["space_freed_kb"] == 0  # nothing left


def test_export_import_round_trip(run, tmp_path, monkeypatch):
    _json(run, "store", "--conversation", "c", "--content", "CacheManager 的实现")
    _json(run, "add", "我喜欢川菜", "--no-infer", "--category", "preference")
    for fmt in ("json", "jsonl"):
        path = tmp_path / f"backup.{fmt}"
        code, _, err = run("export", "--format", fmt, "--output", str(path))
        assert code == 0, err
        monkeypatch.setenv("LANGMEM_PLUS_DB", str(tmp_path / f"copy-{fmt}.db"))
        counts = _json(run, "import", str(path), "--create")  # a new database: say so
        assert counts["items"] == 1 and counts["turns"] == 1
        code, again, _ = run("export", "--format", fmt)
        assert again == path.read_text(encoding="utf-8")
        monkeypatch.setenv("LANGMEM_PLUS_DB", str(tmp_path / "m.db"))


def test_import_from_logs_then_reindex(run, tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "day1.txt").write_text("user: CacheManager 怎么实现\nassistant: 用 LRU\n", "utf-8")
    counts = _json(run, "import", "--from-logs", str(logs))
    assert counts == {"files": 1, "turns": 2, "sessions": 1, "memories": 0}
    assert _json(run, "reindex")["items"] == 2
    assert _json(run, "recall", "-q", "CacheManager")["results"][0]["conversation_id"] == "day1"


def test_memory_commands_and_tables(run):
    code, out, _ = run("init")
    assert code == 0 and "schema_version" in out
    added = _json(run, "add", "I prefer dark mode in my editor")
    mid = added["ids"][0]  # the episode (the exchange as said); derived facts follow
    n = len(added["ids"])
    code, out, _ = run("list")
    assert code == 0 and "dark mode" in out and f"{n} of {n}" in out
    code, out, _ = run("search", "dark mode")
    assert code == 0 and mid in out
    got = _json(run, "get", mid, "--history")
    assert got["history"][0]["event"] == "ADD"
    assert _json(run, "delete", mid) == {"deleted": True, "id": mid}
    code, out, _ = run("recall", "-q", "nothing here")
    assert code == 0 and "(none)" in out
    assert "users" in _json(run, "stats")


def test_user_scoping(run):
    _json(run, "add", "alice fact", "--no-infer", "--user", "alice")
    assert _json(run, "list", "--user", "bob")["total"] == 0
    assert _json(run, "--user", "alice", "list")["total"] == 1


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["get", "missing-id"], 1),
        (["delete", "missing-id"], 1),
        (["summarize", "--conversation", "nope"], 1),
        ([], 2),
        (["frobnicate"], 2),
        (["recall"], 2),
        (["recall", "-q", "x", "--limit", "0"], 2),
        (["cleanup"], 2),
        (["cleanup", "--older-than", "soon"], 2),
        (["cleanup", "--all", "--conversation", "x"], 2),
        (["import", "/definitely/not/here.json"], 2),
        (["search", "x", "--user", ""], 2),
        (["recall", "-q", "x", "--since", "yesterday-ish"], 2),
    ],
)
def test_exit_codes_and_one_line_errors(run, argv, code):
    got, _, err = run(*argv)
    assert got == code
    if code == 1:
        assert err.startswith("error: ") and err.count("\n") == 1


def test_help_exits_zero(run):
    assert run("--help")[0] == 0


def test_parse_span_and_progress(capsys):
    assert parse_span("30d") == timedelta(days=30)
    assert parse_span("12h") == timedelta(hours=12)
    assert parse_span("7") == timedelta(days=7)
    with pytest.raises(ValidationError):
        parse_span("later")
    bar = Progress("job", stream=sys.stderr, force=True)
    bar(1, 2)
    bar(2, 2)
    bar.close()
    assert "2/2" in capsys.readouterr().err


@pytest.mark.slow
def test_console_script_subprocess(tmp_path):
    """One real process: the installed console script, or the module when not installed."""
    exe = shutil.which("langmem-plus")
    cmd = [exe] if exe else [sys.executable, "-m", "langmem_plus.cli"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LANGMEM_PLUS_EMBEDDINGS": "none"}
    db = str(tmp_path / "p.db")
    stored = subprocess.run(
        [*cmd, "store", "--db", db, "--create", "--conversation", "c1", "--content",
         "OrderService bug", "--json"],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert stored.returncode == 0, stored.stderr
    recalled = subprocess.run(
        [*cmd, "--db", db, "recall", "--query", "OrderService", "--json"],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert recalled.returncode == 0, recalled.stderr
    assert json.loads(recalled.stdout)["results"][0]["content"] == "OrderService bug"
    missing = subprocess.run(
        [*cmd, "--db", db, "get", "nope"], capture_output=True, text=True, env=env, timeout=60,
        check=False,
    )  # fmt: skip
    assert missing.returncode == 1 and missing.stderr.startswith("error:")
    # Chinese text through the fact rules loads jieba: none of its lines on stderr
    added = subprocess.run(
        [*cmd, "--db", db, "add", "我喜欢川菜，周末常去成都", "--json"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert added.returncode == 0 and added.stderr == "", added.stderr


def test_cleanup_all_needs_one_user_or_all_users_yes(run):
    for user in ("alice", "bob"):
        _json(run, "add", f"{user} likes tea", "--no-infer", "--user", user)
        _json(run, "store", "--user", user, "--conversation", "c", "--content", "hi")
    for argv in (
        ["cleanup", "--all"],  # used to delete every user's data without asking
        ["cleanup", "--all", "--all-users"],
        ["cleanup", "--all", "--all-users", "--user", "alice", "--yes"],
    ):
        code, _, err = run(*argv)
        assert code == 2 and err.startswith("error: "), argv
    assert _json(run, "stats")["items"] > 0
    assert _json(run, "list", "--user", "alice")["total"] == 1
    gone = _json(run, "cleanup", "--all", "--user", "alice")
    assert gone["memories_deleted"] == 1 and gone["turns_deleted"] == 1
    assert _json(run, "list", "--user", "alice")["total"] == 0
    assert _json(run, "list", "--user", "bob")["total"] == 1
    rest = _json(run, "cleanup", "--all", "--all-users", "--yes")
    assert rest["memories_deleted"] == 1
    assert _json(run, "list", "--user", "bob")["total"] == 0


def test_default_database_is_in_the_user_data_dir(tmp_path, monkeypatch, capsys):
    """Without --db or LANGMEM_PLUS_DB every working directory sees the same database."""
    import platformdirs

    monkeypatch.delenv("LANGMEM_PLUS_DB", raising=False)
    monkeypatch.setenv("LANGMEM_PLUS_EMBEDDINGS", "none")
    monkeypatch.delenv("LANGMEM_PLUS_USER", raising=False)
    data_dir = tmp_path / "data"
    monkeypatch.setattr(platformdirs, "user_data_dir", lambda *a, **k: str(data_dir))
    assert default_db_path() == data_dir / "memory.db"
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    monkeypatch.chdir(tmp_path / "one")
    assert main(["add", "I keep bees", "--no-infer", "--json"]) == 0
    monkeypatch.chdir(tmp_path / "two")
    capsys.readouterr()
    assert main(["search", "bees", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"][0]["text"] == "I keep bees"
    assert main(["where", "--json"]) == 0
    where = json.loads(capsys.readouterr().out)
    assert where == {
        "db": str((data_dir / "memory.db").resolve()),
        "source": "default",
        "exists": True,
        "default": str(data_dir / "memory.db"),
    }
    assert main(["stats", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["db"] == where["db"]
    assert main(["--help"]) == 0
    assert str(data_dir / "memory.db") in capsys.readouterr().out.replace("\n", "")
    assert not list((tmp_path / "one").iterdir()) and not list((tmp_path / "two").iterdir())
    monkeypatch.setenv("LANGMEM_PLUS_DB", str(tmp_path / "env.db"))
    assert main(["where", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["source"] == "LANGMEM_PLUS_DB"


def test_version(capsys):
    from langmem_plus import __version__

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"langmem-plus {__version__}"


@pytest.mark.parametrize(
    ("argv", "code", "kind"),
    [
        (["get", "missing-id"], 1, "MemoryNotFoundError"),
        (["frobnicate"], 2, "UsageError"),
        (["recall"], 2, "UsageError"),
        (["recall", "-q", "x", "--limit", "0"], 2, "ValidationError"),
        (["cleanup", "--all"], 2, "ValidationError"),
        (["search", "x", "--user", ""], 2, "ValidationError"),
        (["keys", "revoke", "0123456789ab"], 1, "KeyNotFoundError"),
    ],
)
def test_json_errors_are_json(run, argv, code, kind):
    run("init")
    got, out, err = run(*argv, "--json")
    assert got == code and out == ""
    (line,) = err.splitlines()
    body = json.loads(line)["error"]
    assert body["type"] == kind and body["exit_code"] == code and body["message"]


def test_tables_align_chinese_text_by_display_width(run):
    assert display_width("川菜") == 4 and display_width("tea") == 3
    assert display_width("e\u0301") == 1  # a combining accent takes no column
    for text in ("我喜欢川菜，在上海工作", "I like tea", "喜欢 tea 和 咖啡"):
        _json(run, "add", text, "--no-infer", "--category", "preference")
    code, out, _ = run("list")
    assert code == 0
    lines = out.splitlines()
    header, rule, rows = lines[0], lines[1], lines[2:5]
    start = display_width(header[: header.index("text")])
    for row in rows:  # every text starts in the header's column, by display width
        cells = row.split("  ")
        text = next(c.strip() for c in reversed(cells) if c.strip())
        assert display_width(row[: row.index(text)]) == start, row
    assert display_width(rule) == max(display_width(r) for r in rows)
    long = "长" * 80
    _json(run, "add", long, "--no-infer")
    code, out, _ = run("list")
    (row,) = [r for r in out.splitlines() if "长" in r]
    shown = row[row.index("长") :].rstrip()
    assert shown.endswith("…") and display_width(shown) <= 60


def test_help_says_what_things_do_never_seed_numbers():
    parser = build_parser()
    texts = [parser.format_help()]
    for action in parser._subparsers._group_actions:
        texts += [p.format_help() for p in action.choices.values()]
    assert texts and not any("seed" in t.lower() for t in texts)


def test_jieba_loading_lines_never_reach_the_terminal():
    """jieba logs its dictionary loading to stderr at DEBUG; the CLI silences its logger, so
    a later first use (here part-of-speech tagging, as the summariser does) is quiet."""
    use = "import jieba.posseg as p; list(p.cut('我喜欢川菜'))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def stderr_of(code: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120,
            check=True,
        )  # fmt: skip
        return done.stderr

    assert "prefix dict" in stderr_of(use)  # jieba on its own is loud
    quiet = "from langmem_plus.cli import main; main(['--version']); " + use
    assert stderr_of(quiet) == ""


def test_a_mistyped_db_is_an_error_not_a_new_database(tmp_path, capsys, monkeypatch):
    """A named database that does not exist is refused (exit 2, nothing created) unless the
    command is `init` or --create is given; the message names the default database."""
    monkeypatch.setenv("LANGMEM_PLUS_EMBEDDINGS", "none")
    monkeypatch.delenv("LANGMEM_PLUS_DB", raising=False)
    typo = tmp_path / "nested" / "memroy.db"
    for argv in (["search", "x"], ["add", "x", "--no-infer"], ["stats"], ["export"],
                 ["keys", "create", "--user", "u"]):  # fmt: skip
        assert main(["--db", str(typo), *argv]) == 2
        err = capsys.readouterr().err
        assert f"no database at {typo}" in err and str(default_db_path()) in err
        assert "init" in err and "--create" in err
    assert not typo.exists() and not typo.parent.exists()  # no file, no folders
    monkeypatch.setenv("LANGMEM_PLUS_DB", str(typo))
    assert main(["search", "x"]) == 2 and "LANGMEM_PLUS_DB" in capsys.readouterr().err
    assert main(["--create", "add", "x y", "--no-infer"]) == 0 and typo.is_file()
    other = tmp_path / "other.db"
    assert main(["--db", str(other), "init"]) == 0 and other.is_file()
    assert main(["--db", str(other), "search", "x"]) == 0


def test_reindex_and_import_report_real_progress(run, monkeypatch, capsys, tmp_path):
    """The bars move with the work: reindex counts texts embedded and items re-indexed
    (no more 0/1 then 1/1), import moves every 100 records (no more jumps of 500)."""
    from langmem_plus import Memory

    src = Memory(embeddings=False)
    for i in range(250):
        src.add(f"note {i} about topic{i % 7}", "u", infer=False)
        src.add_turn("u", "s", "user", f"turn {i} about topic{i % 5}")
    dump = src.export()
    src.close()
    steps: list[tuple[int, int]] = []
    with Memory(embeddings=False) as mem:
        counts = mem.import_(dump, progress=lambda d, t: steps.append((d, t)))
        assert counts["items"] == 250 and counts["turns"] == 250
        total = steps[-1][1]
        assert steps[-1] == (total, total) and len(steps) >= 6
        gaps = [b[0] - a[0] for a, b in zip([(0, total), *steps], steps, strict=False)]
        assert all(0 <= g <= 100 for g in gaps), gaps
        seen: list[tuple[int, int]] = []
        mem.store.reindex(progress=lambda d, t: seen.append((d, t)))
    assert seen[0][0] == 0 and seen[-1][0] == seen[-1][1] >= 500
    assert [d for d, _ in seen] == sorted(d for d, _ in seen) and len(seen) >= 3
    monkeypatch.setenv("LANGMEM_PLUS_PROGRESS", "1")
    path = tmp_path / "dump.json"
    path.write_text(dump, encoding="utf-8")
    assert run("import", str(path))[0] == 0
    code, _, err = run("reindex")
    assert code == 0
    shown = [part.split("] ")[-1] for part in err.split("\r") if "reindexing" in part]
    assert len(shown) >= 3 and shown[0].strip() != "0/1"
