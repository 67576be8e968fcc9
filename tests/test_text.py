"""Tokenisation (jieba + identifiers + stop words), symbols and records."""

from __future__ import annotations

from datetime import timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langmem_plus import MemoryConfig, MemoryRecord
from langmem_plus.text import extract_symbols, query_terms, tokenize
from langmem_plus.text.intent import is_preference_query


def test_chinese_is_segmented_and_stopwords_removed():
    toks = tokenize("我喜欢吃川菜，不吃香菜。")
    assert "川菜" in toks and "香菜" in toks
    assert "我" not in toks and "的" not in toks and "，" not in toks


def test_english_and_identifiers():
    toks = tokenize("The project uses processOrder in src/order.ts and get_user_by_id; paintings")
    assert "the" not in toks and "in" not in toks
    for t in [
        "processorder",
        "process",
        "order",
        "src/order.ts",
        "get_user_by_id",
        "user",
        "painting",
    ]:
        assert t in toks


def test_query_terms_prefix_and_operators_are_data():
    q = query_terms('Pyth* "OR" NEAR(x) DROP')
    assert q.prefixes == ("pyth",)
    assert "near" in q.terms and "drop" in q.terms
    assert not query_terms("the of and")


@given(st.text(max_size=200))
def test_tokenize_never_fails(text):
    toks = tokenize(text)
    assert all(isinstance(t, str) and t and t == t.strip() for t in toks)


def test_symbols():
    syms = extract_symbols(
        "processPayment 在 src/order.ts 里抛出 TypeError，OrderService 调用 get_user_by_id()"
    )
    assert syms == ["processPayment", "src/order.ts", "TypeError", "OrderService", "get_user_by_id"]
    assert extract_symbols("今天天气不错") == []


def test_preference_intent():
    assert is_preference_query("我喜欢吃什么")
    assert is_preference_query("What food do I like?")
    assert is_preference_query("which editor do I prefer")
    assert not is_preference_query("where does my sister live")


def test_record_roundtrip_keeps_extra_fields():
    rec = MemoryRecord(
        text="用户上周去了杭州",
        kind="episodic",
        category="episode",
        who="user",
        metadata={"time": "2026-01-03T18:00:00+00:00", "updates": []},
    )
    value = rec.to_value()
    value["custom_field"] = {"x": 1}
    back = MemoryRecord.from_value(value, id=rec.id, namespace=("memories", "u1"))
    assert back.text == rec.text and back.metadata["custom_field"] == {"x": 1}
    assert back.created_at.tzinfo == timezone.utc
    assert "id" not in value and "access_count" not in value


def test_record_validation():
    with pytest.raises(ValueError):
        MemoryRecord(text="  ")
    with pytest.raises(ValueError):
        MemoryRecord(text="x", confidence=1.5)
    with pytest.raises(ValueError):
        MemoryRecord(text="x", category="nonsense")  # type: ignore[arg-type]


def test_config_validation():
    assert MemoryConfig().score.w_keyword == 0.4
    with pytest.raises(ValueError):
        MemoryConfig(lifecycle={"separate_threshold": 0.9, "merge_threshold": 0.8})
    with pytest.raises(ValueError):
        MemoryConfig(score={"w_keyword": -1})
    with pytest.raises(ValueError):
        MemoryConfig(unknown_knob=1)  # type: ignore[call-arg]
