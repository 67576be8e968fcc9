"""The `langmem-plus` command line (seed 002's contract), in-process plus one real subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from langmem_plus.cli import Progress, main, parse_span
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

    return _run


def _json(run, *argv: str):
    code, out, err = run(*argv, "--json")
    assert code == 0, err
    return json.loads(out)


def test_store_then_recall_in_seed_002_shape(run):
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
    assert out["space_freed_kb"] >= 0
    assert _json(run, "cleanup", "--conversation", "other")["turns_deleted"] == 1
    _json(run, "add", "I prefer tabs", "--no-infer")
    everything = _json(run, "cleanup", "--all")
    assert everything["turns_deleted"] == 1 and everything["memories_deleted"] == 1
    assert _json(run, "recall", "-q", "talk")["total_searched"] == 0
    assert _json(run, "stats")["items"] == 0


def test_export_import_round_trip(run, tmp_path, monkeypatch):
    _json(run, "store", "--conversation", "c", "--content", "CacheManager 的实现")
    _json(run, "add", "我喜欢川菜", "--no-infer", "--category", "preference")
    for fmt in ("json", "jsonl"):
        path = tmp_path / f"backup.{fmt}"
        code, _, err = run("export", "--format", fmt, "--output", str(path))
        assert code == 0, err
        monkeypatch.setenv("LANGMEM_PLUS_DB", str(tmp_path / f"copy-{fmt}.db"))
        counts = _json(run, "import", str(path))
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


def test_console_script_subprocess(tmp_path):
    """One real process: the installed console script, or the module when not installed."""
    exe = shutil.which("langmem-plus")
    cmd = [exe] if exe else [sys.executable, "-m", "langmem_plus.cli"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LANGMEM_PLUS_EMBEDDINGS": "none"}
    db = str(tmp_path / "p.db")
    stored = subprocess.run(
        [*cmd, "store", "--db", db, "--conversation", "c1", "--content", "OrderService bug",
         "--json"],
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
