"""The config codemod rewrites flat MemoryConfig names to nested paths, from FLAT_FIELDS."""
# config-codemod: skip (these tests use the deprecated flat names on purpose)

from __future__ import annotations

import warnings

from langmem_plus.config import ConfigDeprecationWarning, MemoryConfig
from langmem_plus.config.codemod import main, rewrite_markdown, rewrite_python

OLD = """\
from langmem_plus.config import MemoryConfig

cfg = MemoryConfig(keyword_candidates=80, ctx_profile=False,
                   window_max_turns=30, record_costs=False)
copy = MemoryConfig(w_recency=cfg.w_recency, prf_terms=cfg.prf_terms + 1)
result = (cfg.keyword_candidates, copy.config if False else copy.score.w_recency)
"""


def _run(source: str) -> dict:
    scope: dict = {}
    exec(compile(source, "<codemod>", "exec"), scope)
    return scope


def test_python_calls_and_reads_become_nested() -> None:
    new = rewrite_python(OLD)
    assert new.manual == []
    assert 'MemoryConfig(store={"keyword_candidates": 80}' in new.text
    assert 'context={"profile": False}' in new.text
    assert 'window={"max_turns": 30}' in new.text and 'llm={"record_costs": False}' in new.text
    assert "cfg.score.w_recency" in new.text and "cfg.store.prf_terms + 1" in new.text
    assert "(cfg.store.keyword_candidates," in new.text
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConfigDeprecationWarning)
        after = _run(new.text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfigDeprecationWarning)
        before = _run(OLD)
    assert after["cfg"] == before["cfg"] and after["copy"] == before["copy"]
    assert after["result"] == before["result"] == (80, 0.15)
    assert rewrite_python(new.text).changes == 0  # idempotent


def test_only_config_like_receivers_are_rewritten() -> None:
    src = (
        "a = args.profile\nb = self.config.profile\nc = store.config.max_item_chars\n"
        "d = MemoryConfig().w_keyword\n"
    )
    new = rewrite_python(src).text
    assert "args.profile" in new and "MemoryConfig().score.w_keyword" in new
    assert "self.config.score.profile" in new and "store.config.store.max_item_chars" in new


def test_what_cannot_be_rewritten_is_listed() -> None:
    src = (
        "MemoryConfig(**overrides)\n"
        "store.config.eviction_threshold = 5\n"
        'keep = getattr(cfg, "record_costs", True)\n'
        "MemoryConfig(prf_terms=1, store={'bm25_k1': 2.0})\n"
    )
    new = rewrite_python(src)
    assert new.text == src
    assert [n.split(":")[0] for n in new.manual] == ["1", "2", "3", "4"]


def test_markdown_code_is_rewritten() -> None:
    text = 'Set `MemoryConfig(profile="coding")`; `config.keyword_candidates` caps it.\n'
    new = rewrite_markdown(text)
    assert new.text == (
        'Set `MemoryConfig(score={"profile": "coding"})`; '
        "`config.store.keyword_candidates` caps it.\n"
    )


def test_main_writes_files_and_check_reports(tmp_path, capsys) -> None:
    py = tmp_path / "pkg" / "mod.py"
    py.parent.mkdir()
    py.write_text("x = cfg.bm25_k1\n")
    md = tmp_path / "doc.md"
    md.write_text("`MemoryConfig(retrieval_limit=3)`\n")
    kept = tmp_path / "flat_on_purpose.py"
    kept.write_text("# config-codemod: " + "skip\nx = cfg.bm25_k1\n")
    assert main(["--check", str(tmp_path)]) == 1
    assert py.read_text() == "x = cfg.bm25_k1\n"
    assert main([str(tmp_path)]) == 0
    assert py.read_text() == "x = cfg.store.bm25_k1\n"
    assert md.read_text() == '`MemoryConfig(recall={"retrieval_limit": 3})`\n'
    assert main(["--check", str(tmp_path)]) == 0
    assert kept.read_text().endswith("x = cfg.bm25_k1\n")
    assert "2 file(s) changed" in capsys.readouterr().out
    assert MemoryConfig(recall={"retrieval_limit": 3}).recall.retrieval_limit == 3
