"""Coding recall reads the symbol index: a query naming a code symbol finds the turn that
mentioned it even where the keyword search leaves it out of its candidates (here: a pool of 5
keyword candidates, all taken by turns sharing more of the query's words)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from langmem_plus import HybridStore, Memory, MemoryConfig
from langmem_plus.agent.engine import MemoryEngine
from langmem_plus.agent.working import WorkingMemory
from langmem_plus.store.tuning import StoreTuning

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
QUERY = "where is processOrder defined"
BUG = "OrderService.processOrder() crashed with a timeout"


def _memory(profile: str) -> Memory:
    config = MemoryConfig(score={"profile": profile})  # type: ignore[arg-type]
    store = HybridStore(index=False, config=config, tuning=StoreTuning(keyword_candidates=5))
    mem = Memory(store=store, config=config)
    mem.add(
        [{"role": "user", "content": BUG}, {"role": "assistant", "content": "Let me look."}],
        "dev",
        session_id="s-bug",
        timestamp=T0,
    )
    for i in range(12):  # more words of the query, but not the symbol
        mem.add(
            [
                {"role": "user", "content": f"where do we process order {i}? defined in billing"},
                {"role": "assistant", "content": "In billing."},
            ],
            "dev",
            session_id=f"s{i}",
            timestamp=T0 + timedelta(hours=i + 1),
        )
    return mem


@pytest.fixture(scope="module")
def coding() -> Memory:
    return _memory("coding")


def test_the_store_search_alone_ranks_the_turn_out(coding: Memory) -> None:
    found = coding.store.search(("memories", "dev"), query=QUERY, limit=3)
    assert not any(BUG in it.value["text"] for it in found)


def test_memory_search_finds_the_turn_through_the_symbol_index(coding: Memory) -> None:
    hits = coding.search(QUERY, "dev", limit=3)
    assert any(BUG in h.text for h in hits)
    assert hits == sorted(hits, key=lambda h: -h.score)


def test_recall_finds_the_turn_through_the_symbol_index(coding: Memory) -> None:
    results = coding.recall(QUERY, "dev", limit=3)["results"]
    assert any(BUG in (r.get("content") or "") for r in results)


def test_the_graph_recall_path_finds_it_too(coding: Memory) -> None:
    engine = MemoryEngine(store=coding.store, config=coding.config)
    wm = WorkingMemory.new(T0 + timedelta(days=1))
    layers = engine.recall(coding.store, "dev", ("memories", "dev"), QUERY, wm, mark_used=False)
    assert any(BUG in m["text"] for m in layers.as_dict()["memories"])


def test_a_query_without_symbols_does_not_read_the_index(
    coding: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[object] = []
    monkeypatch.setattr(coding.turns.log, "find_symbols", lambda *a, **k: calls.append(a) or [])
    assert coding.search("where do we process order", "dev", limit=3)
    assert calls == []
    coding.search(QUERY, "dev", limit=3)
    assert calls  # the spy is the one consulted


def test_the_default_profile_does_not_read_the_symbol_index() -> None:
    with _memory("default") as mem:
        assert not any(BUG in h.text for h in mem.search(QUERY, "dev", limit=3))
