"""A record's stored value leaves its fields at their default out (fewer bytes per memory), and
every filter still matches it on those fields: through the store (with and without a query),
`Memory.search`/`get_all` with mem0 filters, REST and the retriever's document metadata. A
value that is no record keeps InMemoryStore's reading (a missing key is missing)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langmem_plus import HybridStore, MemoryRetriever
from langmem_plus.clock import ManualClock
from langmem_plus.memory import Memory
from langmem_plus.model.records import RECORD_DEFAULTS, MemoryRecord, with_record_defaults
from langmem_plus.store.filters import matches

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
USER = "u"
NS = ("memories", USER)

# a filter on each field at its default, and on a value no default record holds
AT_DEFAULT = [
    {"tier": "normal"},
    {"who": "user"},
    {"source": "user_stated"},
    {"verified": False},
    {"importance": 1.0},
    {"importance": {"$gte": 1}},
    {"tier": {"$in": ["normal", "core"]}},
    {"facts_superseded": False},
]
# what every stored record of the conversation below holds at its default (an episode's
# importance is its own)
STORED_AT_DEFAULT = [f for f in AT_DEFAULT if "importance" not in f]
NOT_DEFAULT = [{"tier": "core"}, {"who": "assistant"}, {"source": "inferred"}, {"verified": True}]


def test_a_stored_record_leaves_its_defaults_out() -> None:
    rec = MemoryRecord(text="User likes tea", category="preference", occurred_at=T0)
    value = rec.to_value()
    assert not RECORD_DEFAULTS.keys() - {"confidence"} & value.keys()
    assert value["kind"] == "semantic" and value["category"] == "preference"
    assert value["confidence"] == 0.9  # a fact's confidence stays: the score reads it
    episode = MemoryRecord(text="u: hi", kind="episodic", category="episode", occurred_at=T0)
    assert not RECORD_DEFAULTS.keys() & episode.to_value().keys()
    assert MemoryRecord.from_value(value, id=rec.id) == rec
    core = MemoryRecord(text="x", tier="core", who="assistant", source="inferred").to_value()
    assert (core["tier"], core["who"], core["source"]) == ("core", "assistant", "inferred")


@pytest.mark.parametrize("flt", AT_DEFAULT)
def test_a_filter_reads_a_missing_record_field_as_its_default(flt: dict[str, Any]) -> None:
    value = MemoryRecord(text="User likes tea", occurred_at=T0).to_value()
    assert matches(value, flt)
    assert matches(value, {"$and": [flt, {"category": "fact"}]})
    assert not matches(value, {"$not": flt})


@pytest.mark.parametrize("flt", NOT_DEFAULT)
def test_a_default_does_not_match_another_value(flt: dict[str, Any]) -> None:
    assert not matches(MemoryRecord(text="User likes tea").to_value(), flt)


def test_a_value_that_is_no_record_keeps_a_missing_key_missing() -> None:
    for value in ({"text": "x"}, {"kind": "note", "text": "x"}, {"meta": {"kind": "semantic"}}):
        assert not matches(value, {"tier": "normal"})
        assert with_record_defaults(value) is value
    # nested mappings are not records even when they say a record's kind
    assert not matches({"m": {"kind": "semantic"}}, {"m": {"tier": "normal"}})


@settings(max_examples=200, deadline=None)
@given(
    st.fixed_dictionaries(
        {"text": st.just("t")},
        optional={
            "tier": st.sampled_from(["normal", "core", "system"]),
            "who": st.sampled_from(["user", "assistant"]),
            "verified": st.booleans(),
            "importance": st.sampled_from([0.5, 1.0, 2.0]),
        },
    ),
    st.sampled_from(["episodic", "semantic"]),
    st.sampled_from(AT_DEFAULT + NOT_DEFAULT),
)
def test_lean_and_full_values_answer_every_filter_alike(
    fields: dict[str, Any], kind: str, flt: dict[str, Any]
) -> None:
    rec = MemoryRecord(kind=kind, category="episode" if kind == "episodic" else "fact", **fields)
    full = rec.model_dump(mode="json", exclude={"id", "namespace", "last_accessed", "access_count"})
    assert matches(rec.to_value(), flt) == matches(full, flt)


@pytest.fixture
def mem(tmp_path: Path) -> Memory:
    m = Memory(tmp_path / "m.db", embeddings=False, clock=ManualClock(T0.timestamp() + 86400))
    m.add(
        [
            {"role": "user", "content": "I live in Paris."},
            {"role": "assistant", "content": "Paris is lovely."},
        ],
        USER,
        session_id="s1",
        timestamp=T0,
    )
    return m


def _stored(store: HybridStore) -> list[dict[str, Any]]:
    return [it.value for it in store.search(NS, limit=50)]


@pytest.mark.parametrize("flt", STORED_AT_DEFAULT)
def test_every_door_matches_records_at_their_defaults(mem: Memory, flt: dict[str, Any]) -> None:
    store = mem.store
    values = _stored(store)
    assert {v["kind"] for v in values} == {"episodic", "semantic"}
    assert not any("tier" in v or "who" in v or "source" in v for v in values)  # lean
    everything = sorted(it.key for it in store.search(NS, limit=50))
    assert sorted(it.key for it in store.search(NS, filter=flt, limit=50)) == everything
    assert sorted(h.key for h in store.search(NS, query="Paris", filter=flt, limit=50)) == sorted(
        h.key for h in store.search(NS, query="Paris", limit=50)
    )
    assert len(mem.search("Paris", USER, filters=flt)) == len(mem.search("Paris", USER))
    assert sorted(m.id for m in mem.get_all(USER, filters=flt).items) == everything
    for kind in ("episodic", "semantic"):  # with the column-answered conditions
        both = {**flt, "kind": kind}
        assert [it.value["kind"] for it in store.search(NS, filter=both, limit=50)] == [
            v["kind"] for v in values if v["kind"] == kind
        ]


@pytest.mark.parametrize("flt", NOT_DEFAULT)
def test_no_door_matches_a_value_no_record_holds(mem: Memory, flt: dict[str, Any]) -> None:
    assert mem.store.search(NS, filter=flt, limit=50) == []
    assert len(mem.search("Paris", USER, filters=flt)) == 0


def test_rest_filters_match_records_at_their_defaults(mem: Memory) -> None:
    from fastapi.testclient import TestClient

    from langmem_plus.server import create_app

    with TestClient(create_app(mem), base_url="http://localhost") as client:

        def found(flt: dict[str, Any]) -> int:
            r = client.post(
                "/memory/search",
                json={"query": "Paris", "limit": 10, "filters": flt},
                headers={"X-User-Id": USER},
            )
            assert r.status_code == 200, r.text
            return len(r.json()["results"])

        assert found({"tier": "normal", "who": "user", "source": "user_stated"}) == found({})
        assert found({}) > 0 and found({"tier": "core"}) == 0


def test_the_retriever_shows_who_said_it(mem: Memory) -> None:
    docs = MemoryRetriever(store=mem.store, user_id=USER).invoke("Paris")
    assert docs and all(d.metadata["who"] == "user" for d in docs)
