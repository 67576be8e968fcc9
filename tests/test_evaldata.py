"""The evaluation data of benchmarks/data/ (issue #13) loads and passes its validator."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _bench import load_benchmark

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data"


ev = load_benchmark("evaldata")


def test_data_validates() -> None:
    report = ev.validate()
    assert report.ok, "\n".join(report.errors[:20])


def test_minimums_and_mix() -> None:
    report = ev.validate()
    c = report.counts
    assert report.stats["corrections.cases"] >= 48
    assert report.stats["corrections.avg_user_turn_chars"] >= 40
    assert c["corrections.category"]["both_stand"] >= 8
    for cat in ev.CATEGORIES:
        assert c["corrections.category"].get(cat, 0) >= 4, cat
    lang = c["corrections.lang"]
    total = sum(lang.values())
    assert 0.3 <= lang["zh"] / total <= 0.5 and 0.3 <= lang["en"] / total <= 0.5
    assert 0.1 <= lang["mixed"] / total <= 0.3

    assert report.stats["extraction.cases"] >= 240
    lang = c["extraction.lang"]
    total = sum(lang.values())
    assert 0.4 <= lang["zh"] / total <= 0.6
    assert 0.3 <= lang["en"] / total <= 0.5
    assert 0.05 <= lang["mixed"] / total <= 0.2
    assert len(c["extraction.cls"]) >= 12

    assert report.stats["memorybank.questions"] >= 60
    assert len(c["memorybank.user"]) >= 5


def test_memorybank_labels_match_source() -> None:
    source = ev.find_memorybank_source()
    if source is None:
        pytest.skip("shared MemoryBank data not available")
    report = ev.ValidationReport()
    ev.check_memorybank(ev.load_memorybank_answers(), report, source)
    assert report.ok, "\n".join(report.errors[:20])


def test_loader_types() -> None:
    cases = ev.load_corrections()
    assert all(isinstance(t, ev.Turn) for c in cases for t in c.turns)
    assert all(t.occurred_at.tzinfo is not None for c in cases for t in c.turns)
    ext = ev.load_extraction()
    assert {e.split for e in ext} == {"rules", "heldout"}
    assert all(isinstance(f, ev.Fact) for e in ext for f in e.facts)


def _copy(tmp_path: Path) -> Path:
    for name in ("corrections.jsonl", "extraction_dev.jsonl", "memorybank_cn_answers.jsonl"):
        shutil.copy(DATA / name, tmp_path / name)
    return tmp_path


def _rewrite(path: Path, edit) -> None:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    edit(rows)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")


def test_validator_catches_current_said_only_before_superseded(tmp_path: Path) -> None:
    d = _copy(tmp_path)

    def swap(rows: list[dict]) -> None:
        q = next(r for r in rows if r["id"] == "zh-01")["questions"][0]
        q["current"], q["superseded"] = q["superseded"], q["current"]

    _rewrite(d / "corrections.jsonl", swap)
    errors = ev.validate(d).errors
    assert any("zh-01" in e and "before superseded" in e for e in errors), errors


def test_validator_catches_current_said_only_before(tmp_path: Path) -> None:
    d = _copy(tmp_path)

    def stale(rows: list[dict]) -> None:
        q = next(r for r in rows if r["id"] == "en-05")["questions"][0]
        q["current"] = ["Ubuntu"]  # said only in the first session, before "MacBook Air"
        q["superseded"] = ["MacBook Air"]

    _rewrite(d / "corrections.jsonl", stale)
    errors = ev.validate(d).errors
    assert any("en-05" in e and "only appears before" in e for e in errors), errors


def test_validator_catches_schema_errors(tmp_path: Path) -> None:
    d = _copy(tmp_path)

    def break_extraction(rows: list[dict]) -> None:
        rows[0]["facts"] = []  # positive with no facts
        rows[1]["split"] = "heldout" if rows[1]["split"] == "rules" else "rules"
        rows[2]["facts"] = [{"text": "x", "kind": "opinion", "subject": "user"}]

    def break_corrections(rows: list[dict]) -> None:
        rows[0]["category"] = "typo"
        both = next(r for r in rows if r["category"] == "both_stand")
        both["questions"][0]["superseded"] = ["x"]

    _rewrite(d / "extraction_dev.jsonl", break_extraction)
    _rewrite(d / "corrections.jsonl", break_corrections)
    errors = ev.validate(d).errors
    assert any("polarity positive but 0 facts" in e for e in errors)
    assert any("hash rule" in e for e in errors)
    assert any("bad fact" in e for e in errors)
    assert any("category 'typo'" in e for e in errors)
    assert any("both_stand with superseded" in e for e in errors)


def test_validator_checks_not_stale_phrases(tmp_path: Path) -> None:
    d = _copy(tmp_path)

    def bad_phrases(rows: list[dict]) -> None:
        q = next(r for r in rows if r["id"] == "en-09")["questions"][0]
        q["not_stale"] = ["went to my cousin Eli", "Eli scratched the Civic"]

    _rewrite(d / "corrections.jsonl", bad_phrases)
    errors = ev.validate(d).errors
    assert any("en-09" in e and "holds no superseded word" in e for e in errors), errors
    assert any("en-09" in e and "is in no turn" in e for e in errors), errors
    assert ev.validate().ok
